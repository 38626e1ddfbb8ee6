"""`Opening`: the world's state and events when a game starts, and the injects of a round."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Opening:
    """No engine state of its own; the scenario's injects enter on their round."""

    def open(self, table: Table) -> dict[str, Any]:
        """Add to the setup update (`table.state`: the scenario's opening events, round 1):
        the initial `world` and events of its own (`events` replaces the opening events)."""
        return {}

    def injects(self, table: Table) -> dict[str, Any]:
        """The update of an `inject` phase: the scenario's injects for this round."""
        events = [
            table.event(
                kind="inject",
                author="control",
                text=inj.text,
                audience=inj.audience,
                key=str(i),
            )
            for i, inj in enumerate(table.scenario.injects)
            if inj.round == table.round
        ]
        return {"events": events}
