"""Colonel Blotto: sides split a budget of forces across named fronts; each front goes to the
side with the most force there (a tie splits its points). Each round: talks and a private diary
(the defaults); each side answers one whole number per front (a flat schema the small model's
grammar can hold); the secretary refuses a negative, missing or non-whole number, an unknown
front or more force than the budget with its reasons and asks again, at most `blotto.revisions`
times, then gives up: bad entries count as 0 and the rest is scaled down proportionally to the
budget (largest remainders, ties in front order); code scores the fronts and the control
narrates that result. After the last round: the final score, then the scenario's questions.
Written only against the public API; `docs/new-game.md` walks through it."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from wargraph import Scenario, Section, Table, World
from wargraph.worlds import (
    ALLOCATION,
    Allocate,
    Allocation,
    BudgetCheck,
    FinalScore,
    Keys,
    Outcome,
    Press,
    Result,
    Rules,
    ScoreCast,
    Terms,
    contest,
    played,
    render_contest,
    score_measures,
)
from wargraph.worlds import check_allocation as _check

SCHEMA = ALLOCATION  # the built-in schema: one whole number per front


class BlottoConfig(Section):
    """The fronts, what each is worth, the budget and the secretary's patience."""

    # front -> points for taking it (a list of names: one point each)
    fronts: Annotated[dict[str, float], Keys("front")] = Field(min_length=2, max_length=8)
    budget: int = Field(default=10, ge=1, le=1000)  # units a side allocates a round (unspent: lost)
    revisions: int = Field(default=1, ge=0, le=5)  # the secretary's asks before it scales down
    exchanges: int = Field(default=1, ge=0, le=5)  # negotiation exchanges a round (0: no talks)


class BlottoScenario(Scenario):
    """Two to six sides (players, no teams, no flow) and the `blotto:` section."""

    player_count = (2, 6)
    allows_teams = allows_flow = False
    family: str = "blotto"
    rounds: int = Field(default=3, ge=1, le=50)
    timestep: str = "one week"
    blotto: BlottoConfig


def check_allocation(
    allocation: Any, fronts: list[str], budget: int
) -> tuple[Allocation, list[str]]:
    """The secretary's reasons in Blotto's words, and what its give-up plays (`BudgetCheck`)."""
    return _check(allocation, fronts, budget, noun="front")


# the rule that scores a round: each front to the most force there, a tie shares its points
score_fronts = contest


def terms(table: Table) -> Terms:
    """The fronts and budget every allocation is asked and checked against: the templates show
    the fronts with their points, the rules and the bots get the points."""
    cfg = BlottoConfig.of(table)
    shown = ", ".join(f"{f} ({p:g} point(s))" for f, p in cfg.fronts.items())
    facts = {"fronts": dict(cfg.fronts)}
    return Terms(
        list(cfg.fronts), cfg.budget, cfg.revisions, {"fronts": shown}, facts, noun="front"
    )


class Talks(Press):
    def exchanges(self, table: Table) -> int:
        return BlottoConfig.of(table).exchanges


class Fronts(Outcome):
    """Code scores every front; the control narrates the round from that result."""

    def outcome(self, table: Table, proposals: dict[str, Any]) -> Result:
        allocations = played(table, proposals, terms)
        winners, points = score_fronts(allocations, BlottoConfig.of(table).fronts)
        told = "; ".join(
            f"{' and '.join(w)} {'share' if len(w) > 1 else 'takes'} {f}"
            for f, w in winners.items()
        )
        data = {"allocations": allocations, "winners": winners}
        fallback = f"The fronts are decided: {told}."
        return Result(render_contest(allocations, winners), data, fallback, points)


# Fronts, a budget, a secretary that counts, and code that scores; the control narrates.
BLOTTO = World(
    "blotto",
    cast=ScoreCast(),
    opening=Rules(template="blotto_rules", terms=terms),
    press=Talks(),
    orders=Allocate(task="allocate", template="blotto_allocate_question", terms=terms),
    secretary=BudgetCheck(template="blotto_revise_question", terms=terms),
    resolution=Fronts(task="narrate", template="blotto_narrate_question"),
    debrief=FinalScore(),
)


def record_measures(record: dict[str, Any], path: Any) -> dict[str, Any]:
    """The family's measures for experiments and reports (`Family.measures`)."""
    return score_measures(record, give_up_status=BLOTTO.secretary.give_up_status)
