"""A three-party alternating-offers bargaining game, written as a plug-in would write it.

Each round the round's proposer (the sides in turn) proposes a split of the pie (`order` mounted
as `propose`); the secretary checks that the shares are whole and add up to the pie (one
revision, then an even split); the others accept or refuse (`order` mounted again as `respond`,
with its own answer task); code adjudicates: everyone accepts and the deal is made, else the
pie shrinks. The templates live in this package's `src/wargraph/prompts/` (`Family.prompts`), its measures
reach experiment reports through `Family.measures`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, create_model, model_validator

from wargraph.kernel.families import Family, Option
from wargraph.kernel.graphkit import build_game
from wargraph.kernel.scenario import Scenario, load_scenario
from wargraph.kernel.state import EVERYONE, Event
from wargraph.kernel.table import Table
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order
from wargraph.nodes.secretary_validate import secretary_validate
from wargraph.prompts import render_prompt
from wargraph.seats.schemas import register_schema
from wargraph.worlds import Check, Opening, Orders, Question, Resolution, Secretary, World

FAMILY = Family(
    "bargain",
    "tests.plugins.bargain:BargainScenario",
    "tests.plugins.bargain",
    "tests.plugins.bargain",
    "three-party alternating offers",
    prompts="tests.plugins.bargain.prompts",
    measures="tests.plugins.bargain:record_measures",
    play_options=(Option("--pie", "pie", "the pie to split", "N"),),  # wargraph play ... --pie 60
)
DEFAULT_SCENARIO = str(Path(__file__).with_name("three_way.yaml"))
SPLIT, REPLY = "bargain_split", "bargain_reply"
SCHEMAS = (SPLIT, REPLY)  # what this plug-in registers


class BargainScenario(Scenario):
    family: str = "bargain"
    pie: int = Field(default=100, ge=1)
    shrink: float = Field(default=0.5, gt=0, lt=1)

    @model_validator(mode="after")
    def _three(self) -> BargainScenario:
        if len(self.players) != 3 or self.teams:
            raise ValueError("players: bargaining needs exactly three sides and no teams")
        return self


register_schema(
    SPLIT,
    lambda args: create_model("Split", **{s: (int, Field(ge=0)) for s in args["sides"]}),
)
register_schema(REPLY, create_model("Reply", accept=(bool, ...)))


def _pie(table: Table) -> int:
    return int((table.state.get("world") or {}).get("pie", table.scenario.pie))


def proposer(table: Table) -> str:
    sides = list(table.scenario.players)
    return sides[(table.round - 1) % len(sides)]


def _shown(split: dict[str, int]) -> str:
    return ", ".join(f"{s} {n}" for s, n in split.items())


def _vars(table: Table) -> dict[str, Any]:
    pie = _pie(table)
    return {"round": table.round, "pie": pie, "next_pie": int(pie * table.scenario.shrink)}


def even(table: Table) -> dict[str, int]:
    """The give-up: the pie split evenly (the proposer keeps the remainder)."""
    sides, pie = list(table.scenario.players), _pie(table)
    split = {s: pie // len(sides) for s in sides}
    split[proposer(table)] += pie - sum(split.values())
    return split


def _split_question(table: Table, actor: str, task: str, extra: str = "") -> Question:
    sides = list(table.scenario.players)
    text = render_prompt(
        "bargain_offer", table.variant(actor), sides=", ".join(sides), **_vars(table)
    )
    return Question(
        task=task,
        question=text + extra,
        schema=SPLIT,
        schema_args={"sides": sides},
        fallback=even(table),
    )


def _public(table: Table, actor: str, kind: str, text: str, data: dict[str, Any]) -> Event:
    return table.event(
        kind=kind,
        author=actor,
        text=text,
        audience=[EVERYONE],
        data=data,
    )


class Pie(Opening):
    def open(self, table: Table) -> dict[str, Any]:
        return {"world": {"pie": table.scenario.pie}}


class Offers(Orders):
    """The round's proposer alone proposes a split (mounted as `propose`)."""

    def actors(self, table: Table) -> list[str]:
        return [proposer(table)]

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        return _split_question(table, actor, self.task)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return {s: value.get(s, 0) for s in table.scenario.players}

    def events(self, table, actor, proposal, source, *, team=None) -> list[Event]:
        text = f"{actor} offers {_shown(proposal)}"
        return [_public(table, actor, "offer", text, {"value": proposal, "source": source})]


class Replies(Orders):
    """The others accept or refuse the offer the secretary approved (mounted as `respond`)."""

    def actors(self, table: Table) -> list[str]:
        return [s for s in table.scenario.players if s != proposer(table)]

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        first = proposer(table)
        offer = (table.state.get("world") or {})["proposals"][first]
        text = render_prompt(
            "bargain_respond",
            table.variant(actor),
            proposer=first,
            offer=_shown(offer),
            share=offer.get(actor, 0),
            **_vars(table),
        )
        return Question(task=self.task, question=text, schema=REPLY, fallback={"accept": False})

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return bool(value.get("accept"))

    def events(self, table, actor, proposal, source, *, team=None) -> list[Event]:
        text = f"{actor} {'accepts' if proposal else 'refuses'}"
        return [_public(table, actor, "reply", text, {"value": proposal, "source": source})]


class Shares(Secretary):
    """An offer's shares must be whole and add up to the pie: one revision, then an even split."""

    def max_revisions(self, table: Table) -> int:
        return 1

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        if isinstance(proposal, bool):  # a reply (when the replies are checked too)
            return Check(accepted=proposal)
        pie, total = _pie(table), sum(proposal.values())
        if total == pie and all(n >= 0 for n in proposal.values()):
            return Check(accepted=proposal)
        return Check(accepted=proposal, reasons=[f"the shares add up to {total}, not {pie}"])

    def revise_question(self, table, actor, proposal, check, attempt) -> Question:
        return _split_question(table, actor, "revise", "\n" + "; ".join(check.reasons))

    def give_up(self, table, actor, proposal, check) -> tuple[Any, str]:
        return even(table), "; ".join(check.reasons)

    def verdict_events(self, table, actor, status, attempts, note, trail, proposal) -> list[Event]:
        if isinstance(proposal, bool):
            return []
        text = f"The secretary's verdict: {status}; the offer played is {_shown(proposal)}."
        data = {"status": status, "revisions": attempts, "played": proposal}
        return [self.verdict(table, actor, text, data)]


class Deal(Resolution):
    """Everyone accepts: the deal is made; else the pie shrinks."""

    def resolve(self, table, proposals, narration) -> dict[str, Any]:
        first, pie, control = proposer(table), _pie(table), table.scenario.control.name
        split = proposals[first]
        replies = {s: proposals[s] for s in table.scenario.players if s != first}
        if all(replies.values()):
            event = _public(
                table, control, "deal", f"Deal: {_shown(split)}.", {"split": split, "pie": pie}
            )
            return {"events": [event], "world": {"deal": split}, "done": True}
        smaller = int(pie * table.scenario.shrink)
        refused = sorted(s for s, yes in replies.items() if not yes)
        text = f"{', '.join(refused)} refused {first}'s offer; the pie shrinks to {smaller}."
        event = _public(table, control, "refused", text, {"split": split, "pie": smaller})
        return {"events": [event], "world": {"pie": smaller}}


BARGAIN = World(
    "bargain",
    opening=Pie(),
    orders={"propose": Offers(task="offer"), "respond": Replies(task="reply")},
    secretary=Shares(give_up_status="even"),
    resolution=Deal(),
)


def record_measures(record: dict[str, Any], path: Path) -> dict[str, Any]:
    events = record.get("events") or []
    deals = [e["data"] for e in events if e["kind"] == "deal"]
    offers = [e for e in events if e["kind"] == "offer"]
    return {
        "offers": len(offers),
        "agreed": bool(deals),
        "share": deals[0]["split"] if deals else {},
    }


def build(scenario: Any = DEFAULT_SCENARIO, *, check_replies: bool = False):
    sc = load_scenario(scenario)
    phases = {
        "propose": order,
        "secretary_validate": secretary_validate,
        "respond": order,
        # the secretary mounted twice too (a test: what it judged before is not judged again)
        **({"check_replies": secretary_validate} if check_replies else {}),
        "adjudicate": adjudicate,
    }
    return build_game(phases, roster=list(sc.roles), world=BARGAIN, scenario=sc)
