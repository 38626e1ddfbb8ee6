"""Colonel Blotto: sides split a budget of forces across named fronts; each front goes to the
side with the most force there (a tie splits it), and the side with the most fronts won scores
most. A world written only against the public kernel API (`World`, `Question`, `Check`,
`Table`, `make_event`, `register_schema`): the guide `docs/new-game.md` walks through it.

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

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator
from pydantic.config import JsonDict

from wargraph.kernel.scenario import Scenario
from wargraph.kernel.state import EVERYONE, Event, make_event
from wargraph.kernel.table import Table
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt
from wargraph.seats.bots import is_bot
from wargraph.seats.schemas import register_schema
from wargraph.worlds import (
    Cast,
    Check,
    Debrief,
    Narration,
    Opening,
    Orders,
    Press,
    Question,
    Secretary,
    World,
)

FRONT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")
SCHEMA = "blotto_allocation"

Allocation = dict[str, int]


# --- the scenario's `blotto:` section ------------------------------------------------------------


class BlottoConfig(BaseModel):
    """The fronts, what each is worth, the budget and the secretary's patience."""

    model_config = ConfigDict(extra="forbid")

    fronts: dict[str, float] = Field(min_length=2, max_length=8)
    """Front name -> points for taking it (a list of names is read as one point each)."""
    budget: int = Field(default=10, ge=1, le=1000)
    """Units each side allocates per round; unspent units are lost."""
    revisions: int = Field(default=1, ge=0, le=5)
    """How many times the secretary asks a side to fix a refused allocation before scaling it."""
    exchanges: int = Field(default=1, ge=0, le=5)
    """Negotiation exchanges per round (0: no talks)."""

    @field_validator("fronts", mode="before")
    @classmethod
    def _fronts(cls, v: Any) -> Any:
        if isinstance(v, list):  # the short form: every front worth one point
            if len(set(map(str, v))) != len(v):
                raise ValueError("a front is named twice")
            return {str(name): 1 for name in v}
        return v

    @field_validator("fronts")
    @classmethod
    def _front_names(cls, fronts: dict[str, float]) -> dict[str, float]:
        for name, points in fronts.items():
            # a front is a field of the answer schema: a lower-case identifier, not a pydantic name
            if not FRONT_NAME.match(name) or hasattr(BaseModel, name):
                raise ValueError(
                    f"front {name!r}: use a short lower-case name (letters, digits, _), "
                    "e.g. north_pass"
                )
            if points <= 0:
                raise ValueError(f"front {name!r}: worth {points} points; give it more than 0")
        return fronts


class BlottoScenario(Scenario):
    """Two to six sides (players, no teams) and the `blotto:` section."""

    family: str = "blotto"
    rounds: int = Field(default=3, ge=1, le=50)
    timestep: str = "one week"
    blotto: BlottoConfig

    @model_validator(mode="after")
    def _sides(self) -> BlottoScenario:
        if not 2 <= len(self.players) <= 6:
            raise ValueError(f"players: Blotto needs 2 to 6 sides (got {len(self.players)})")
        if self.teams:
            raise ValueError("teams: in Blotto every side is one player; remove the teams")
        if self.flow is not None:
            raise ValueError("flow: a Blotto game has its own phases; remove the flow section")
        return self

    @property
    def sides(self) -> list[str]:
        return list(self.players)


def _blotto(table: Table) -> BlottoScenario:
    return table.scenario_as(BlottoScenario)


# --- the answer schema: one whole number per front -------------------------------------------------


def allocation_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Flat: one integer field per front. The range is a hint in the JSON schema (people and
    scripted seats read it; llama-cpp-python's grammar ignores it); the secretary, not the
    parser, refuses what breaks the rules, so an over-budget or negative answer gets reasons
    and a revision rather than a parse error."""
    budget = int(args.get("budget", 10))
    hint: JsonDict = {"minimum": 0, "maximum": budget}
    fields: dict[str, Any] = {
        name: (int, Field(json_schema_extra=hint)) for name in args.get("fronts", [])
    }
    return create_model("Allocation", **fields)


register_schema(SCHEMA, allocation_schema)


# --- the rules as functions --------------------------------------------------------------------------


def _whole(v: Any) -> int | None:
    """A whole number of units, or None (booleans and fractions are not units)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def check_allocation(
    allocation: Any, fronts: list[str], budget: int
) -> tuple[Allocation, list[str]]:
    """The reasons an allocation breaks the rules (empty: it stands) and what the give-up plays:
    bad entries count as 0, then the total is scaled down to the budget."""
    if not isinstance(allocation, dict):
        return {f: 0 for f in fronts}, [f"not an allocation (got {type(allocation).__name__})"]
    reasons: list[str] = []
    kept: Allocation = {}
    unknown = [str(k) for k in allocation if k not in fronts]
    if unknown:
        reasons.append(f"unknown front(s) {', '.join(unknown)} (fronts: {', '.join(fronts)})")
    for f in fronts:
        units = _whole(allocation.get(f))
        if f not in allocation:
            reasons.append(f"{f}: missing (give 0 to leave it empty)")
        elif units is None:
            reasons.append(f"{f}: {allocation[f]!r} is not a whole number of units")
        elif units < 0:
            reasons.append(f"{f}: {units} is negative")
        kept[f] = max(units or 0, 0)
    total = sum(kept.values())
    if total > budget:
        reasons.append(f"over budget: {total} units allocated, the budget is {budget}")
    return scale_down(kept, budget), reasons


def scale_down(allocation: Allocation, budget: int) -> Allocation:
    """Proportional to the budget when over it: floors first, then the units left go to the
    largest remainders (ties in front order), so the total is exactly the budget."""
    total = sum(allocation.values())
    if total <= budget:
        return dict(allocation)
    floors = {f: u * budget // total for f, u in allocation.items()}
    left = budget - sum(floors.values())
    order = sorted(allocation, key=lambda f: -(allocation[f] * budget % total))
    for f in order[:left]:
        floors[f] += 1
    return floors


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


def render_allocation(allocation: Allocation) -> str:
    return ", ".join(f"{f} {u}" for f, u in allocation.items())


def render_result(
    allocations: dict[str, Allocation], winners: dict[str, list[str]], points: dict[str, float]
) -> str:
    lines = [f"{side}: {render_allocation(a)}" for side, a in allocations.items()]
    for front, won in winners.items():
        lines.append(f"{front}: " + (won[0] if len(won) == 1 else "tied by " + " and ".join(won)))
    lines.append("points this round: " + ", ".join(f"{s} {p:g}" for s, p in points.items()))
    return "\n".join(lines)


def _standing(scores: dict[str, float]) -> str:
    return ", ".join(f"{s} {p:g}" for s, p in scores.items())


def leaders(scores: dict[str, float]) -> list[str]:
    best = max(scores.values(), default=0.0)
    return [s for s, p in scores.items() if p == best]


# --- the world: its parts -------------------------------------------------------------------


def _vars(table: Table, side: str) -> dict[str, Any]:
    cfg = _blotto(table).blotto
    return {
        "round": table.round,
        "rounds": table.scenario.rounds,
        "budget": cfg.budget,
        "fronts": ", ".join(f"{f} ({p:g} point(s))" for f, p in cfg.fronts.items()),
        "side": side,
    }


def _allocation_question(table: Table, side: str, task: str, question: str) -> Question:
    cfg = _blotto(table).blotto
    return Question(
        task=task,
        question=question,
        schema=SCHEMA,
        schema_args={"fronts": list(cfg.fronts), "budget": cfg.budget},
        fallback=even_split(list(cfg.fronts), cfg.budget),
        facts=_bot_facts(table, side),
    )


def _scores(table: Table) -> dict[str, float]:
    return dict((table.state.get("world") or {}).get("scores") or {})


class Rules(Opening):
    """The rules are public: every side (and the control) reads them from round 0."""

    def open(self, table: Table) -> dict[str, Any]:
        s = _blotto(table)
        rules = make_event(
            round=0,
            phase="setup",
            kind="rules",
            author="scenario",
            text=render_prompt("blotto_rules", s.prompt_variant, **_vars(table, "")),
            data={"fronts": s.blotto.fronts, "budget": s.blotto.budget},
        )
        return {
            "events": [*table.state["events"], rules],
            "world": {"scores": {side: 0.0 for side in s.sides}},
        }


class Sides(Cast):
    def private_view(self, table: Table, role: str) -> str:
        scores = _scores(table)
        return f"Score so far: {_standing(scores)}." if scores else ""


class Talks(Press):
    def exchanges(self, table: Table) -> int:
        return _blotto(table).blotto.exchanges


class Allocations(Orders):
    """One whole number per front; an allocation goes to its side and the control."""

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        text = render_prompt(
            "blotto_allocate_question", table.variant(actor), **_vars(table, actor)
        )
        return _allocation_question(table, actor, self.task, text)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return dict(value)

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        return [
            table.event(
                kind="allocation",
                author=actor,
                text=f"Allocation: {render_allocation(proposal)}",
                audience=[actor, table.scenario.control.name],
                data={"allocation": proposal, "source": source},
            )
        ]


class Budget(Secretary):
    """Refuses a bad allocation with its reasons, asks again, then scales it down."""

    def max_revisions(self, table: Table) -> int:
        return _blotto(table).blotto.revisions

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        cfg = _blotto(table).blotto
        scaled, reasons = check_allocation(proposal, list(cfg.fronts), cfg.budget)
        return Check(accepted=proposal if not reasons else scaled, reasons=reasons)

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        shown = render_allocation(proposal) if isinstance(proposal, dict) else str(proposal)
        text = render_prompt(
            "blotto_revise_question",
            table.variant(actor),
            **_vars(table, actor),
            proposal=quote(shown),
            reasons=quote("\n".join(f"- {r}" for r in check.reasons)),
            attempt=attempt,
            limit=self.max_revisions(table),
        )
        return _allocation_question(table, actor, "revise", text)

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        why = "; ".join(check.reasons)
        return check.accepted, f"{why}; played as {render_allocation(check.accepted)}"


def _outcome(
    table: Table, proposals: dict[str, Any]
) -> tuple[dict[str, Allocation], dict[str, list[str]], dict[str, float]]:
    s = _blotto(table)
    fronts, budget = list(s.blotto.fronts), s.blotto.budget
    # a side with no accepted allocation (none should be missing) fields nothing
    allocations = {
        side: check_allocation(proposals.get(side, {}), fronts, budget)[0] for side in s.sides
    }
    winners, points = score_fronts(allocations, s.blotto.fronts)
    return allocations, winners, points


class Fronts(Narration):
    """Code scores every front; the control narrates the round from that result."""

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        s = _blotto(table)
        control = s.control.name
        allocations, winners, points = _outcome(table, proposals)
        return Question(
            task=self.task,
            system=render_prompt("control_system", table.variant(control)),
            question=render_prompt(
                "blotto_narrate_question",
                table.variant(control),
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                result=quote(render_result(allocations, winners, points)),
            ),
            schema="adjudication",
            fallback={"narrative": _plain_narrative(winners)},
            reviewable=True,
        )

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        s = _blotto(table)
        allocations, winners, points = _outcome(table, proposals)
        before = _scores(table)
        scores = {side: round(before.get(side, 0.0) + points[side], 6) for side in s.sides}
        result = table.event(
            kind="result",
            author=s.control.name,
            text=render_result(allocations, winners, points) + f"\nscore: {_standing(scores)}",
            data={
                "allocations": allocations,
                "winners": winners,
                "points": points,
                "scores": scores,
            },
        )
        told = table.event(
            kind="narration",
            author=s.control.name,
            text=narration["value"]["narrative"] if narration else _plain_narrative(winners),
            data={"source": narration["source"] if narration else "fallback"},
        )
        return {"events": [result, told], "world": {"scores": scores}}


class FinalScore(Debrief):
    def debrief(self, table: Table) -> dict[str, Any]:
        scores = _scores(table)
        won = leaders(scores)
        verdict = f"{won[0]} wins" if len(won) == 1 else "a draw between " + " and ".join(won)
        event = table.event(
            kind="score",
            author=table.scenario.control.name,
            text=f"Final score: {_standing(scores)}; {verdict}.",
            audience=[EVERYONE],
            data={"scores": scores, "winners": won},
        )
        return {"events": [event]}


# Fronts, a budget, a secretary that counts, and code that scores; the control narrates.
BLOTTO = World(
    "blotto",
    cast=Sides(),
    opening=Rules(),
    press=Talks(),
    orders=Allocations(task="allocate"),
    secretary=Budget(give_up_status="scaled"),
    resolution=Fronts(task="narrate"),
    debrief=FinalScore(),
)


def _bot_facts(table: Table, side: str) -> dict[str, Any] | None:
    """What a bot seat reads (wargraph.seats.bots): the fronts, the budget and last round's public
    allocations; only on a bot's ask."""
    if not is_bot(table.seat(side).get("model")):
        return None
    cfg = _blotto(table).blotto
    results = [e for e in table.state.get("events", []) if e["kind"] == "result"]
    last = results[-1]["data"]["allocations"] if results else {}
    return {"side": side, "fronts": dict(cfg.fronts), "budget": cfg.budget, "last": last}


def even_split(fronts: list[str], budget: int) -> Allocation:
    """The documented fallback of an allocation question: the budget spread evenly."""
    share, extra = divmod(budget, len(fronts))
    return {f: share + (i < extra) for i, f in enumerate(fronts)}


def _plain_narrative(winners: dict[str, list[str]]) -> str:
    parts = [
        f"{' and '.join(w)} {'share' if len(w) > 1 else 'takes'} {front}"
        for front, w in winners.items()
    ]
    return "The fronts are decided: " + "; ".join(parts) + "."


def record_measures(record: dict[str, Any], path: Any) -> dict[str, Any]:
    """The family's measures for experiments and reports (`Family.measures`)."""
    events = record.get("events") or []
    results = [e for e in events if e["kind"] == "result"]
    verdicts = [e for e in events if e["kind"] == "verdict" and "status" in e.get("data", {})]
    scores = results[-1]["data"]["scores"] if results else {}
    return {
        "rounds": len(results),
        "scores": scores,
        "winners": leaders(scores) if scores else [],
        "revisions": sum(int(e["data"].get("revisions", 0)) for e in verdicts),
        "scaled": sum(e["data"]["status"] == BLOTTO.secretary.give_up_status for e in verdicts),
    }
