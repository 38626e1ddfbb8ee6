"""The Secretary part: holds each proposal to the rules of `secretary` against the country's own
board and stick, asks for revisions with the reasons, then amends; a model or a person may also
review what the rules pass; each country hears its verdict."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from wargraph.graphs.waragent.orders import (
    action_question,
    dump,
    load,
    prompt_args,
    render_actions,
)
from wargraph.graphs.waragent.prompt_text import describe_board
from wargraph.graphs.waragent.scenario import war, world_of
from wargraph.graphs.waragent.scripted import scripted_proposal
from wargraph.graphs.waragent.secretary import amend, validate
from wargraph.kernel.state import Event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt
from wargraph.seats.asks import Seat
from wargraph.seats.schemas import register_schema
from wargraph.seats.scripted import stable_seed
from wargraph.worlds import Check, Question, Secretary

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.table import Table


class SecretaryVerdict(BaseModel):
    """The secretary's answer when it is a model or a person (after the rules have passed)."""

    valid: bool
    reason: str = Field(default="", max_length=300)


register_schema("waragent_verdict", SecretaryVerdict)


@dataclass(frozen=True)
class RulesSecretary(Secretary):
    """The rules judge first; after the last refused revision the secretary amends (drops what
    is invalid) so the game always moves on."""

    give_up_status: str = "amended"

    def max_revisions(self, table: Table) -> int:
        return war(table).waragent.secretary.max_revisions

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        s = war(table)
        actions = load(proposal)
        beliefs = world_of(table).beliefs[actor]
        verdict = validate(actor, actions, beliefs, s.countries, s.waragent.max_actions)
        return Check(accepted=proposal, reasons=[] if verdict.ok else [verdict.text(actions)])

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        s = war(table)
        text = render_prompt(
            "waragent_revise_question",
            table.variant(actor),
            **prompt_args(table, actor),
            proposal=quote(render_actions(load(proposal))),
            reasons=quote("\n".join(r if r.startswith("- ") else f"- {r}" for r in check.reasons)),
            attempt=attempt,
            limit=s.waragent.secretary.max_revisions,
        )
        # the scripted seat answers a revision with a valid set, so scripted games move on
        ask_id = table.ask_id("revise", actor, f"a{attempt}")
        rng = random.Random(stable_seed(table.context.seed, ask_id))
        board = world_of(table).beliefs[actor]
        valid = scripted_proposal(actor, board, s.countries, rng, s.waragent.max_actions)
        return action_question(
            table, "revise", text, scripted={"actions": dump(valid)}, actor=actor
        )

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        s = war(table)
        cfg = s.waragent
        kept, notes = amend(
            actor,
            load(proposal),
            world_of(table).beliefs[actor],
            s.countries,
            cfg.max_actions,
            cfg.secretary.ally_at_war,
        )
        return dump(kept), "; ".join(notes) or "nothing to drop"

    def seat(self, table: Table) -> str | None:
        s = war(table)
        seated = s.waragent.secretary.kind != "code" or s.control.name in table.context.humans
        return s.control.name if seated else None

    def seats(self, scenario: Scenario) -> list[str]:
        return [scenario.control.name]

    def review_question(self, table: Table, actor: str, proposal: Any, attempt: int) -> Question:
        s = war(table)
        sec = s.control.name
        board = quote(describe_board(world_of(table).beliefs[actor], actor))
        seat: Seat | None = None
        if s.waragent.secretary.kind == "human":
            seat = {"kind": "human"}
        elif s.waragent.secretary.model and sec not in table.context.humans:
            seat = {"model": s.waragent.secretary.model}
        return Question(
            task="review",
            # the secretary's own system prompt: it is no country
            system=render_prompt("waragent_secretary_system", table.variant(sec)),
            question=render_prompt(
                "waragent_secretary_question",
                table.variant(sec),
                country=actor,
                board=board,
                proposal=quote(render_actions(load(proposal))),
            ),
            schema="waragent_verdict",
            fallback={"valid": True, "reason": ""},
            seat=seat,
        )

    def verdict_events(
        self,
        table: Table,
        actor: str,
        status: str,
        attempts: int,
        note: str,
        trail: list,
        proposal: Any,
    ) -> list[Event]:
        """Every country hears its verdict, accepted at once or not."""
        if status == self.give_up_status:
            text = (
                f"The secretary amended your actions after {attempts} rejected revision(s): {note}"
            )
        elif attempts:
            text = f"The secretary accepted your actions after {attempts} revision(s)."
        else:
            text = "The secretary accepted your actions."
        data = {"status": status, "revisions": attempts, "notes": note, "trail": trail}
        return [self.verdict(table, actor, text, data, author=war(table).control.name)]
