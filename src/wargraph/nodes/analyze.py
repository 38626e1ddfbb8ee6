"""`analyze`: after the game the control answers the scenario's questions from the whole record."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.question import Question
from wargraph.kernel.scenario import DebriefQuestion
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.schemas import record_quotes
from wargraph.nodes.seats import asks, control
from wargraph.prompts import render_prompt
from wargraph.seats.asks import Ask


def question_ask(table: Table, q: DebriefQuestion, *, role: str, context: str) -> Ask:
    options = (
        "Choose one of: " + "; ".join(q.options) + '; or "undetermined" if the record does not say.'
        if q.options
        else ""
    )
    asked = Question(
        task="question",
        system=render_prompt("control_system", table.variant(role)),
        question=render_prompt(
            "analyze_question", table.variant(role), question=q.text, options=options
        ),
        schema="choice" if q.options else "answer",
        schema_args={"options": q.options, "quotes": record_quotes(context)} if q.options else None,
        fallback={"choice": "undetermined", "evidence": ""}
        if q.options
        else {"answer": "undetermined"},
    )
    return table.ask_question(role, asked, key=q.id, context=context)


def _questioned(scenario: Any, world: Any) -> list[str]:
    return control(scenario, world) if scenario.questions else []


@asks(_questioned)
def analyze(state: GameState, table: Table) -> dict[str, Any]:
    """The world's debrief first (e.g. scores), then the scenario's questions to the control."""
    s = table.scenario
    who = s.control.name
    debrief_done = any(e["phase"] == table.phase for e in table.events)
    debrief = {} if debrief_done else table.world.debrief.debrief(table)
    if not s.questions:
        return debrief
    ids = {q.id: table.ask_id("question", who, q.id) for q in s.questions}
    if any(i not in table.pending for i in ids.values()):
        # the control sees the whole record after the game, the debrief included
        after = table.after({"events": list(debrief.get("events") or [])})
        record = after.view_text(who, policy="record")
        return {
            **debrief,
            "asks": [
                question_ask(table, q, role=who, context=record)
                for q in s.questions
                if ids[q.id] not in table.pending
            ],
        }
    events = []
    for q in s.questions:
        d = table.pending[ids[q.id]]
        v = d["value"]
        text = v.get("answer") or v.get("choice", "")
        events.append(
            table.event(
                kind="answer",
                author=who,
                text=f"{q.text}\n{text}",
                data={"question": q.id, **v, "source": d["source"]},
                key=q.id,
            )
        )
    return {"events": events, "pending": {CLEAR: True}}
