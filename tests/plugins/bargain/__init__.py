"""A three-party alternating-offers bargaining game, written as a plug-in would write it. Each
round the side in turn offers a split of the pie, in public (`order` mounted as `propose`);
the secretary checks that the shares are whole, not negative and add up to the pie (one
revision, then an even split); the others accept or refuse (`order` mounted again as `respond`,
its own task); code adjudicates: everyone accepts and the deal is made, else the pie shrinks;
templates from this package's `prompts/`, measures in reports (`Family.measures`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, create_model

from wargraph import (
    Family,
    Option,
    Question,
    Scenario,
    Table,
    World,
    build_game,
    load_scenario,
    register_schema,
    render_prompt,
)
from wargraph.nodes.library import LIBRARY
from wargraph.worlds import (
    Allocate,
    BudgetCheck,
    Replies,
    Resolution,
    Terms,
    in_turn,
    render_allocation,
)

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
REPLY = "bargain_reply"
SCHEMAS = (REPLY,)  # what this plug-in registers (its offers: the built-in allocation schema)
register_schema(REPLY, create_model("Reply", accept=(bool, ...)))


class BargainScenario(Scenario):
    player_count = (3, 3)  # exactly three sides
    allows_teams = False
    family: str = "bargain"
    pie: int = Field(default=100, ge=1)
    shrink: float = Field(default=0.5, gt=0, lt=1)


def terms(table: Table) -> Terms:
    """The pie (as it has shrunk) split between the sides: whole, and all of it."""
    sides, pie = list(table.scenario.players), (table.state.get("world") or {}).get("pie")
    pie = int(pie or table.scenario.pie)
    values = {"sides": ", ".join(sides), "pie": pie, "next_pie": int(pie * table.scenario.shrink)}
    return Terms(sides, pie, revisions=1, values=values, noun="side", exact=True)


class Offers(Allocate):
    """The side in turn proposes a split, in public (mounted as `propose`), asked with this
    package's template."""

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        t = terms(table)
        text = render_prompt("bargain_offer", table.variant(actor), **t.values_for(table, actor))
        return t.question(table, actor, self.task, text)


class Shares(BudgetCheck):
    """An offer that is not a whole split of the pie: one revision, then an even split (the
    proposer keeps the remainder); the proposer hears which offer is played."""

    def give_up(self, table, actor, proposal, check) -> tuple[Any, str]:
        t = terms(table)
        split = {s: t.budget // len(t.keys) for s in t.keys}
        split[in_turn(table)] += t.budget - sum(split.values())
        return split, "; ".join(check.reasons)

    def verdict_events(self, table, actor, status, attempts, note, trail, proposal):
        if not self.judges(table, actor):
            return []
        text = (
            f"The secretary's verdict: {status}; the offer played is {render_allocation(proposal)}."
        )
        data = {"status": status, "revisions": attempts, "played": proposal}
        return [self.verdict(table, actor, text, data)]


class Deal(Resolution):
    """Everyone accepts: the deal is made; else the pie shrinks."""

    def resolve(self, table, proposals, narration) -> dict[str, Any]:
        first, pie, control = in_turn(table), terms(table).budget, table.scenario.control.name
        split = proposals[first]
        replies = {s: proposals[s] for s in table.scenario.players if s != first}
        if all(replies.values()):
            text, data = f"Deal: {render_allocation(split)}.", {"split": split, "pie": pie}
            event = table.event(kind="deal", author=control, text=text, data=data)
            return {"events": [event], "world": {"deal": split}, "done": True}
        smaller = int(pie * table.scenario.shrink)
        refused = ", ".join(sorted(s for s, yes in replies.items() if not yes))
        text = f"{refused} refused {first}'s offer; the pie shrinks to {smaller}."
        data = {"split": split, "pie": smaller}
        return {
            "events": [table.event(kind="refused", author=control, text=text, data=data)],
            "world": {"pie": smaller},
        }


BARGAIN = World(
    "bargain",
    orders={
        "propose": Offers(task="offer", kind="offer", public=True, turn="in_turn", terms=terms),
        "respond": Replies(task="reply", template="bargain_respond", schema=REPLY, terms=terms),
    },
    secretary=Shares(give_up_status="even", template="bargain_revise", terms=terms),
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
    sc, p = load_scenario(scenario), LIBRARY
    phases = {"propose": p["order"], "secretary_validate": p["secretary_validate"]}
    phases["respond"] = p["order"]
    if check_replies:  # the secretary mounted twice too (a test: it does not judge twice)
        phases["check_replies"] = p["secretary_validate"]
    phases["adjudicate"] = p["adjudicate"]
    return build_game(phases, roster=list(sc.roles), world=BARGAIN, scenario=sc)
