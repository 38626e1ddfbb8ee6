"""`inject`: the world's injects for this round enter the record (no one is asked)."""

from __future__ import annotations

from typing import Any

from wargraph.kernel.state import GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, nobody


@asks(nobody)
def inject(state: GameState, table: Table) -> dict[str, Any]:
    return table.world.opening.injects(table)
