"""`adjudicate`: the control weaves this move's plans into what happens next (a narration for all)."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.prompts import render_prompt
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table


def narrate(
    table: Table,
    *,
    task: str = "adjudicate",
    system: str = "control_system",
    question: str = "adjudicate_question",
    variables: dict[str, Any] | None = None,
    fallback: str | None = None,
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Ask the control for a narrative (reviewable by a human umpire), then record it for all.

    Families reuse this with their own prompt templates and variables."""
    s = table.scenario
    control = s.control.name
    phase = table.state.get("phase", "adjudicate")
    decision = table.pending.get(f"r{table.round}.{phase}.{task}.{control}")
    if decision is None:
        variant = table.variant(control)
        nature = render_prompt("nature_clause", variant) if s.nature else ""
        values = {
            "round": table.round,
            "rounds": s.rounds,
            "timestep": s.timestep,
            "nature": nature,
        }
        ask = table.ask(
            control,
            task,
            system=render_prompt(system, variant),
            context=table.view_text(control),
            question=render_prompt(question, variant, **{**values, **(variables or {})}),
            schema="adjudication",
            fallback={
                "narrative": fallback
                or f"The {s.timestep} passes; no side achieves a decisive change."
            },
            reviewable=True,
        )
        return {"asks": [ask]}
    narration = make_event(
        round=table.round,
        phase=phase,
        kind="narration",
        author=control,
        text=decision["value"]["narrative"],
        data={"source": decision["source"], **(data or {})},
    )
    return {"events": [narration], "pending": {CLEAR: True}}


def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    return narrate(table)
