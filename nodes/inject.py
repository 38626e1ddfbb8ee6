"""`inject`: the scenario's injects for this round enter the record (no one is asked)."""

from __future__ import annotations

from typing import Any

from wargraph.state import GameState, make_event
from wargraph.table import Table


def inject(state: GameState, table: Table) -> dict[str, Any]:
    events = [
        make_event(
            round=table.round,
            phase="inject",
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
