"""The engine boundary: new and saved games (the engine's saved-game dict is the state), where a
game stands (PhaseInfo), and adjudication of a phase."""

from __future__ import annotations

import copy
import hashlib
import os
import random
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

import diplomacy.engine.game as engine_game  # type: ignore[import-untyped]
from diplomacy import Game
from diplomacy.utils.export import from_saved_game_format, to_saved_game_format  # type: ignore[import-untyped]

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


_TABLES_LOCK = threading.Lock()


_SEASONS = {"S": 0, "F": 1, "W": 2}
_PHASE_TYPES = {"M": 0, "R": 1, "A": 2}


def phase_key(name: str) -> tuple[int, int, int]:
    """Sort key for phase names: S1901M < S1901R < F1901M < F1901R < W1901A < S1902M.
    FORMING sorts first and COMPLETED last."""
    if name == "FORMING":
        return (-1, 0, 0)
    if name == "COMPLETED":
        return (10**6, 0, 0)
    return (int(name[1:-1]), _SEASONS.get(name[0], 9), _PHASE_TYPES.get(name[-1], 9))


def hash_tables(map_name: str) -> None:
    """Make the engine's position-hash (Zobrist) tables of a map, once per process, the same in
    every process. The engine makes them with the first Game of a map by seeding Python's shared
    `random` and drawing from it; a thread drawing from it meanwhile (twenty served games at
    once) changed the tables, and with them every saved position's `zobrist_hash`, so a game
    played on a server differed from the same game played alone. They are drawn from a private
    generator instead."""
    if map_name in Game.zobrist_tables:
        return
    with _TABLES_LOCK:
        if map_name in Game.zobrist_tables:
            return
        shared = engine_game.random
        engine_game.random = random.Random()  # seed, randint, getstate, setstate: as the module
        try:
            Game(map_name=map_name)
        finally:
            engine_game.random = shared


@lru_cache(maxsize=8)
def _template(map_name: str, rules: tuple[str, ...]) -> dict[str, Any]:
    # Building a Game costs ~100 ms the first time (map and rule files); the opening position
    # never changes, so build it once and hand out deep copies with fresh ids.
    hash_tables(map_name)
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
    hash_tables(str(saved.get("map", "standard")))
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
    clock that ticks once per phase): same seed, same record. A phase stamped otherwise is
    replaced by a stamped copy (earlier phases may be shared with other saved games)."""
    phases = saved.get("phases", [])
    for i, phase in enumerate(phases):
        state = phase.get("state")
        if isinstance(state, dict) and "timestamp" in state and state["timestamp"] != i + 1:
            phases[i] = {**phase, "state": {**state, "timestamp": i + 1}}
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
    put back in front. The earlier phases are shared, not copied: a played phase is never
    changed again (nothing here writes into a saved phase; :func:`load` copies before the
    engine sees one), and copying the whole history on every adjudication grew with the game."""
    phases = list(saved["phases"])[:-1] + list(new["phases"])
    return _stamped({**new, "phases": phases})


# ---------------------------------------------------------------------------------------------
# Positions: one engine phase loaded once and shared by every question asked about it
# ---------------------------------------------------------------------------------------------


class Position:
    """The engine at one phase, loaded once, with what is derived from it (every power's legal
    orders, the board text, unit blocks) computed on first use and kept.

    The ``Game`` is shared by every caller at this position (other nodes, other games at the
    same position), so it is used read-only and only under ``lock``; anything that sets orders
    or processes loads its own copy (:func:`adjudicate`, the secretary's slow path)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.lock = threading.RLock()
        self._derived: dict[Any, Any] = {}
        self._spare: tuple[Any, Game] | None = None  # (the saved phase it was loaded from, game)

    def make_spare(self, saved: Mapping[str, Any]) -> None:
        """Load a private copy of this position for the adjudication to take (`take_spare`),
        ahead of it: loading is about half an adjudication's CPU. A spare loaded from an earlier
        state of the phase (the talks add their messages to it) is loaded again."""
        phase = saved["phases"][-1]
        with self.lock:
            if self._spare is not None and _same_phase(self._spare[0], phase):
                return
        game = load(current(saved))  # outside the lock: the position's readers go on
        with self.lock:
            if self._spare is None or not _same_phase(self._spare[0], phase):
                self._spare = (phase, game)

    def take_spare(self, saved: Mapping[str, Any]) -> Game | None:
        """The copy `make_spare` loaded, once, if it was loaded from this very phase (the same
        position with other details of the saved phase is loaded anew)."""
        with self.lock:
            spare, self._spare = self._spare, None
        if spare is None:
            return None
        phase, game = spare
        return game if _same_phase(phase, saved["phases"][-1]) else None

    def derived(self, key: Any, make: Callable[[Game], Any]) -> Any:
        """``make(game)`` once per key at this position (under the lock)."""
        with self.lock:
            if key not in self._derived:
                self._derived[key] = make(self.game)
            return self._derived[key]

    def possible_orders(self) -> dict[str, list[str]]:
        # The engine computes every location's orders at once (~1 ms); once per position, not
        # once per power and question.
        return self.derived("possible", lambda g: g.get_all_possible_orders())


def _same_phase(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a is b or a == b


_POSITIONS: OrderedDict[str, Position] = OrderedDict()
_POSITIONS_LOCK = threading.Lock()
POSITION_CACHE_SIZE = 64  # positions kept (several games may run in one process)


def position_key(saved: Mapping[str, Any]) -> str:
    """What identifies a position: the game, map and rules and the current phase's whole state
    (units, centres, dislodged units, homes, builds ...), without the wall-clock stamp. (The
    same state with its keys in another order only misses the cache.)"""
    state = [(k, v) for k, v in saved["phases"][-1]["state"].items() if k != "timestamp"]
    blob = repr((saved.get("id"), saved.get("map", "standard"), saved.get("rules"), state))
    return hashlib.sha1(blob.encode(), usedforsecurity=False).hexdigest()


def remember_position(saved: Mapping[str, Any], game: Game) -> Position:
    """Keep ``game`` (standing at ``saved``'s current phase, used read-only from now on) as that
    position, unless the position is already known."""
    return _keep(position_key(saved), Position(game))


def _keep(key: str, pos: Position) -> Position:
    with _POSITIONS_LOCK:
        found = _POSITIONS.setdefault(key, pos)
        _POSITIONS.move_to_end(key)
        while len(_POSITIONS) > POSITION_CACHE_SIZE:
            _POSITIONS.popitem(last=False)
    return found


# The key of the last few phase states looked up, by the state dict itself (kept alive here, so
# its id cannot be reused): every step of a phase asks with the same dict, and hashing the whole
# state each time cost more than the rest of the lookup.
_KEYS: OrderedDict[int, tuple[Any, tuple[Any, str]]] = OrderedDict()


def _key_of(saved: Mapping[str, Any]) -> str:
    state = saved["phases"][-1]["state"]
    with _POSITIONS_LOCK:
        hit = _KEYS.get(id(state))
        if hit is not None and hit[0] is state and hit[1][0] == saved.get("id"):
            return hit[1][1]
    key = position_key(saved)
    with _POSITIONS_LOCK:
        _KEYS[id(state)] = (state, (saved.get("id"), key))
        while len(_KEYS) > POSITION_CACHE_SIZE:
            _KEYS.popitem(last=False)
    return key


def position(saved: Mapping[str, Any]) -> Position:
    """The shared :class:`Position` of a saved game's current phase (loaded on first use)."""
    key = _key_of(saved)
    with _POSITIONS_LOCK:
        found = _POSITIONS.get(key)
        if found is not None:
            _POSITIONS.move_to_end(key)
            return found
    return _keep(key, Position(load(current(saved))))


def forget_positions() -> None:
    """Drop every kept position (e.g. to time a game from a cold start)."""
    with _POSITIONS_LOCK:
        _POSITIONS.clear()
        _KEYS.clear()


def as_game(world: Game | Mapping[str, Any]) -> Game:
    """A Game to read (never to change): a saved game's shared :func:`position`."""
    return world if isinstance(world, Game) else position(world).game


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
        type=name[-1],
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
    saved: Mapping[str, Any],
    orders: Mapping[str, Sequence[str]],
    *,
    spare: Game | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Set every power's orders, process the phase, return ``(new_saved, results)``.

    ``results`` = ``{"phase", "next_phase", "orders": {power: [record, ...]}, "errors":
    {power: [engine error, ...]}}`` where each record is ``{"order", "unit", "type", "results"
    (the engine's list), "outcome" (see outcome_of), "defaulted": bool}``. ``defaulted`` marks
    orders the engine supplied: holds for unordered units, disbands for unretreated units, and
    civil-disorder disbands/waives. Orders should have passed :func:`check_orders`; the engine
    still drops anything illegal and its errors are reported, never printed.
    """
    # the history is put back below; `spare`: a copy loaded ahead (`Position.take_spare`)
    game = spare or load(current(saved))
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
        game.set_orders(pname, [norm_order(o) for o in olist if norm_order(o)])
        if game.error[n_err:]:
            errors[pname] = [err_text(e) for e in game.error[n_err:]]
    game.error = []  # process() prints leftover errors to stdout unless IGNORE_ERRORS is set
    game.process()
    new_saved = _with_history(saved, save(game))
    # The processed engine stands where the next phase starts: it becomes that position, so
    # the next phase's questions need no load. Nothing changes it from here on.
    remember_position(new_saved, game)

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


# --- how the engine names and reports orders ---------------------------------------------

TYPE_RANK = {"hold": 0, "move": 1, "support": 2, "convoy": 3, "retreat": 1, "disband": 0}


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


_ERR_CODE = re.compile(r"^\d+:")


def err_text(err: Any) -> str:
    return _ERR_CODE.sub("", str(err)).strip()


def norm_order(order: str) -> str:
    return " ".join(str(order).upper().split())
