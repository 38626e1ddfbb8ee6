"""`adjudicate`: the world resolves the round's proposals. Where an umpire narrates (the control
of a narrative world), it is asked first and its narration (reviewable by a person) is part of
the resolution; rule worlds resolve by code."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks

# What a round leaves in `world` for the next: emptied once the round is resolved.
ROUND_KEYS = ("proposals", "sources", "attempts", "status", "trail", "notes")


def _narrator(scenario: Any, world: Any) -> list[str]:
    return [scenario.control.name] if world.resolution.narrates else []


@asks(_narrator)
def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    resolution = table.world.resolution
    proposals = dict((table.state.get("world") or {}).get("proposals") or {})
    narration = None
    if resolution.narrates:
        control = table.scenario.control.name
        narration = table.pending.get(table.ask_id(resolution.task, control))
        if narration is None:
            q = resolution.question(table, proposals)
            return {"asks": [table.ask_question(control, q)]}
    update = dict(resolution.resolve(table, proposals, narration))
    update["world"] = {**{k: {} for k in ROUND_KEYS}, **(update.get("world") or {})}
    update["pending"] = {CLEAR: True}
    return update
