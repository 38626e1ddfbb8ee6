"""The engine phase a step plays, as the world's parts read it from the table: the saved game,
the engine loaded at that position, where the game stands and each power's legal orders, each
computed once per step (and the position once for every step and seat that shares it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wargraph.graphs.diplomacy.engine as engine
from wargraph.graphs.diplomacy.orders import legal_orders_at

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


def saved_of(table: Table) -> dict[str, Any]:
    """The engine's saved game (graph state keeps it, never a `Game`)."""
    return table.state["world"]["diplomacy"]


def position_of(table: Table) -> engine.Position:
    """The engine at the current phase: loaded once per position and shared by every step and
    seat that asks about it (`engine.position`), looked up once per step."""
    if "position" not in table.cache:
        table.cache["position"] = engine.position(saved_of(table))
    return table.cache["position"]


def info_of(table: Table) -> engine.PhaseInfo:
    """Where the game stands (read once per step)."""
    if "info" not in table.cache:
        table.cache["info"] = engine.phase_info(saved_of(table))
    return table.cache["info"]


def legal_of(table: Table, power: str) -> dict[str, list[str]]:
    """A power's legal orders (computed once per position; this step's copy)."""
    legal = table.cache.setdefault("legal", {})
    if power not in legal:
        legal[power] = legal_orders_at(position_of(table), power)
    return legal[power]
