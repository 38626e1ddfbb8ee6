"""Colonel Blotto: sides split a budget of forces across named fronts; each front goes to the
side with the most force there (a tie splits it), and the side with the most fronts won scores
most. A world written only against the public API (`wargraph`, `wargraph.worlds`): the guide
`docs/new-game.md` walks through it.

Rules the phases consult:
- negotiate / summarize: the defaults (messages between sides, a private diary);
- order: each side answers one whole number per front (a flat schema the small model's grammar
  can hold);
- secretary_validate: an allocation with a negative, missing or non-whole number, an unknown
  front, or more force than the budget is refused with its reasons and asked again, at most
  `blotto.revisions` times; then the documented give-up: bad entries count as 0 and the rest is
  scaled down proportionally to the budget (largest remainders, ties in front order);
- adjudicate: code scores every front; the control narrates the round from that result;
- analyze: the final score, then the scenario's questions.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from wargraph import Press, Scenario, Section, Table, World, register_schema
from wargraph.worlds import (
    Allocate,
    Allocation,
    BudgetCheck,
    FinalScore,
    Keys,
    Outcome,
    Result,
    Rules,
    ScoreCast,
    Terms,
    allocation_schema,
    played,
    render_allocation,
    score_measures,
)
from wargraph.worlds import check_allocation as _check

SCHEMA = "blotto_allocation"
register_schema(SCHEMA, allocation_schema)


class BlottoConfig(Section):
    """The fronts, what each is worth, the budget and the secretary's patience."""

    fronts: Annotated[dict[str, float], Keys("front")] = Field(min_length=2, max_length=8)
    """Front name -> points for taking it (a list of names is read as one point each)."""
    budget: int = Field(default=10, ge=1, le=1000)
    """Units each side allocates per round; unspent units are lost."""
    revisions: int = Field(default=1, ge=0, le=5)
    """How many times the secretary asks a side to fix a refused allocation before scaling it."""
    exchanges: int = Field(default=1, ge=0, le=5)
    """Negotiation exchanges per round (0: no talks)."""


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
    return _check(allocation, fronts, budget, noun="front")


def score_fronts(
    allocations: dict[str, Allocation], fronts: dict[str, float]
) -> tuple[dict[str, list[str]], dict[str, float]]:
    """Who takes each front (the most force; several when tied) and each side's points."""
    winners: dict[str, list[str]] = {}
    points = {side: 0.0 for side in allocations}
    for front, value in fronts.items():
        force = {side: a.get(front, 0) for side, a in allocations.items()}
        best = max(force.values())
        winners[front] = [side for side, f in force.items() if f == best]
        for side in winners[front]:
            points[side] += value / len(winners[front])
    return winners, {s: round(p, 6) for s, p in points.items()}


def terms(table: Table) -> Terms:
    """The fronts and budget every allocation is asked and checked against: the templates show
    the fronts with their points, the rules and the bots get the points."""
    cfg = BlottoConfig.of(table)
    shown = ", ".join(f"{f} ({p:g} point(s))" for f, p in cfg.fronts.items())
    return Terms(
        list(cfg.fronts), cfg.budget, cfg.revisions, {"fronts": shown}, {"fronts": dict(cfg.fronts)}
    )


class Talks(Press):
    def exchanges(self, table: Table) -> int:
        return BlottoConfig.of(table).exchanges


class Fronts(Outcome):
    """Code scores every front; the control narrates the round from that result."""

    def outcome(self, table: Table, proposals: dict[str, Any]) -> Result:
        allocations = played(table, proposals, terms)
        winners, points = score_fronts(allocations, BlottoConfig.of(table).fronts)
        lines = [f"{side}: {render_allocation(a)}" for side, a in allocations.items()]
        for front, won in winners.items():
            lines.append(
                f"{front}: " + (won[0] if len(won) == 1 else "tied by " + " and ".join(won))
            )
        told = [
            f"{' and '.join(w)} {'share' if len(w) > 1 else 'takes'} {f}"
            for f, w in winners.items()
        ]
        return Result(
            "\n".join(lines),
            {"allocations": allocations, "winners": winners},
            "The fronts are decided: " + "; ".join(told) + ".",
            points,
        )


# Fronts, a budget, a secretary that counts, and code that scores; the control narrates.
BLOTTO = World(
    "blotto",
    cast=ScoreCast(),
    opening=Rules(template="blotto_rules", terms=terms),
    press=Talks(),
    orders=Allocate(
        task="allocate", template="blotto_allocate_question", schema=SCHEMA, terms=terms
    ),
    secretary=BudgetCheck(
        template="blotto_revise_question", schema=SCHEMA, noun="front", terms=terms
    ),
    resolution=Fronts(task="narrate", template="blotto_narrate_question"),
    debrief=FinalScore(),
)


def record_measures(record: dict[str, Any], path: Any) -> dict[str, Any]:
    """The family's measures for experiments and reports (`Family.measures`)."""
    return score_measures(record, give_up_status=BLOTTO.secretary.give_up_status)
