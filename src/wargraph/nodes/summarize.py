"""`summarize`: each writer keeps a private diary entry (its memory slot replaces the last);
the world says who writes, what is asked and what the entry records."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.question import SUMMARIZE
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, players


@asks(players)
def summarize(state: GameState, table: Table) -> dict[str, Any]:
    world = table.world
    writers = world.cast.actors(table, SUMMARIZE)
    if not writers:
        return {}
    asked = {r: world.diary.asked(table, r) for r in writers}
    if any(
        table.ask_id(task, r, key) not in table.pending for r in writers for key, task in asked[r]
    ):
        missing = [
            (r, q, key)
            for r in writers
            for key, q in world.diary.questions(table, r)
            if table.ask_id(q.task, r, key) not in table.pending
        ]
        return {"asks": [table.ask_question(r, q, key=key) for r, q, key in missing]}
    events = []
    for r in writers:
        answers = {task: table.pending[table.ask_id(task, r, key)] for key, task in asked[r]}
        events += world.diary.events(table, r, answers)
    return {"events": events, "pending": {CLEAR: True}}
