"""`Debrief`: what the `analyze` phase records after the game, before the scenario's questions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Debrief:
    """Nothing beyond the questions (a family with scores records them here)."""

    def debrief(self, table: Table) -> dict[str, Any]:
        return {}
