"""What a power sees of the map: unit blocks (each unit's legal orders, nearest foreign units and
unowned centres) and the board as text."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from diplomacy import Game  # type: ignore[import-untyped]
from diplomacy.engine.map import Map  # type: ignore[import-untyped]

from wargraph.graphs.diplomacy.engine import as_game, phase_info
from wargraph.graphs.diplomacy.orders import legal_orders

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


@lru_cache(maxsize=512)
def _paths_from(map_name: str, utype: str, loc: str) -> dict[str, list[str]]:
    """Shortest path to every province from a unit's location (the map never changes): on the
    unit's own adjacency, and for armies with convoy legs to what land cannot reach. Callers
    only read the result."""
    paths = _province_paths(_bfs(_graph(map_name, utype), loc))
    if utype == "A":  # targets beyond the sea: shortest path with convoy legs
        by_sea = _province_paths(_bfs(_convoy_graph(map_name), loc))
        paths.update({prov: path for prov, path in by_sea.items() if prov not in paths})
    return paths


def _needs_convoy(map_name: str, utype: str, path: Sequence[str]) -> bool:
    return utype == "A" and any(_map_area(map_name, p) == "WATER" for p in path)


def _loc_name(game: Game, loc: str) -> str:
    names = loc_names(game.map.name)
    return names.get(loc.upper(), loc.upper())


@lru_cache(maxsize=8)
def loc_names(map_name: str) -> dict[str, str]:
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


def _reach(
    kind: str, name: str, owner: str | None, path: list[str], map_name: str, utype: str
) -> dict[str, Any]:
    """A unit or centre in reach: its distance, the path (a copy) and whether it needs a convoy."""
    return {
        kind: name,
        "owner": owner,
        "distance": len(path) - 1,
        "path": list(path),
        "by_convoy": _needs_convoy(map_name, utype, path),
    }


def unit_blocks(
    world: Game | Mapping[str, Any],
    power: str,
    *,
    n_foreign: int = 3,
    n_centres: int = 3,
    legal: Mapping[str, Sequence[str]] | None = None,
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
    game = as_game(world)
    power = power.upper()
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    occ = _occupants(game)
    owners = _centre_owners(game)
    if game.phase_type not in ("M", "R"):
        legal = {}
    elif legal is None:
        legal = legal_orders(world, power)
    homes = set(pw.homes)

    units = [(u, False) for u in pw.units]
    if game.phase_type == "R":
        units += [(u, True) for u in pw.retreats]

    blocks = []
    for unit, dislodged in sorted(units, key=lambda x: (x[1], x[0][2:])):
        utype, loc = unit[0], unit[2:]
        graph = _graph(game.map.name, utype)
        paths = _paths_from(game.map.name, utype, loc)
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

        # Sorted on distance first; paths are copied and convoys checked only for what is kept.
        foreign_all = sorted(
            (len(paths[p]) - 1, u[2:], u, owner, p)
            for p, (u, owner) in occ.items()
            if owner != power and p in paths and p != prov
        )
        foreign = [
            _reach("unit", u, owner, paths[p], game.map.name, utype)
            for _, _, u, owner, p in foreign_all[:n_foreign]
        ]
        centres_all = sorted(
            (len(paths[sc]) - 1, sc, sc_owner)
            for sc, sc_owner in owners.items()
            if sc_owner != power and sc in paths
        )
        near_centres = [
            _reach("centre", sc, sc_owner, paths[sc], game.map.name, utype)
            for i, (d, sc, sc_owner) in enumerate(centres_all)
            if i < n_centres or d <= 1
        ]

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
                "nearest_foreign_units": foreign,
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
    game = as_game(world)
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
# Compact text for bounded prompts (the world's token budgets)
# ---------------------------------------------------------------------------------------------


def render_board_compact(world: Game | Mapping[str, Any], *, units: bool = True) -> str:
    """The public board in one line per power: centre count and centres, then units (or, with
    `units=False`, their count); the neutral centres last. The same text for every power
    (llama.cpp reuses its KV cache across seats)."""
    game = as_game(world)
    lines = [f"Phase {phase_info(game).name}. Per power: centres; units"]
    for pname in sorted(game.powers):
        pw = game.powers[pname]
        if pw.is_eliminated():
            lines.append(f"{pname}: eliminated")
            continue
        listed = ", ".join(sorted(pw.units, key=lambda u: u[2:])) or "-"
        if not units:
            listed = f"{len(pw.units)} units"
        line = f"{pname} {len(pw.centers)}: {' '.join(sorted(pw.centers)) or '-'}; {listed}"
        if pw.retreats:
            line += f"; dislodged {', '.join(sorted(pw.retreats))}"
        lines.append(line)
    owned = {c for pw in game.powers.values() for c in pw.centers}
    neutral = sorted(sc.upper() for sc in game.map.scs if sc.upper() not in owned)
    lines.append(f"Neutral {len(neutral)}: {' '.join(neutral) or '-'}")
    return "\n".join(lines)


def near_provinces(world: Game | Mapping[str, Any], power: str) -> set[str]:
    """Provinces that concern ``power``: its units' and their neighbours, and its centres."""
    game = as_game(world)
    pw = game.get_power(power.upper())
    near = {c for c in pw.centers}
    for unit in list(pw.units) + list(pw.retreats):
        loc = unit[2:]
        near.add(loc[:3])
        near.update(d[:3] for d in _graph(game.map.name, unit[0]).get(loc, ()))
    return near


def _place(a: Mapping[str, Any]) -> str:
    """A neighbouring place worth a word: a centre (and its owner), a unit (and its power)."""
    text = a["location"]
    if a["is_centre"]:
        text += f" centre {_centre_label(a['centre_owner'])}"
    if a["occupant"]:
        text += f" with {a['occupant']} {a['occupant_owner']}"
    return text


def compact_orders(unit: str, orders: Sequence[str]) -> str:
    """A unit's legal orders without repeating the unit: `H | - ANK, BLA | S A CON: H, ANK |
    C A LON: BEL`. Written in full, each is `<unit> <rest>` (e.g. `F ARM S A CON - ANK`)."""
    hold: list[str] = []
    moves: list[str] = []
    rest: dict[tuple[str, str], list[str]] = {}  # (verb, unit) -> destinations
    for order in orders:
        tail = order[len(unit) + 1 :] if order.startswith(unit + " ") else order
        if tail in ("H", "D"):
            hold.append(tail)
        elif tail.startswith(("- ", "R ")):
            moves.append(tail)
        elif tail.startswith(("S ", "C ")):
            verb, other = tail[0], tail[2:]
            target = other.split(" - ", 1)
            dest = target[1] if len(target) > 1 else "H"
            rest.setdefault((verb, target[0]), []).append(dest)
    parts = hold[:]
    if moves:
        verb = moves[0][0]
        parts.append(f"{verb} " + ", ".join(m[2:] for m in moves))
    for verb in ("S", "C"):
        group = [f"{u}: {', '.join(d)}" for (v, u), d in rest.items() if v == verb]
        if group:
            parts.append(f"{verb} " + "; ".join(group))
    return " | ".join(parts)


def unit_lines(block: Mapping[str, Any]) -> dict[str, str]:
    """The lines of a compact unit block, each made once: `head` (the unit and the notable
    places next to it), `near` (nearest foreign units and centres to take), `orders` (every
    legal order, compact) and `moves` (holds and moves; supports and convoys only counted)."""
    head = f"{block['unit']} ({block['name']})"
    if block.get("dislodged"):
        head += " DISLODGED: retreat or disband"
    notable = [_place(a) for a in block["adjacent"] if a["is_centre"] or a["occupant"]]
    foreign = [f"{f['unit']} {f['owner']} {f['distance']}" for f in block["nearest_foreign_units"]]
    centres = [
        f"{c['centre']} {_centre_label(c['owner'])} {c['distance']}"
        for c in block["nearest_unowned_centres"]
    ]
    unit, orders = block["unit"], list(block["legal_orders"])
    kept = [o for o in orders if order_kind(unit, o) in ("H", "D", "-", "R")]
    extra = len(orders) - len(kept)
    return {
        "head": head + (". Next to: " + "; ".join(notable) if notable else ""),
        "near": f"  Near: {', '.join(foreign) or '-'}. Centres to take: {', '.join(centres) or '-'}",
        "orders": f"  Orders: {compact_orders(unit, orders)}" if orders else "",
        "moves": (f"  Orders: {compact_orders(unit, kept)}" if orders else "")
        + (f" (+{extra} supports/convoys)" if extra else ""),
    }


def render_unit_compact(
    block: Mapping[str, Any] | dict[str, str], *, near: bool = True, supports: bool = True
) -> str:
    """A unit block in few tokens: where it can go, (optionally) the nearest foreign units and
    centres, and its legal orders in compact form (`compact_orders`); without `supports`, the
    support and convoy orders are only counted. Takes a block or its `unit_lines`."""
    lines = block if "head" in block else unit_lines(block)
    picked = [
        lines["head"],
        lines["near"] if near else "",
        lines["orders" if supports else "moves"],
    ]
    return "\n".join(x for x in picked if x)


def order_kind(unit: str, order: str) -> str:
    tail = order[len(unit) + 1 :] if order.startswith(unit + " ") else order
    return tail.split(" ", 1)[0]
