"""The Security Council's rules. Seven members; the `council.permanent` ones hold a veto. Each
round's intelligence briefing is the scenario's inject of that round, to one member alone;
members whisper (private press: one member at a time); the round's penholder (the members in
turn, in the file's order) drafts; each other member answers the draft in turn, from the seat
after the penholder's, seeing the answers before its own; every member votes at once: yes, no or
abstain. The tellers (the secretary) refuse any other vote with the reason and ask again
(`council.revisions` times), then count it as an abstention (the give-up); they record a
permanent member's no as a veto. Code adjudicates: adopted with `council.majority` yes votes or
more and no veto; the control narrates that fixed result."""

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

import wargraph as wg
import wargraph.worlds as parts
from wargraph import Check, Question, Table, quote, render_prompt

VOTES = ("yes", "no", "abstain")
VOTE = "security_council_vote"
# the three votes are a hint (the grammar's enum), not a parse rule: the tellers refuse the rest
wg.register_schema(
    VOTE, create_model("Vote", vote=(str, Field(json_schema_extra={"enum": list(VOTES)})))
)


class CouncilConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    permanent: list[str] = Field(min_length=1)  # the members with a veto
    majority: int = Field(default=4, ge=1, le=7)  # yes votes to adopt
    revisions: int = Field(default=1, ge=0, le=3)  # the tellers' patience with a bad vote


class CouncilScenario(wg.Scenario):
    family: str = "security_council"
    council: CouncilConfig

    @model_validator(mode="after")
    def _members(self) -> "CouncilScenario":
        if len(self.players) != 7 or self.teams:
            raise ValueError("players: the Council has seven members and no teams")
        if unknown := sorted(set(self.council.permanent) - set(self.players)):
            raise ValueError(f"council.permanent: not members: {', '.join(unknown)}")
        if any(len(i.audience) != 1 or i.audience[0] not in self.players for i in self.injects):
            raise ValueError("injects: a briefing goes to one member alone")
        return self


def council(table: Table) -> CouncilConfig:
    return table.scenario_as(CouncilScenario).council


def penholder(table: Table) -> str:
    return list(table.scenario.players)[(table.round - 1) % len(table.scenario.players)]


def draft(table: Table) -> str:
    return wg.round_record(table.state["world"])["by_mount"]["draft"][penholder(table)]


def count(table: Table, proposals: dict[str, Any]) -> dict[str, Any]:
    """The vote in the members' order: yes votes, vetoes (a permanent member's no), adoption."""
    c, pen = council(table), penholder(table)
    votes = {m: proposals[m] for m in table.scenario.players}
    yes = sum(v == "yes" for v in votes.values())
    vetoes = [m for m, v in votes.items() if v == "no" and m in c.permanent]
    adopted = yes >= c.majority and not vetoes
    veto = f"; vetoed by {', '.join(vetoes)}" if vetoes else ""
    text = f"{pen}'s draft is {'' if adopted else 'not '}adopted ({yes} yes of {len(votes)}{veto})."
    return {"votes": votes, "yes": yes, "vetoes": vetoes, "adopted": adopted, "text": text}


class Draft(parts.Orders):
    def actors(self, table: Table) -> list[str]:
        return [penholder(table)]

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        text = render_prompt("security_council_draft", table.variant(actor), round=table.round)
        fallback = {"plan": "The Council calls on all parties to exercise restraint."}
        return Question(task=self.task, question=text, schema="plan", fallback=fallback)


class Debate(parts.Orders):
    """The members other than the penholder, from the seat after the penholder's, in turn."""

    def actors(self, table: Table) -> list[str]:
        members = list(table.scenario.players)  # the penholder's is seat round - 1
        return [members[(table.round + i) % len(members)] for i in range(len(members) - 1)]

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        values = {"penholder": penholder(table), "draft": quote(draft(table))}
        text = render_prompt("security_council_answer", table.variant(actor), **values)
        fallback = {"answer": "We need more time to study the draft."}
        return Question(task=self.task, question=text, schema="answer", fallback=fallback)


def vote_question(table: Table, actor: str, task: str, why: str = "") -> Question:
    veto = "As a permanent member, your no is a veto." if actor in council(table).permanent else ""
    values = {"penholder": penholder(table), "draft": quote(draft(table)), "veto": veto}
    text = why + render_prompt("security_council_vote", table.variant(actor), **values)
    return Question(task=task, question=text, schema=VOTE, fallback={"vote": "abstain"})


class Ballot(parts.Orders):
    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        return vote_question(table, actor, self.task)


class Tellers(parts.Secretary):
    def max_revisions(self, table: Table) -> int:
        return council(table).revisions

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        vote = str(proposal).strip().lower()
        if vote in VOTES:
            return Check(accepted=vote)
        return Check(accepted="abstain", reasons=[f"{quote(proposal)} is not yes, no or abstain"])

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        return vote_question(table, actor, "revise", f"The tellers refused: {check.reasons[0]}\n")

    def verdict_events(
        self,
        table: Table,
        actor: str,
        status: str,
        attempts: int,
        note: str,
        trail: list[Any],
        proposal: Any,
    ) -> list[wg.Event]:
        told = super().verdict_events(table, actor, status, attempts, note, trail, proposal)
        if proposal != "no" or actor not in council(table).permanent:
            return told
        text = f"The tellers record {actor}'s no as a veto."
        return [*told, table.event(kind="veto", author=self.name, text=text, key=actor)]


class Adoption(parts.Narration):
    """Code counts; the control is shown the fixed result and narrates it."""

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        control = table.scenario.control.name
        result = quote(count(table, proposals)["text"])
        text = render_prompt("security_council_narrate", table.variant(control), result=result)
        return replace(super().question(table, proposals), question=text)

    def resolve(self, table: Table, proposals: dict[str, Any], narration: Any) -> dict[str, Any]:
        done = {**count(table, proposals), "penholder": penholder(table), "draft": draft(table)}
        control = table.scenario.control.name
        outcome = table.event(kind="outcome", author=control, text=done["text"], data=done)
        return {"events": [outcome, self.narration_event(table, narration)]}


SECURITY_COUNCIL = wg.World(
    "security_council",
    press=parts.Press(audience="private"),
    orders={
        "draft": Draft(task="draft", kind="draft", public=True),
        "debate": Debate(task="answer", kind="answer", public=True, sequential=True),
        "vote": Ballot(task="vote", kind="vote", public=True),
    },
    secretary=Tellers(name="tellers", give_up_status="abstained"),
    resolution=Adoption(task="narrate"),
)


def record_measures(record: dict[str, Any], path: Any) -> dict[str, Any]:
    outcomes = [e["data"] for e in record["events"] if e["kind"] == "outcome"]
    adopted, vetoed = sum(o["adopted"] for o in outcomes), sum(bool(o["vetoes"]) for o in outcomes)
    return {"adopted": adopted, "vetoed": vetoed, "rounds": len(outcomes)}
