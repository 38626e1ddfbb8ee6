"""`adjudicate`: the world resolves the round's proposals. Where an umpire narrates (the control
of a narrative world), it is asked first and its narration (reviewable by a person) is part of
the resolution; rule worlds resolve by code."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.record import EMPTIED, round_record
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks


def _narrator(scenario: Any, world: Any) -> list[str]:
    return [scenario.control.name] if world.resolution.narrates else []


@asks(_narrator)
def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    resolution = table.world.resolution
    placed = round_record(table.state.get("world"))
    proposals = dict(placed.get("proposals") or {})
    narration = None
    if resolution.narrates:
        control = table.scenario.control.name
        narration = table.pending.get(table.ask_id(resolution.task, control))
        if narration is None:
            q = resolution.question(table, proposals)
            return {"asks": [table.ask_question(control, q)]}
    update = dict(resolution.resolve(table, proposals, narration))
    # the round record (wargraph.kernel.record) is emptied once the round is resolved
    emptied = [*EMPTIED, "by_mount"] if "by_mount" in placed else EMPTIED
    update["world"] = {**{k: {} for k in emptied}, **(update.get("world") or {})}
    update["pending"] = {CLEAR: True}
    return update
