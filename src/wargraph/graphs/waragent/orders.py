"""The Orders part: what a country is asked each round (up to `max_actions` actions, in a schema
that allows only known actions and countries) and how its answer becomes a proposal; a revision
the secretary asks for is the same question under another task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from wargraph.graphs.waragent.actions import NO_TARGET, Action, parse_actions, proposal_model
from wargraph.graphs.waragent.scenario import war
from wargraph.graphs.waragent.secretary import normalise
from wargraph.kernel.state import Event
from wargraph.prompts import render_prompt
from wargraph.seats.schemas import register_schema
from wargraph.worlds import Orders, Question

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

WAIT = {"actions": [{"type": "wait", "target": NO_TARGET, "message": ""}]}


def _actions_schema(args: dict[str, Any]) -> type[BaseModel]:
    return proposal_model(
        tuple(args.get("countries", ())),
        int(args.get("max_actions", 3)),
        int(args.get("message_chars", 300)),
    )


register_schema("waragent_actions", _actions_schema)


# A proposal is kept as JSON (`world["proposals"]`): a list of action dicts.
def dump(actions: list[Action]) -> list[dict[str, str]]:
    return [a.model_dump() for a in actions]


def load(raw: list[dict[str, Any]]) -> list[Action]:
    return [Action.model_validate(a) for a in raw]


def render_actions(actions: list[Action]) -> str:
    """A proposal as the secretary's prompts quote it, one action a line."""
    lines = []
    for a in actions:
        msg = f' "{a.message}"' if a.message.strip() else ""
        lines.append(f"{a.short()}{msg}")
    return "\n".join(lines) or "(none)"


def prompt_args(table: Table, country: str) -> dict[str, Any]:
    """What the act and revise questions both say: the round, the others, the limit and the
    country's way of thinking (its setting's analysis)."""
    s = war(table)
    return {
        "country": country,
        "round": table.round,
        "rounds": s.rounds,
        "timestep": s.timestep,
        "countries": ", ".join(c for c in s.countries if c != country),
        "max_actions": s.waragent.max_actions,
        "analysis": render_prompt(
            f"waragent_analysis_{s.setting_of(country)}", table.variant(country)
        ),
    }


def action_question(
    table: Table, task: str, question: str, scripted: Any = None, *, actor: str | None = None
) -> Question:
    """A question a country answers with actions (waiting, when it cannot answer); its messages'
    limit raised by the `actor`'s model profile (wargraph.models.profiles)."""
    s = war(table)
    chars = s.waragent.message_chars
    if actor is not None:
        chars = table.profile(actor).message_limit(chars)
    return Question(
        task=task,
        question=question,
        schema="waragent_actions",
        schema_args={
            "countries": s.countries,
            "max_actions": s.waragent.max_actions,
            "message_chars": chars,
        },
        fallback=WAIT,
        scripted=scripted,
    )


@dataclass(frozen=True)
class ActionOrders(Orders):
    """Every country proposes its actions for the round; they become events only when the
    round applies them (`SimultaneousRound`)."""

    task: str = "act"

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        text = render_prompt(
            "waragent_act_question", table.variant(actor), **prompt_args(table, actor)
        )
        return action_question(table, self.task, text, actor=actor)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        try:
            return dump(normalise(parse_actions(value)))
        except ValueError:
            return []

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        return []
