"""`analyze`: after the game the control answers the scenario's questions from the whole record."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.prompts import render_prompt
from wargraph.scenario import Question
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table
from wargraph.views import render_events


def question_ask(table: Table, q: Question, *, role: str, context: str):
    options = (
        "Choose one of: " + "; ".join(q.options) + '; or "undetermined" if the record does not say.'
        if q.options
        else ""
    )
    return table.ask(
        role,
        "question",
        key=q.id,
        system=render_prompt("control_system", table.variant(role)),
        context=context,
        question=render_prompt(
            "analyze_question", table.variant(role), question=q.text, options=options
        ),
        schema="choice" if q.options else "answer",
        schema_args={"options": q.options} if q.options else None,
        fallback={"choice": "undetermined", "evidence": ""}
        if q.options
        else {"answer": "undetermined"},
    )


def analyze(state: GameState, table: Table) -> dict[str, Any]:
    s = table.scenario
    control = s.control.name
    if not s.questions:
        return {}
    ids = {q.id: f"r{table.round}.analyze.question.{control}.{q.id}" for q in s.questions}
    if any(i not in table.pending for i in ids.values()):
        record = render_events(table.events)  # the control sees the whole record after the game
        return {
            "asks": [
                question_ask(table, q, role=control, context=record)
                for q in s.questions
                if ids[q.id] not in table.pending
            ]
        }
    events = []
    for q in s.questions:
        d = table.pending[ids[q.id]]
        v = d["value"]
        text = v.get("answer") or v.get("choice", "")
        events.append(
            make_event(
                round=table.round,
                phase="analyze",
                kind="answer",
                author=control,
                text=f"{q.text}\n{text}",
                data={"question": q.id, **v, "source": d["source"]},
                key=q.id,
            )
        )
    return {"events": events, "pending": {CLEAR: True}}
