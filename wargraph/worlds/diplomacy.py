"""The Diplomacy world: a thin, pure-Python wrapper over the PyPI ``diplomacy`` engine (1.1.2).

Why this shape:

* A ``diplomacy.Game`` cannot be pickled and deep-copying one costs ~0.5 s, so graph state keeps
  the engine's *saved-game dict* (``to_saved_game_format``), which is plain JSON. Every function
  that needs the engine takes either that dict or a ``Game`` and loads a fresh ``Game`` from the
  dict when needed (a few ms); nothing here mutates a caller's dict.
* The engine drops invalid orders silently into ``game.error`` and defaults missing orders.
  wargraph wants orders that are legal *by construction*, so :func:`legal_orders` lists every
  legal order per unit, :func:`orders_json_schema` turns that into a flat enum schema (llama.cpp
  grammars need flat schemas), :func:`finalize_orders` turns a schema answer into the exact
  order list (counts fixed for adjustments), and :func:`check_orders` is the secretary: it
  submits orders to a copy of the phase and returns the engine's reason for each rejection.
* The engine does not enforce press rules locally (``add_message`` accepts anything), so
  :func:`check_message` does.

No LangGraph here: this module is the engine boundary and is tested against the real engine.
"""

from __future__ import annotations

import copy
import os
import re
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

from diplomacy import Game
from diplomacy.engine.map import Map
from diplomacy.engine.message import Message
from diplomacy.engine.renderer import Renderer
from diplomacy.utils.export import from_saved_game_format, to_saved_game_format

__all__ = [
    "POWERS",
    "GLOBAL",
    "DEFAULT_RULES",
    "PhaseInfo",
    "new_game",
    "load",
    "save",
    "current",
    "phase_info",
    "legal_orders",
    "orders_json_schema",
    "finalize_orders",
    "hold_orders",
    "unit_blocks",
    "render_unit_block",
    "render_board",
    "check_orders",
    "check_answer",
    "adjudicate",
    "add_messages",
    "check_message",
    "render_svg",
    "order_type",
    "outcome_of",
]

POWERS: tuple[str, ...] = (
    "AUSTRIA",
    "ENGLAND",
    "FRANCE",
    "GERMANY",
    "ITALY",
    "RUSSIA",
    "TURKEY",
)
GLOBAL = "GLOBAL"

# The engine's own default rules include NO_PRESS, SOLITAIRE, IGNORE_ERRORS ...; several of those
# are dropped by to_saved_game_format anyway, so a loaded game would differ from a new one.
# wargraph enforces press itself, so the engine only needs the map's standard rules.
DEFAULT_RULES: tuple[str, ...] = ("POWER_CHOICE",)

PhaseType = Literal["M", "R", "A", ""]
Press = Literal["full", "public", "none"]

# Slot names for adjustment phases (see legal_orders).
BUILD_SLOT = "build_{}"
DISBAND_SLOT = "disband_{}"
WAIVE = "WAIVE"

# ---------------------------------------------------------------------------------------------
# Games and saved-game dicts
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _template(map_name: str, rules: tuple[str, ...]) -> dict[str, Any]:
    # Building a Game costs ~100 ms the first time (map and rule files); the opening position
    # never changes, so build it once and hand out deep copies with fresh ids.
    game = Game(map_name=map_name, rules=list(rules))
    return to_saved_game_format(game)


def new_game(
    rules: Sequence[str] = DEFAULT_RULES,
    *,
    map_name: str = "standard",
    game_id: str | None = None,
) -> dict[str, Any]:
    """The saved-game dict of a new game at S1901M (JSON-serialisable)."""
    saved = copy.deepcopy(_template(map_name, tuple(rules)))
    # Fresh id per game: the engine makes a random one; ours is random too unless given.
    gid = game_id or _random_id()
    saved["id"] = gid
    for phase in saved["phases"]:
        phase["state"]["game_id"] = gid
    return _stamped(saved)


def _random_id() -> str:
    return os.urandom(9).hex()


def load(saved: Mapping[str, Any]) -> Game:
    """A fresh engine ``Game`` from a saved-game dict (the dict is not modified)."""
    # from_saved_game_format reads but does not keep references we could corrupt; still, a copy
    # of the phase list guards the caller's state against engine-side mutation.
    return from_saved_game_format(
        {
            "id": saved.get("id"),
            "map": saved.get("map", "standard"),
            "rules": list(saved.get("rules", [])),
            "phases": copy.deepcopy(list(saved.get("phases", []))),
        }
    )


def save(game: Game) -> dict[str, Any]:
    """The saved-game dict of an engine ``Game`` (plain JSON types)."""
    return _stamped(to_saved_game_format(game))


def _stamped(saved: dict[str, Any]) -> dict[str, Any]:
    """The engine stamps each saved phase's state with the wall clock, so two equal games would
    differ; nothing reads the stamp back, so it becomes the phase's position in the game (a
    clock that ticks once per phase): same seed, same record."""
    for i, phase in enumerate(saved.get("phases", [])):
        if isinstance(phase.get("state"), dict) and "timestamp" in phase["state"]:
            phase["state"]["timestamp"] = i + 1
    return saved


def current(saved: Mapping[str, Any]) -> dict[str, Any]:
    """The saved game cut to its current phase: the whole position (units, centres, homes,
    dislodged units, influence), which is all that legal orders, unit blocks, the board, the
    secretary and adjudication need. Loading it costs a few ms whatever the game's length, while
    a whole game replays its history (~60 ms by 1905). Only per-phase maps need the history."""
    return {
        "id": saved.get("id"),
        "map": saved.get("map", "standard"),
        "rules": list(saved.get("rules", [])),
        "phases": list(saved.get("phases", []))[-1:],
    }


def _with_history(saved: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``new`` (from a game loaded with :func:`current`) with the earlier phases of ``saved``
    put back in front (copied, so the result shares nothing with the caller's dict)."""
    phases = copy.deepcopy(list(saved["phases"])[:-1]) + list(new["phases"])
    return _stamped({**new, "phases": phases})


def _as_game(world: Game | Mapping[str, Any]) -> Game:
    return world if isinstance(world, Game) else load(current(world))


# ---------------------------------------------------------------------------------------------
# Phase information (read straight from the saved dict: no engine needed)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseInfo:
    """What a node needs to know about the current phase. ``to_dict()`` is JSON-ready."""

    name: str  # "S1901M", or "COMPLETED"
    type: PhaseType  # "M" movement, "R" retreats, "A" adjustments, "" when completed
    season: str  # "S", "F", "W" or ""
    year: int  # calendar year (0 when completed and unknown)
    is_done: bool
    powers_alive: tuple[str, ...]
    centers: dict[str, list[str]] = field(default_factory=dict)
    units: dict[str, list[str]] = field(default_factory=dict)
    retreats: dict[str, list[str]] = field(default_factory=dict)  # dislodged units per power
    homes: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["powers_alive"] = list(self.powers_alive)
        return d


def phase_info(world: Game | Mapping[str, Any]) -> PhaseInfo:
    """Current phase, its type and year, who is alive, centres/units/homes per power."""
    state = world.get_state() if isinstance(world, Game) else world["phases"][-1]["state"]
    name = state["name"]
    done = name == "COMPLETED"
    units = {p: list(u) for p, u in state["units"].items()}
    centers = {p: list(c) for p, c in state["centers"].items()}
    retreats = {p: list(r) for p, r in state.get("retreats", {}).items()}
    homes = {p: list(h) for p, h in state.get("homes", {}).items()}
    alive = tuple(
        p for p in sorted(units) if units.get(p) or centers.get(p) or retreats.get(p)
    )  # the engine's Power.is_eliminated rule
    if done:
        year = _last_year(world)
        return PhaseInfo(name, "", "", year, True, alive, centers, units, retreats, homes)
    return PhaseInfo(
        name=name,
        type=name[-1],  # type: ignore[arg-type]
        season=name[0],
        year=int(name[1:-1]),
        is_done=False,
        powers_alive=alive,
        centers=centers,
        units=units,
        retreats=retreats,
        homes=homes,
    )


def _last_year(world: Game | Mapping[str, Any]) -> int:
    phases = (
        [p["name"] for p in world["phases"]]
        if not isinstance(world, Game)
        else [str(k) for k in world.state_history]
    )
    years = [int(n[1:-1]) for n in phases if n not in ("COMPLETED", "FORMING")]
    return max(years) if years else 0


# ---------------------------------------------------------------------------------------------
# Legal orders and the output schema
# ---------------------------------------------------------------------------------------------

_TYPE_RANK = {"hold": 0, "move": 1, "support": 2, "convoy": 3, "retreat": 1, "disband": 0}


def order_type(order: str) -> str:
    """Order type of an order string: hold, move, support, convoy, retreat, build, disband, waive."""
    words = order.split()
    if not words:
        return "invalid"
    if words[0] == WAIVE:
        return "waive"
    last = words[-1]
    if len(words) == 3 and last == "B":
        return "build"
    if last == "D" and len(words) == 3:
        return "disband"
    if len(words) >= 3:
        verb = words[2]
        return {"H": "hold", "-": "move", "S": "support", "C": "convoy", "R": "retreat"}.get(
            verb, "invalid"
        )
    return "invalid"


def _sort_orders(orders: Iterable[str]) -> list[str]:
    # Hold (or disband) first, then moves, supports, convoys; alphabetical inside a type.
    return sorted(set(orders), key=lambda o: (_TYPE_RANK.get(order_type(o), 9), o))


def legal_orders(world: Game | Mapping[str, Any], power: str) -> dict[str, list[str]]:
    """Every legal order of ``power`` this phase, keyed by what must be ordered.

    * Movement: one key per unit (``"A PAR"``, ``"F STP/SC"``), value all its legal orders
      (hold, moves incl. ``VIA`` convoys, supports and convoys for any power's units).
    * Retreats: one key per dislodged unit, value its retreats and ``"<unit> D"``.
    * Adjustments, builds: ``n = min(centres - units, free home centres)`` slots
      ``build_1 .. build_n``, each with every legal build order plus ``"WAIVE"``.
    * Adjustments, disbands: ``n = units - centres`` slots ``disband_1 .. disband_n``, each with
      every ``"<unit> D"``.

    Slots (rather than one key per site/unit) make the number of orders right by construction;
    duplicates across slots are resolved by :func:`finalize_orders`.
    Empty when the power has nothing to order (or the game is over).
    """
    game = _as_game(world)
    power = power.upper()
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    if game.is_game_done or game.phase_type not in ("M", "R", "A"):
        return {}
    possible = game.get_all_possible_orders()
    legal: dict[str, list[str]] = {}

    if game.phase_type in ("M", "R"):
        units = pw.units if game.phase_type == "M" else list(pw.retreats)
        for unit in sorted(units, key=lambda u: u[2:]):
            opts = [o for o in possible.get(unit[2:], []) if o.startswith(unit + " ")]
            legal[unit] = _sort_orders(opts)
        return legal

    # Adjustments
    need = len(pw.centers) - len(pw.units)
    if need > 0:
        sites = game.get_orderable_locations(power)  # free, owned home centres
        builds: list[str] = []
        for site in sites:
            for loc in game.map.find_coasts(site):
                builds += [o for o in possible.get(loc, []) if o.endswith(" B")]
        builds = sorted(set(builds), key=lambda o: (o.split()[1][:3], o))
        for i in range(min(need, len(sites))):
            legal[BUILD_SLOT.format(i + 1)] = builds + [WAIVE]
    elif need < 0:
        disbands = sorted(f"{u} D" for u in pw.units)
        for i in range(-need):
            legal[DISBAND_SLOT.format(i + 1)] = list(disbands)
    return legal


def orders_json_schema(legal: Mapping[str, Sequence[str]], *, title: str = "Orders") -> dict:
    """A FLAT JSON schema: an object with one required string property per key of ``legal``
    whose value must be one of that key's legal orders. No ``$defs``/``anyOf``/``$ref``, so
    llama.cpp's schema-to-grammar conversion keeps it exact."""
    return {
        "title": title,
        "type": "object",
        "properties": {key: {"type": "string", "enum": list(opts)} for key, opts in legal.items()},
        "required": list(legal),
        "additionalProperties": False,
    }


def finalize_orders(
    world: Game | Mapping[str, Any],
    power: str,
    answer: Mapping[str, Any] | None,
    *,
    legal: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """Turn a schema answer (``{key: order}``) into the order list to submit.

    Anything missing or not among that key's legal orders falls back: a movement unit holds,
    a dislodged unit disbands. Adjustments (the post-step the slot schema needs):

    * builds: keep the first build per home centre in slot order (a second build on the same
      site becomes a WAIVE) and pad with ``WAIVE`` so exactly ``n`` orders are returned;
    * disbands: keep distinct units in slot order; if duplicates leave fewer than ``n``, add
      the units the engine's civil-disorder rule would remove (farthest from a home centre,
      fleets before armies on ties, then alphabetical), so the count is always exact and the
      record shows every disband explicitly.
    """
    game = _as_game(world)
    power = power.upper()
    legal = legal if legal is not None else legal_orders(game, power)
    answer = answer or {}
    phase_type = game.phase_type
    if phase_type in ("M", "R"):
        out = []
        for key, opts in legal.items():
            choice = answer.get(key)
            if isinstance(choice, str) and choice in opts:
                out.append(choice)
            else:
                out.append(f"{key} H" if phase_type == "M" else f"{key} D")
        return out
    if phase_type != "A" or not legal:
        return []

    slots = list(legal)
    chosen = [answer.get(k) for k in slots]
    chosen = [
        c if isinstance(c, str) and c in legal[k] else None
        for k, c in zip(slots, chosen, strict=True)
    ]
    if slots[0].startswith("build_"):
        sites_used: set[str] = set()
        out = []
        for c in chosen:
            if c and c != WAIVE and c.split()[1][:3] not in sites_used:
                sites_used.add(c.split()[1][:3])
                out.append(c)
        return out + [WAIVE] * (len(slots) - len(out))

    # Disbands
    out = []
    for c in chosen:
        if c and c not in out:
            out.append(c)
    if len(out) < len(slots):
        for unit in _civil_disorder_disbands(game, power):
            if f"{unit} D" not in out:
                out.append(f"{unit} D")
            if len(out) == len(slots):
                break
    return out


def _civil_disorder_disbands(game: Game, power: str) -> list[str]:
    # Mirrors the engine's civil-disorder choice (Game._other_results): largest distance to a
    # home centre first, fleets before armies on ties, then by name. Uses the engine's own
    # distance function so the choice matches what the engine would do.
    pw = game.get_power(power)
    scored = [
        (-game._get_distance_to_home(u[0], u[2:], pw.homes), 0 if u[0] == "F" else 1, u)
        for u in pw.units
    ]
    return [u for _, _, u in sorted(scored)]


def hold_orders(world: Game | Mapping[str, Any], power: str) -> list[str]:
    """The documented fallback order set: every unit holds; dislodged units disband; builds are
    waived; required disbands follow the engine's civil-disorder rule."""
    return finalize_orders(world, power, {})


# ---------------------------------------------------------------------------------------------
# Geography: adjacency graphs and unit blocks for the order prompt
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _graph(map_name: str, unit_type: str) -> dict[str, tuple[str, ...]]:
    """Move adjacency for one unit type. Army nodes are provinces ("STP"); fleet nodes are
    coast-specific where the province has coasts ("STP/NC", "STP/SC"), so fleets on different
    coasts of the same province get different neighbours."""
    game_map = _map(map_name)
    nodes = [loc.upper() for loc in game_map.locs if game_map.is_valid_unit(f"{unit_type} {loc}")]
    graph = {}
    for node in nodes:
        dests = game_map.dest_with_coasts.get(node, [])
        graph[node] = tuple(
            sorted({d for d in dests if game_map.abuts(unit_type, node, "-", d) and d in nodes})
        )
    return graph


@lru_cache(maxsize=512)
def _map_area(map_name: str, loc: str) -> str | None:
    return _map(map_name).area_type(loc)


def _map(map_name: str) -> Map:
    return Map(map_name)  # the engine caches maps by name


@lru_cache(maxsize=4)
def _convoy_graph(map_name: str) -> dict[str, tuple[str, ...]]:
    """Army adjacency plus convoy legs: coast <-> adjacent sea, sea <-> sea. Used only for
    targets an army cannot reach by land (islands, across the Channel), so a path that
    needs a convoy is never preferred over a land path."""
    game_map = _map(map_name)
    army, fleet = _graph(map_name, "A"), _graph(map_name, "F")
    water = {loc for loc in fleet if game_map.area_type(loc) == "WATER"}
    graph: dict[str, set[str]] = {node: set(dests) for node, dests in army.items()}
    for sea in water:
        graph.setdefault(sea, set())
        for dest in fleet[sea]:
            prov = dest[:3]
            if prov in water:
                graph[sea].add(prov)
            elif prov in army:  # a coast: armies embark and land there
                graph[sea].add(prov)
                graph[prov].add(sea)
    return {node: tuple(sorted(dests)) for node, dests in graph.items()}


def _bfs(graph: Mapping[str, Sequence[str]], start: str) -> dict[str, list[str]]:
    """Shortest paths (as location lists) from start to every reachable node."""
    paths = {start: [start]}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        for nxt in graph.get(cur, ()):
            if nxt not in paths:
                paths[nxt] = paths[cur] + [nxt]
                queue.append(nxt)
    return paths


def _province_paths(paths: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Collapse coast nodes to provinces, keeping the shortest path per province."""
    best: dict[str, list[str]] = {}
    for node, path in sorted(paths.items()):
        prov = node[:3]
        if prov not in best or len(path) < len(best[prov]):
            best[prov] = path
    return best


def _needs_convoy(map_name: str, utype: str, path: Sequence[str]) -> bool:
    return utype == "A" and any(_map_area(map_name, p) == "WATER" for p in path)


def _loc_name(game: Game, loc: str) -> str:
    names = _loc_names(game.map.name)
    return names.get(loc.upper(), loc.upper())


@lru_cache(maxsize=8)
def _loc_names(map_name: str) -> dict[str, str]:
    game_map = _map(map_name)
    return {abbr.upper(): name.title() for name, abbr in game_map.loc_name.items()}


def _occupants(game: Game) -> dict[str, tuple[str, str]]:
    """Province -> (unit, owner) for every unit on the board (not dislodged ones)."""
    occ = {}
    for pname, pw in game.powers.items():
        for unit in pw.units:
            occ[unit[2:5]] = (unit, pname)
    return occ


def _centre_owners(game: Game) -> dict[str, str | None]:
    owners: dict[str, str | None] = {sc.upper(): None for sc in game.map.scs}
    for pname, pw in game.powers.items():
        for c in pw.centers:
            owners[c] = pname
    return owners


def unit_blocks(
    world: Game | Mapping[str, Any],
    power: str,
    *,
    n_foreign: int = 3,
    n_centres: int = 3,
) -> list[dict[str, Any]]:
    """One JSON-ready block per unit of ``power`` (and per dislodged unit in a retreat phase).

    Each block: the unit and its territory; the territories it can move to with their occupant
    (unit and owner) and centre status; the ``n_foreign`` nearest foreign units and the
    ``n_centres`` nearest supply centres it does not own (plus every such centre adjacent),
    each with the shortest path length on the unit's own adjacency (army: land moves; fleet:
    sea/coast moves with coasts, e.g. a fleet on STP/SC does not touch NWY or BAR); and its
    legal orders this phase. Convoys are not counted as paths. Targets the unit type cannot
    reach (an inland army for a fleet) are not listed.
    """
    game = _as_game(world)
    power = power.upper()
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    occ = _occupants(game)
    owners = _centre_owners(game)
    legal = legal_orders(game, power) if game.phase_type in ("M", "R") else {}
    homes = set(pw.homes)

    units = [(u, False) for u in pw.units]
    if game.phase_type == "R":
        units += [(u, True) for u in pw.retreats]

    blocks = []
    for unit, dislodged in sorted(units, key=lambda x: (x[1], x[0][2:])):
        utype, loc = unit[0], unit[2:]
        graph = _graph(game.map.name, utype)
        paths = _province_paths(_bfs(graph, loc))
        if utype == "A":  # targets beyond the sea: shortest path with convoy legs
            by_sea = _province_paths(_bfs(_convoy_graph(game.map.name), loc))
            paths.update({prov: path for prov, path in by_sea.items() if prov not in paths})
        prov = loc[:3]

        adjacent = []
        for dest in graph.get(loc, ()):
            o_unit, o_owner = occ.get(dest[:3], (None, None))
            adjacent.append(
                {
                    "location": dest,
                    "name": _loc_name(game, dest),
                    "occupant": o_unit,
                    "occupant_owner": o_owner,
                    "is_centre": dest[:3] in owners,
                    "centre_owner": owners.get(dest[:3]),
                }
            )

        foreign = []
        for o_prov, (o_unit, o_owner) in occ.items():
            if o_owner == power or o_prov not in paths or o_prov == prov:
                continue
            path = paths[o_prov]
            foreign.append(
                {
                    "unit": o_unit,
                    "owner": o_owner,
                    "distance": len(path) - 1,
                    "path": path,
                    "by_convoy": _needs_convoy(game.map.name, utype, path),
                }
            )
        foreign.sort(key=lambda f: (f["distance"], f["unit"][2:]))

        centres = []
        for sc, sc_owner in owners.items():
            if sc_owner == power or sc not in paths:
                continue
            path = paths[sc]
            centres.append(
                {
                    "centre": sc,
                    "owner": sc_owner,
                    "distance": len(path) - 1,
                    "path": path,
                    "by_convoy": _needs_convoy(game.map.name, utype, path),
                }
            )
        centres.sort(key=lambda c: (c["distance"], c["centre"]))
        near_centres = [c for i, c in enumerate(centres) if i < n_centres or c["distance"] <= 1]

        blocks.append(
            {
                "unit": unit,
                "power": power,
                "type": "army" if utype == "A" else "fleet",
                "location": loc,
                "province": prov,
                "name": _loc_name(game, loc),
                "dislodged": dislodged,
                "is_centre": prov in owners,
                "centre_owner": owners.get(prov),
                "is_home_centre": prov in homes,
                "adjacent": adjacent,
                "nearest_foreign_units": foreign[:n_foreign],
                "nearest_unowned_centres": near_centres,
                "legal_orders": list(legal.get(unit, [])),
            }
        )
    return blocks


def _centre_label(owner: str | None) -> str:
    return "neutral" if owner is None else owner


def render_unit_block(block: Mapping[str, Any]) -> str:
    """Prompt text for one unit block (stable layout, so llama.cpp can reuse its KV cache)."""
    head = f"{block['unit']} ({block['name']}"
    if block["is_centre"]:
        head += ", home centre" if block["is_home_centre"] else ", supply centre"
        head += f" owned by {_centre_label(block['centre_owner'])}"
    head += ")"
    if block.get("dislodged"):
        head += " DISLODGED: must retreat or disband"
    lines = [head]
    adj = []
    for a in block["adjacent"]:
        text = a["location"]
        if a["is_centre"]:
            text += f" [centre: {_centre_label(a['centre_owner'])}]"
        text += f" {a['occupant']} ({a['occupant_owner']})" if a["occupant"] else " empty"
        adj.append(text)
    lines.append("  Can move to: " + ("; ".join(adj) if adj else "nowhere"))
    foreign = [
        f"{f['unit']} ({f['owner']}) {f['distance']} away: {' > '.join(f['path'])}"
        + (" (by convoy)" if f.get("by_convoy") else "")
        for f in block["nearest_foreign_units"]
    ]
    lines.append("  Nearest foreign units: " + ("; ".join(foreign) if foreign else "none in reach"))
    centres = [
        f"{c['centre']} ({_centre_label(c['owner'])}) {c['distance']} away: {' > '.join(c['path'])}"
        + (" (by convoy)" if c.get("by_convoy") else "")
        for c in block["nearest_unowned_centres"]
    ]
    lines.append(
        "  Nearest centres you do not own: " + ("; ".join(centres) if centres else "none in reach")
    )
    if block["legal_orders"]:
        lines.append("  Legal orders: " + " | ".join(block["legal_orders"]))
    return "\n".join(lines)


def render_board(world: Game | Mapping[str, Any], power: str | None = None) -> str:
    """Public board text: phase, and per power its centres (count), units and home centres.
    ``power`` is listed first and marked "(you)"; neutral centres close the list."""
    game = _as_game(world)
    info = phase_info(game)
    me = power.upper() if power else None
    order = sorted(game.powers, key=lambda p: (p != me, p))
    lines = [f"Phase {info.name}"]
    for pname in order:
        pw = game.powers[pname]
        tag = " (you)" if pname == me else ""
        if pw.is_eliminated():
            lines.append(f"{pname}{tag}: eliminated")
            continue
        lines.append(
            f"{pname}{tag}: {len(pw.centers)} centres: {', '.join(sorted(pw.centers)) or '-'}"
        )
        lines.append(f"  units: {', '.join(sorted(pw.units, key=lambda u: u[2:])) or '-'}")
        if pw.retreats:
            lines.append(f"  dislodged: {', '.join(sorted(pw.retreats))}")
        lines.append(f"  home centres: {', '.join(sorted(pw.homes))}")
    owned = {c for pw in game.powers.values() for c in pw.centers}
    neutral = sorted(sc.upper() for sc in game.map.scs if sc.upper() not in owned)
    lines.append(f"Neutral centres ({len(neutral)}): {', '.join(neutral) or '-'}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Secretary and adjudication
# ---------------------------------------------------------------------------------------------

_ERR_CODE = re.compile(r"^\d+:")


def _err_text(err: Any) -> str:
    return _ERR_CODE.sub("", str(err)).strip()


def _norm(order: str) -> str:
    return " ".join(str(order).upper().split())


def check_orders(
    saved: Mapping[str, Any], power: str, orders: Sequence[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The secretary: submit ``orders`` to a copy of the current phase and report.

    Returns ``(accepted, rejected)``: ``accepted`` holds the engine's canonical form of each
    accepted order (e.g. ``"A MAR - SPA"`` for ``"a mar-spa"``), ``rejected`` holds
    ``(order, reason)``. An order is rejected when the engine refuses it (its error message is
    the reason), when it is a second order for the same unit, when the engine takes it but it is
    not among :func:`legal_orders` (e.g. a support that can never matter), or when it exceeds
    the number of builds/disbands allowed. Orders are submitted one by one so every engine error
    is attributed to the order that caused it.
    """
    game = load(current(saved))
    power = power.upper()
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    if game.is_game_done:
        return [], [(o, "the game is over") for o in orders]
    legal = legal_orders(game, power)
    phase_type = game.phase_type
    legal_all = {o for opts in legal.values() for o in opts}
    accepted: list[str] = []
    rejected: list[tuple[str, str]] = []
    ordered_units: set[str] = set()
    builds = disbands = 0
    max_slots = len(legal)

    for raw in orders:
        order = _norm(raw)
        if not order:
            rejected.append((str(raw), "empty order"))
            continue
        if phase_type == "A" and not legal:
            rejected.append((raw, f"{power} has no builds or disbands this phase"))
            continue
        # Each order alone against a cleared power: engine errors are then attributed to the
        # order that caused them (duplicates are caught below, not by the engine's reorder check).
        game.clear_orders(power)
        game.error = []
        game.set_orders(power, [order])
        errors = [_err_text(e) for e in game.error]
        if phase_type == "M":
            canonical = next((f"{u} {o}" for u, o in pw.orders.items()), None)
        elif order == WAIVE:
            canonical = WAIVE if WAIVE in pw.adjust else None
        else:
            canonical = next((a for a in pw.adjust if a != WAIVE), None)
            if canonical and canonical.startswith("VOID"):
                canonical = None
        game.error = []

        if errors or canonical is None:
            engine = "; ".join(errors) if errors else "order ignored"
            rejected.append((raw, f"illegal order (engine: {engine})" + _legal_hint(legal, order)))
            continue
        canonical = canonical.removesuffix(" ?")
        kind = order_type(canonical)
        unit = " ".join(canonical.split()[:2])
        if kind != "waive" and unit in ordered_units:
            rejected.append((raw, f"{unit} already has an order this phase"))
            continue
        if canonical not in legal_all:
            rejected.append(
                (raw, "not among the legal orders this phase" + _legal_hint(legal, canonical))
            )
            continue
        if kind in ("build", "waive"):
            if builds >= max_slots:
                rejected.append((raw, f"only {max_slots} build(s) or waive(s) allowed"))
                continue
            builds += 1
        elif kind == "disband" and phase_type == "A":
            if disbands >= max_slots:
                rejected.append((raw, f"exactly {max_slots} disband(s) required"))
                continue
            disbands += 1
        if kind != "waive":
            ordered_units.add(unit)
        # Keep the caller's spelling when it is itself a listed legal order (the engine drops
        # coasts from support targets, "S F CON - BUL/SC" -> "S F CON - BUL"; both are legal).
        accepted.append(order if order in legal_all else canonical)
    return accepted, rejected


def check_answer(
    saved: Mapping[str, Any],
    power: str,
    answer: Mapping[str, Any],
    *,
    legal: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """The secretary for a schema answer (``{key: order}``, keys as in :func:`legal_orders`).

    Returns ``(accepted, refused)``: ``accepted`` maps a key to its order (the engine's canonical
    form when the caller's spelling is not itself a listed order), ``refused`` maps a key to
    ``(order, reason)``. A missing or empty answer for a key is refused ("no order given"); in
    movement and retreat phases an order for another unit than its key is refused too. Keys not
    in ``legal`` are ignored (they are not orderable this phase)."""
    power = power.upper()
    legal = legal if legal is not None else legal_orders(saved, power)
    keys = list(legal)
    given = [str(answer.get(k) or "").strip() for k in keys]
    by_unit = str(saved["phases"][-1]["name"])[-1:] in ("M", "R")

    def for_key(key: str, order: str) -> bool:
        return not by_unit or " ".join(order.split()[:2]) == key

    def site(order: str) -> str | None:  # two builds on one site: the engine keeps only one
        return order.split()[1][:3] if order_type(order) == "build" else None

    accepted, rejected = check_orders(saved, power, given)
    sites = [site(o) for o in accepted if site(o)]
    if (
        not rejected
        and len(accepted) == len(keys)
        and all(for_key(k, o) for k, o in zip(keys, accepted, strict=True))
        and len(sites) == len(set(sites))
    ):
        return dict(zip(keys, accepted, strict=True)), {}
    # Attribute every refusal to its key: orders are checked in sequence, so a prefix of
    # accepted orders plus one more is refused exactly when that one is (the rare path).
    out: dict[str, str] = {}
    refused: dict[str, tuple[str, str]] = {}
    prefix: list[str] = []
    for key, order in zip(keys, given, strict=True):
        if not order:
            refused[key] = (order, "no order given" + _legal_hint(legal, key))
            continue
        acc, rej = check_orders(saved, power, [*prefix, order])
        if rej:
            refused[key] = (order, rej[-1][1])
        elif not for_key(key, acc[-1]):
            refused[key] = (order, f"this is not an order for {key}" + _legal_hint(legal, key))
        elif site(acc[-1]) and site(acc[-1]) in {site(o) for o in out.values()}:
            refused[key] = (order, f"a unit is already built at {site(acc[-1])} this phase")
        else:
            out[key] = acc[-1]
            prefix.append(order)
    return out, refused


def add_messages(
    saved: Mapping[str, Any], messages: Iterable[tuple[str, str, str]]
) -> dict[str, Any]:
    """The saved game with ``(sender, recipient, text)`` messages added to the current phase
    (recipient a power or ``GLOBAL``). Check them with :func:`check_message` first: the engine
    does not enforce press rules locally. Each message gets the next ``time_sent`` after the
    latest in the game (two messages with the same ``time_sent`` would overwrite each other), so
    the result is deterministic. The caller's dict is not modified."""
    game = load(current(saved))
    latest = max(
        (int(m.get("time_sent") or 0) for ph in saved["phases"] for m in ph.get("messages", [])),
        default=0,
    )
    phase = game.get_current_phase()
    for sender, recipient, text in messages:
        latest += 1
        game.add_message(
            Message(
                sender=str(sender).upper(),
                recipient=str(recipient).upper(),
                message=str(text),
                phase=phase,
                time_sent=latest,
            )
        )
    return _with_history(saved, save(game))


def _legal_hint(legal: Mapping[str, Sequence[str]], order: str, limit: int = 12) -> str:
    unit = " ".join(order.split()[:2])
    opts = legal.get(unit)
    if not opts:
        keys = ", ".join(legal) or "nothing"
        return f"; you can order: {keys}"
    shown = list(opts[:limit]) + (["..."] if len(opts) > limit else [])
    return f"; legal for {unit}: {' | '.join(shown)}"


_OUTCOME_PRIORITY = (
    ("dislodged", "dislodged"),
    ("void", "void"),
    ("bounce", "bounced"),
    ("cut", "cut"),
    ("no convoy", "no_convoy"),
    ("disrupted", "disrupted"),
    ("disband", "disbanded"),
)


def outcome_of(results: Sequence[str]) -> str:
    """One label for an engine result list: success, dislodged, void, bounced, cut, no_convoy,
    disrupted, disbanded (first match in that order; ``[]`` or ``[""]`` is success)."""
    for key, label in _OUTCOME_PRIORITY:
        if key in results:
            return label
    return "success"


def adjudicate(
    saved: Mapping[str, Any], orders: Mapping[str, Sequence[str]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Set every power's orders, process the phase, return ``(new_saved, results)``.

    ``results`` = ``{"phase", "next_phase", "orders": {power: [record, ...]}, "errors":
    {power: [engine error, ...]}}`` where each record is ``{"order", "unit", "type", "results"
    (the engine's list), "outcome" (see outcome_of), "defaulted": bool}``. ``defaulted`` marks
    orders the engine supplied: holds for unordered units, disbands for unretreated units, and
    civil-disorder disbands/waives. Orders should have passed :func:`check_orders`; the engine
    still drops anything illegal and its errors are reported, never printed.
    """
    game = load(current(saved))  # the history is put back below
    if game.is_game_done:
        raise ValueError("the game is over: nothing to adjudicate")
    phase = game.get_current_phase()
    game.clear_orders()
    errors: dict[str, list[str]] = {}
    for pname, olist in orders.items():
        pname = pname.upper()
        if game.get_power(pname) is None:
            errors[pname] = [f"unknown power {pname}"]
            continue
        n_err = len(game.error)
        game.set_orders(pname, [_norm(o) for o in olist if _norm(o)])
        if game.error[n_err:]:
            errors[pname] = [_err_text(e) for e in game.error[n_err:]]
    game.error = []  # process() prints leftover errors to stdout unless IGNORE_ERRORS is set
    game.process()
    new_saved = _with_history(saved, save(game))

    processed = next(p for p in reversed(new_saved["phases"]) if p["name"] == phase)
    engine_results: dict[str, list[str]] = processed.get("results", {})
    state = processed["state"]
    recorded: dict[str, Any] = {}
    for pname in sorted(state["units"]):
        submitted = list(processed["orders"].get(pname) or [])
        records = []
        seen_units = set()
        for order in submitted:
            if order == WAIVE:
                records.append(_record(order, "", [], False))
                continue
            unit = " ".join(order.split()[:2])
            seen_units.add(unit)
            records.append(_record(order, unit, engine_results.get(unit, []), False))
        # Units the engine ordered itself
        if phase[-1] == "M":
            for unit in state["units"][pname]:
                if unit not in seen_units:
                    records.append(_record(f"{unit} H", unit, engine_results.get(unit, []), True))
        elif phase[-1] == "R":
            for unit in state.get("retreats", {}).get(pname, {}):
                if unit not in seen_units:
                    res = engine_results.get(unit, ["disband"])
                    records.append(_record(f"{unit} D", unit, res, True))
        else:
            own = set(state["units"][pname])
            for unit, res in engine_results.items():
                if unit in own and unit not in seen_units:
                    records.append(_record(f"{unit} D", unit, res, True))
        recorded[pname] = records
    results = {
        "phase": phase,
        "next_phase": game.get_current_phase(),
        "orders": recorded,
        "errors": errors,
    }
    return new_saved, results


def _record(order: str, unit: str, res: Sequence[str], defaulted: bool) -> dict[str, Any]:
    res = [r for r in res if r]  # the engine writes "" for OK
    return {
        "order": order,
        "unit": unit,
        "type": order_type(order),
        "results": res,
        "outcome": outcome_of(res),
        "defaulted": defaulted,
    }


# ---------------------------------------------------------------------------------------------
# Press and rendering
# ---------------------------------------------------------------------------------------------


def check_message(
    sender: str,
    recipient: str,
    text: str,
    *,
    press: Press = "full",
    max_len: int = 1000,
    powers: Collection[str] = POWERS,
) -> str | None:
    """Enforce wargraph's press rules (the engine does not). ``None`` when the message may be
    sent, otherwise the reason it is refused.

    ``press``: "full" (global and private), "public" (global only), "none" (no messages).
    ``powers``: who may send or receive (pass the powers still alive).
    """
    if press not in ("full", "public", "none"):
        return f"unknown press setting {press!r}"
    if press == "none":
        return "no press: messages are not allowed in this game"
    sender_u = str(sender).upper()
    recipient_u = str(recipient).upper()
    allowed = {p.upper() for p in powers}
    if sender_u not in allowed:
        return f"sender {sender!r} is not a power in play"
    if recipient_u != GLOBAL and recipient_u not in allowed:
        return f"recipient {recipient!r} is not a power in play or {GLOBAL}"
    if recipient_u == sender_u:
        return "a power cannot message itself"
    if press == "public" and recipient_u != GLOBAL:
        return f"public press only: send to {GLOBAL}, not to {recipient_u}"
    if not isinstance(text, str) or not text.strip():
        return "empty message"
    if len(text) > max_len:
        return f"message too long: {len(text)} characters, limit {max_len}"
    return None


def render_svg(
    saved: Mapping[str, Any],
    phase: str | None = None,
    *,
    incl_orders: bool = True,
    incl_abbrev: bool = False,
) -> str:
    """SVG map (the engine's renderer, offline) of ``phase`` (default: the current one): the
    position at the start of that phase with the orders given in it, if any."""
    phases = list(saved["phases"])
    if phase is not None:
        idx = next((i for i, p in enumerate(phases) if p["name"] == phase), None)
        if idx is None:
            raise ValueError(f"phase {phase!r} not in this game")
        phases = phases[: idx + 1]
    game = load({**saved, "phases": phases})
    svg = Renderer(game).render(incl_orders=incl_orders, incl_abbrev=incl_abbrev)
    if not svg:
        raise RuntimeError("the engine's renderer produced nothing (map SVG missing?)")
    return svg
