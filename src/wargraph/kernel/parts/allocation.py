"""Allocation games: a seat splits a whole-number budget over named keys (Blotto's fronts, a
bargain's shares). The flat answer schema (one whole number per key), the rules as functions
(what breaks them, and the give-up that scales an allocation down to the budget), and the parts
that ask for an allocation (`Allocate`) and check it (`BudgetCheck`), configured by one
`terms` function of the game."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, GetCoreSchemaHandler, create_model
from pydantic.config import JsonDict
from pydantic_core import CoreSchema, core_schema

from wargraph.kernel.parts.orders import Orders, in_turn
from wargraph.kernel.parts.secretary import Secretary
from wargraph.kernel.question import Check, Question
from wargraph.kernel.record import round_record
from wargraph.kernel.state import Event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

Allocation = dict[str, int]
ALLOCATION = "allocation"  # the built-in schema's name (registered by wargraph.nodes.schemas)


def allocation_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Flat: one integer field per key (`args["keys"]`; `fronts` in Blotto's older asks). The
    range 0..budget is a hint in the JSON schema (people and scripted seats read it; llama.cpp's
    grammar ignores it): the secretary, not the parser, refuses what breaks the rules, so an
    over-budget or negative answer gets reasons and a revision rather than a parse error."""
    hint: JsonDict = {"minimum": 0, "maximum": int(args.get("budget", 10))}
    keys = args.get("keys", args.get("fronts", []))
    fields: dict[str, Any] = {k: (int, Field(json_schema_extra=hint)) for k in keys}
    return create_model("Allocation", **fields)


KEY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")


@dataclass(frozen=True)
class Keys:
    """The keys of an allocation in a scenario section, each worth some points:
    `fronts: Annotated[dict[str, float], Keys("front")]`. A list of names is read as one point
    each; every key becomes a field of the answer schema, so it must be a short lower-case
    identifier (and no pydantic name), and worth more than 0 points."""

    noun: str = "key"  # what the errors call a key

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        checked = core_schema.no_info_after_validator_function(self._named, handler(source))
        return core_schema.no_info_before_validator_function(self._listed, checked)

    def _listed(self, value: Any) -> Any:
        if isinstance(value, list):  # the short form: every key worth one point
            if len(set(map(str, value))) != len(value):
                raise ValueError(f"a {self.noun} is named twice")
            return {str(name): 1 for name in value}
        return value

    def _named(self, keys: dict[str, float]) -> dict[str, float]:
        for name, points in keys.items():
            if not KEY_NAME.match(name) or hasattr(BaseModel, name):
                raise ValueError(
                    f"{self.noun} {name!r}: use a short lower-case name (letters, digits, _), "
                    "e.g. north_pass"
                )
            if points <= 0:
                raise ValueError(
                    f"{self.noun} {name!r}: worth {points} points; give it more than 0"
                )
        return keys


def whole(value: Any) -> int | None:
    """A whole number of units, or None (booleans and fractions are not units)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def check_allocation(
    allocation: Any, keys: list[str], budget: int, *, noun: str = "key", exact: bool = False
) -> tuple[Allocation, list[str]]:
    """The reasons an allocation breaks the rules (empty: it stands), each naming its problem,
    and what the give-up plays: bad entries count as 0, then the total is scaled down to the
    budget. `exact`: the total must be the budget, not at most it."""
    if not isinstance(allocation, dict):
        return {k: 0 for k in keys}, [f"not an allocation (got {type(allocation).__name__})"]
    reasons: list[str] = []
    kept: Allocation = {}
    unknown = [str(k) for k in allocation if k not in keys]
    if unknown:
        reasons.append(f"unknown {noun}(s) {', '.join(unknown)} ({noun}s: {', '.join(keys)})")
    for k in keys:
        units = whole(allocation.get(k))
        if k not in allocation:
            reasons.append(f"{k}: missing (give 0 to leave it empty)")
        elif units is None:
            reasons.append(f"{k}: {allocation[k]!r} is not a whole number of units")
        elif units < 0:
            reasons.append(f"{k}: {units} is negative")
        kept[k] = max(units or 0, 0)
    total = sum(kept.values())
    if total > budget:
        reasons.append(f"over budget: {total} units allocated, the budget is {budget}")
    elif exact and total < budget:
        reasons.append(f"under budget: {total} units allocated, allocate all {budget}")
    return scale_down(kept, budget), reasons


def spread(weights: Mapping[str, float], budget: int) -> Allocation:
    """The budget in whole units in proportion to the weights: floors first, then the units left
    go to the largest remainders (ties in key order), so the total is exactly the budget."""
    total = sum(Fraction(w) for w in weights.values()) or Fraction(1)
    exact = {k: Fraction(w) * budget / total for k, w in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    left = budget - sum(out.values())
    for k in sorted(weights, key=lambda k: -(exact[k] - out[k]))[:left]:
        out[k] += 1
    return out


def scale_down(allocation: Allocation, budget: int) -> Allocation:
    """Proportional to the budget when over it (`spread`); within the budget, as it is."""
    return spread(allocation, budget) if sum(allocation.values()) > budget else dict(allocation)


def even_split(keys: list[str], budget: int) -> Allocation:
    """The budget spread evenly, the first keys taking what does not divide."""
    share, extra = divmod(budget, len(keys))
    return {k: share + (i < extra) for i, k in enumerate(keys)}


def render_allocation(allocation: Allocation) -> str:
    return ", ".join(f"{k} {u}" for k, u in allocation.items())


def contest(
    allocations: dict[str, Allocation], keys: dict[str, float]
) -> tuple[dict[str, list[str]], dict[str, float]]:
    """A contest on every key (Colonel Blotto's): the side with the most units there takes its
    points, sides that tie share them. Who took each key (several when tied) and each side's
    points (rounded: thirds stay comparable)."""
    winners: dict[str, list[str]] = {}
    points = {side: 0.0 for side in allocations}
    for key, value in keys.items():
        force = {side: a.get(key, 0) for side, a in allocations.items()}
        best = max(force.values())
        winners[key] = [side for side, f in force.items() if f == best]
        for side in winners[key]:
            points[side] += value / len(winners[key])
    return winners, {s: round(p, 6) for s, p in points.items()}


def render_contest(allocations: dict[str, Allocation], winners: dict[str, list[str]]) -> str:
    """Each side's allocation, then who took each key (`west: north`, `east: tied by a and b`)."""
    lines = [f"{side}: {render_allocation(a)}" for side, a in allocations.items()]
    for key, won in winners.items():
        lines.append(f"{key}: " + (won[0] if len(won) == 1 else "tied by " + " and ".join(won)))
    return "\n".join(lines)


@dataclass(frozen=True)
class Terms:
    """What the seats allocate this round, as the game reads its scenario: the keys, the
    budget, the secretary's patience, the game's own values for its templates (beside `round`,
    `rounds`, `budget` and `side`), its public facts (the rules event's data, and what a bot
    seat reads beside `side`, `budget` and `last`: the last round's allocations), the answer
    schema and the game's word for a key."""

    keys: list[str]
    budget: int
    revisions: int = 0
    values: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    schema: str = ALLOCATION  # the answer schema's registered name (`allocation_schema`'s)
    noun: str = "key"  # what the secretary's reasons call a key (front, side ...)
    exact: bool = False  # the whole budget must be allocated (a split), not at most it

    def values_for(self, table: Table, seat: str) -> dict[str, Any]:
        """The values of a template asked of `seat` ("" for everyone)."""
        s = table.scenario
        return {
            "round": table.round,
            "rounds": s.rounds,
            "budget": self.budget,
            "side": seat,
            **self.values,
        }

    def question(self, table: Table, seat: str, task: str, text: str) -> Question:
        """An allocation asked of `seat` in the schema, the even split as the fallback, the
        facts for a bot."""
        return Question(
            task=task,
            question=text,
            schema=self.schema,
            schema_args={"keys": self.keys, "budget": self.budget},
            fallback=even_split(self.keys, self.budget),
            facts=self.facts_for(table, seat),
        )

    def facts_for(self, table: Table, seat: str) -> dict[str, Any] | None:
        """What a bot playing `seat` reads on its ask; None for any other seat."""
        return table.bot_facts(
            seat,
            lambda: {
                **self.facts,
                "side": seat,
                "budget": self.budget,
                "last": last_allocations(table),
            },
        )


TermsFn = Callable[["Table"], Terms]


def last_allocations(table: Table, kind: str = "result") -> dict[str, Allocation]:
    """The allocations the last round's result (an event of `kind`) made public: `{}` before."""
    results = [e for e in table.events if e["kind"] == kind]
    return dict(results[-1]["data"].get("allocations") or {}) if results else {}


def played(table: Table, proposals: dict[str, Any], terms: TermsFn) -> dict[str, Allocation]:
    """Every player's allocation as the rules play it: bad entries as 0, scaled down to the
    budget; a player with none (none should be missing) fields nothing."""
    t = terms(table)
    return {
        p: check_allocation(proposals.get(p, {}), t.keys, t.budget)[0]
        for p in table.scenario.players
    }


def allocation_question(
    table: Table, seat: str, task: str, template: str, terms: TermsFn, **values: Any
) -> Question:
    """An allocation asked of `seat`: the template rendered with the terms' values (and
    `values`); see `Terms.question`."""
    t = terms(table)
    text = render_prompt(template, table.variant(seat), **t.values_for(table, seat), **values)
    return t.question(table, seat, task, text)


def template_of(part: Any) -> str:
    """A part's `template`, which its family must name (a clear error where it did not)."""
    if not part.template:
        raise ValueError(f"{type(part).__name__}: name the template of its question (template=...)")
    return str(part.template)


def _no_terms(table: Table) -> Terms:
    raise NotImplementedError("an allocation part needs the game's `terms`")


@dataclass(frozen=True)
class Allocate(Orders):
    """Each actor answers one whole number per key (the `template` rendered with the terms'
    values); the allocation goes to the actor and the control (everyone when `public`) as an
    event of `kind`."""

    template: str = ""  # the family's template: no default text fits every game
    kind: str = "allocation"
    public: bool = False  # True: everyone sees the allocation at once (an offer)
    terms: TermsFn = _no_terms

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        return allocation_question(table, actor, self.task, template_of(self), self.terms)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return dict(value)

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        return [
            table.event(
                kind=self.kind,
                author=actor,
                text=f"{self.kind.capitalize()}: {render_allocation(proposal)}",
                audience=None if self.public else [actor, table.scenario.control.name],
                data={self.kind: proposal, "source": source},
            )
        ]


@dataclass(frozen=True)
class BudgetCheck(Secretary):
    """Refuses an allocation that breaks the rules with its reasons and asks again (the
    `template` rendered with the terms' values, `proposal`, `reasons`, `attempt`, `limit`), at
    most `terms.revisions` times; then scales it down to the budget."""

    give_up_status: str = "scaled"
    template: str = ""  # the family's template: no default text fits every game
    terms: TermsFn = _no_terms

    def max_revisions(self, table: Table) -> int:
        return self.terms(table).revisions

    def judges(self, table: Table, actor: str) -> bool:
        """Whether the actor's proposal is an allocation: placed by an `Allocate` mount (in a
        world of several mounts, another mount's answers, e.g. replies, pass unchecked)."""
        mount = (round_record(table.state.get("world")).get("placed_by") or {}).get(actor)
        return mount is None or isinstance(table.world.orders_at(mount), Allocate)

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        if not self.judges(table, actor):
            return Check(accepted=proposal)
        t = self.terms(table)
        scaled, reasons = check_allocation(proposal, t.keys, t.budget, noun=t.noun, exact=t.exact)
        return Check(accepted=proposal if not reasons else scaled, reasons=reasons)

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        shown = render_allocation(proposal) if isinstance(proposal, dict) else str(proposal)
        return allocation_question(
            table,
            actor,
            "revise",
            template_of(self),
            self.terms,
            proposal=quote(shown),
            reasons=quote("\n".join(f"- {r}" for r in check.reasons)),
            attempt=attempt,
            limit=self.max_revisions(table),
        )

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        why = "; ".join(check.reasons)
        return check.accepted, f"{why}; played as {render_allocation(check.accepted)}"


@dataclass(frozen=True)
class Replies(Orders):
    """A turn-based round's answers to an offer: every other player accepts or refuses the
    allocation the seat in turn offered (`in_turn`), each reply a public event of `kind`
    ("ann accepts"). The question is the `template` rendered with the terms' values, `proposer`,
    `offer` (rendered) and the seat's `share`; `schema` is a registered schema whose one field
    is the boolean `accept`."""

    turn: str = "others"
    template: str = ""  # the family's template: no default text fits every game
    schema: str = ""
    kind: str = "reply"
    terms: TermsFn = _no_terms

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        first, t = in_turn(table), self.terms(table)
        offer = round_record(table.state.get("world")).get("proposals", {})[first]
        text = render_prompt(
            template_of(self),
            table.variant(actor),
            **t.values_for(table, actor),
            proposer=first,
            offer=render_allocation(offer),
            share=offer.get(actor, 0),
        )
        return Question(
            task=self.task, question=text, schema=self.schema, fallback={"accept": False}
        )

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return bool(value.get("accept"))

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        text = f"{actor} {'accepts' if proposal else 'refuses'}"
        return [table.event(kind=self.kind, author=actor, text=text, data={"source": source})]
