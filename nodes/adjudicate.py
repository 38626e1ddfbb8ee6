"""`adjudicate`: the control weaves this move's plans into what happens next (a narration for all)."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.prompts import render_prompt

from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table


def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    s = table.scenario
    control = s.control.name
    ask_id = f"r{table.round}.adjudicate.adjudicate.{control}"
    decision = table.pending.get(ask_id)
    if decision is None:
        nature = render_prompt("nature_clause", table.variant(control)) if s.nature else ""
        ask = table.ask(
            control,
            "adjudicate",
            system=render_prompt("control_system", table.variant(control)),
            context=table.view_text(control),
            question=render_prompt(
                "adjudicate_question",
                table.variant(control),
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                nature=nature,
            ),
            schema="adjudication",
            fallback={"narrative": f"The {s.timestep} passes; no side achieves a decisive change."},
            reviewable=True,
        )
        return {"asks": [ask]}
    narration = make_event(
        round=table.round,
        phase="adjudicate",
        kind="narration",
        author=control,
        text=decision["value"]["narrative"],
        data={"source": decision["source"]},
    )
    return {"events": [narration], "pending": {CLEAR: True}}
