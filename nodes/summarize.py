"""`summarize`: each actor writes a private diary entry; it replaces the previous one in memory."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.nodes.negotiate import negotiators
from wargraph.prompts import render_prompt
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table


def summarize(state: GameState, table: Table) -> dict[str, Any]:
    writers = negotiators(table)
    ids = {r: f"r{table.round}.summarize.diary.{r}" for r in writers}
    if any(i not in table.pending for i in ids.values()):
        return {
            "asks": [
                table.ask(
                    r,
                    "diary",
                    system=render_prompt("player_system", table.variant(r)),
                    context=table.view_text(r),
                    question=render_prompt(
                        "summarize_question", table.variant(r), round=table.round
                    ),
                    schema="diary",
                    fallback={"summary": "Nothing new to note."},
                    memory_slot="diary",
                )
                for r in writers
                if ids[r] not in table.pending
            ]
        }
    events = [
        make_event(
            round=table.round,
            phase="summarize",
            kind="summary",
            author=r,
            text=table.pending[ids[r]]["value"]["summary"],
            audience=[r],
        )
        for r in writers
    ]
    return {"events": events, "pending": {CLEAR: True}}
