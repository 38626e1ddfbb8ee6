"""`Resolution`: what the round's proposals do in `adjudicate`, by code, after the control's
narration where the world has a narrator (`Narration`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.question import Question
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Resolution:
    """Resolution by code alone: a family's rules override `resolve`."""

    narrates: bool = False  # the control narrates each round's outcome before `resolve`
    task: str = "adjudicate"  # the narration's task

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        """The question to the control when the world `narrates` the outcome."""
        raise NotImplementedError("this resolution has no narrator")

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        """What the proposals (and the control's narration) do: a state update with `events`,
        `world` and, when the game ends, `done`."""
        return {}

    def prepare(self, table: Table) -> None:
        """As `Orders.prepare`: what `resolve` will need that depends only on the world's state
        (Diplomacy: the engine loaded at the position), made while seats wait for a model.
        Default: nothing."""


@dataclass(frozen=True)
class Narration(Resolution):
    """The control narrates what the plans lead to; its narration is the round's outcome."""

    narrates: bool = True

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        s = table.scenario
        variant = table.variant(s.control.name)
        nature = render_prompt("nature_clause", variant) if s.nature else ""
        return Question(
            task=self.task,
            question=render_prompt(
                "adjudicate_question",
                variant,
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                nature=nature,
            ),
            schema="adjudication",
            fallback={"narrative": f"The {s.timestep} passes; no side achieves a decisive change."},
            answer_start=f"In move {table.round},",
            reviewable=True,
        )

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        if narration is None:
            return {}
        return {"events": [self.narration_event(table, narration)]}

    def narration_event(self, table: Table, narration: dict[str, Any]) -> Any:
        return table.event(
            kind="narration",
            author=table.scenario.control.name,
            text=narration["value"]["narrative"],
            data={"source": narration["source"]},
        )
