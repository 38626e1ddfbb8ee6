"""The tabletop exercise (HAIWIRE style): an incident-response drill about AI systems.

The control draws an incident card (seeded by the run's seed), then deals inject cards one by
one; the incident's severity sets how many. After each inject the responder (one player or a
team, whose members propose and whose leader combines: the kernel's `order` phase) states its
response, a die decides whether it resolved the situation, and the control narrates the outcome.
A full success ends play early. The control answers the debrief questions at the end.

Phases: draw_incident -> inject -> respond -> roll -> adjudicate (-> inject ...), then analyze.
"""

from __future__ import annotations

import random
from typing import Any

from langgraph.graph import END, StateGraph
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from wargraph.deciders import stable_seed
from wargraph.graphkit import build_game
from wargraph.nodes.adjudicate import narrate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.order import order
from wargraph.scenario import MemoryPolicy, Scenario, ScenarioError, load_scenario
from wargraph.state import GameState, make_event
from wargraph.table import Table

DEFAULT_SCENARIO = "haiwire"

SEVERITY_NAMES = {"low": 1, "medium": 2, "high": 3}
OUTCOMES = ("success", "partial", "failure")


# --- the scenario's `tabletop:` section ------------------------------------------------------


class IncidentCard(BaseModel):
    """An incident: what went wrong with an AI system, and how bad it is (1 low .. 3 high)."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    title: str = Field(min_length=1)
    text: str = Field(min_length=1)
    severity: int

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, v: Any) -> Any:
        # Why: designers write "high" as often as 3; both mean the same card.
        if isinstance(v, str) and v.strip().lower() in SEVERITY_NAMES:
            return SEVERITY_NAMES[v.strip().lower()]
        if isinstance(v, bool) or v not in (1, 2, 3, "1", "2", "3"):
            raise ValueError("severity must be 1 (low), 2 (medium) or 3 (high)")
        return int(v)


class InjectCard(BaseModel):
    """A development that lands on the responders while they handle the incident."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    text: str = Field(min_length=1)


class TabletopConfig(BaseModel):
    """The decks, the die and the rules that tie severity to the number of injects."""

    model_config = ConfigDict(extra="forbid")

    incidents: list[IncidentCard]
    injects: list[InjectCard]
    die: int = Field(default=20, ge=2, le=100)
    """Sides of the die rolled after each response."""
    success: int = Field(default=15, ge=1)
    """A roll of at least this is a full success: the incident is resolved and play stops."""
    partial: int | None = Field(default=None, ge=1)
    """A roll of at least this (below `success`) is a partial success; play goes on."""
    injects_by_severity: dict[int, int] = Field(default_factory=lambda: {1: 2, 2: 3, 3: 4})
    """How many injects follow an incident of each severity (capped by the scenario's rounds)."""
    incident: str | None = None
    """Play this incident card (by id) instead of drawing one."""

    @field_validator("incidents")
    @classmethod
    def _incident_deck(cls, cards: list[IncidentCard]) -> list[IncidentCard]:
        if not cards:
            raise ValueError(
                "the incident deck is empty: add at least one card (title, text, severity)"
            )
        return _name_cards(cards, "i", "incident")

    @field_validator("injects")
    @classmethod
    def _inject_deck(cls, cards: list[InjectCard]) -> list[InjectCard]:
        if not cards:
            raise ValueError("the inject deck is empty: add at least one card (text)")
        return _name_cards(cards, "j", "inject")

    # Field validators run in field order, so each check below can read the fields before it;
    # an error then names its own field (tabletop.success, ...), not the whole section.

    @field_validator("success")
    @classmethod
    def _success(cls, v: int, info: ValidationInfo) -> int:
        die = info.data.get("die")
        if die is not None and v > die:
            raise ValueError(f"cannot be rolled on a d{die} (use 1..{die})")
        return v

    @field_validator("partial")
    @classmethod
    def _partial(cls, v: int | None, info: ValidationInfo) -> int | None:
        success = info.data.get("success")
        if v is not None and success is not None and v >= success:
            raise ValueError(f"{v} must be below success ({success}); leave it out for no partial")
        return v

    @field_validator("injects_by_severity")
    @classmethod
    def _counts(cls, counts: dict[int, int], info: ValidationInfo) -> dict[int, int]:
        for sev, n in counts.items():
            if sev not in (1, 2, 3):
                raise ValueError(f"unknown severity {sev} (severities are 1, 2 and 3)")
            if n < 1:
                raise ValueError(f"severity {sev}: at least one inject must follow (got {n})")
        for card in info.data.get("incidents") or []:
            if card.severity not in counts:
                raise ValueError(f"no count for severity {card.severity} (incident {card.id!r})")
        return counts

    @field_validator("incident")
    @classmethod
    def _pinned(cls, v: str | None, info: ValidationInfo) -> str | None:
        ids = [c.id for c in info.data.get("incidents") or []]
        if v is not None and ids and v not in ids:
            raise ValueError(f"no incident card with that id (cards: {', '.join(ids)})")
        return v

    def card(self, incident_id: str) -> IncidentCard:
        return next(c for c in self.incidents if c.id == incident_id)

    def inject_card(self, inject_id: str) -> InjectCard:
        return next(c for c in self.injects if c.id == inject_id)


def _name_cards(cards: list, prefix: str, what: str) -> list:
    """Cards without an id get one from their place in the deck; ids must be unique."""
    seen: set[str] = set()
    for i, card in enumerate(cards):
        card.id = card.id or f"{prefix}{i + 1}"
        if card.id in seen:
            raise ValueError(f"two {what} cards share the id {card.id!r}")
        seen.add(card.id)
    return cards


class TabletopScenario(Scenario):
    """A tabletop exercise: the responders are the scenario's players and teams; `rounds` caps
    the number of injects any incident gets."""

    family: str = "tabletop"
    rounds: int = Field(default=10, ge=1, le=200)
    memory: MemoryPolicy = "full"  # a drill is short; responders keep the whole incident in view
    timestep: str = "thirty minutes"
    tabletop: TabletopConfig

    @model_validator(mode="after")
    def _exercise(self) -> TabletopScenario:
        if not self.actors:
            raise ValueError(
                "players: a tabletop exercise needs a responder (one player or a team)"
            )
        if self.injects:
            raise ValueError(
                "injects: a tabletop scenario deals its injects from tabletop.injects (the inject "
                "deck); remove the top-level injects list"
            )
        deck = len(self.tabletop.injects)
        for card in self.tabletop.incidents:
            need = self.injects_for(card)
            if need > deck:
                raise ValueError(
                    f"tabletop.injects: the inject deck has {deck} card(s) but incident "
                    f"{card.id!r} (severity {card.severity}) needs {need}; add cards or lower "
                    "tabletop.injects_by_severity"
                )
        return self

    def injects_for(self, card: IncidentCard) -> int:
        return min(self.tabletop.injects_by_severity[card.severity], self.rounds)


# --- seeded chance -------------------------------------------------------------------------------


def draw(scenario: TabletopScenario, seed: int) -> tuple[IncidentCard, list[InjectCard]]:
    """The incident and the injects that follow it, in order: a function of the seed alone, so
    the same seed always deals the same exercise (and a resumed game deals it again)."""
    cfg = scenario.tabletop
    rng = random.Random(stable_seed(seed, "tabletop.draw"))
    card = cfg.card(cfg.incident) if cfg.incident else rng.choice(cfg.incidents)
    deck = list(cfg.injects)
    rng.shuffle(deck)
    return card, deck[: scenario.injects_for(card)]


def roll_die(seed: int, round_: int, sides: int) -> int:
    """The die after the response to inject `round_`: seeded by the run's seed and the round."""
    return random.Random(stable_seed(seed, "tabletop.roll", round_)).randint(1, sides)


def outcome_of(roll: int, cfg: TabletopConfig) -> str:
    if roll >= cfg.success:
        return "success"
    if cfg.partial is not None and roll >= cfg.partial:
        return "partial"
    return "failure"


OUTCOME_TEXT = {
    "success": "a full success: the response resolved the incident.",
    "partial": "a partial success: the response contained the harm, but the incident is not resolved.",
    "failure": "a failure: the response did not stop the incident, which stays as bad or gets worse.",
}

FALLBACK_NARRATIVE = {
    "success": "The response worked: the affected AI system is under control and the incident is closed.",
    "partial": "The response limited the damage, but the incident is still open.",
    "failure": "The response did not take hold; the incident continues to cause harm.",
}


# --- the phases ----------------------------------------------------------------------------------


def _tabletop(table: Table) -> TabletopScenario:
    s = table.scenario
    if not isinstance(s, TabletopScenario):  # `draw_incident` stops such a game before here
        raise TypeError(f"the tabletop graph needs a tabletop scenario, not family {s.family!r}")
    return s


def _deal(table: Table) -> list[str]:
    return list(table.state.get("world", {}).get("injects", []))


def draw_incident(state: GameState, table: Table) -> dict[str, Any]:
    s = table.scenario
    if not isinstance(s, TabletopScenario):  # e.g. a crisis scenario passed to this graph
        return {
            "error": f"the tabletop graph plays scenarios of family 'tabletop', not {s.family!r}",
            "done": True,
            "next": END,
        }
    card, injects = draw(s, table.context.seed)
    # Round 0, like the setting: every memory policy keeps the incident card in view.
    event = make_event(
        round=0,
        phase="draw_incident",
        kind="incident",
        author=s.control.name,
        text=f"Incident: {card.title} (severity {card.severity} of 3)\n{card.text}",
        data={
            "incident": card.id,
            "severity": card.severity,
            "injects": [c.id for c in injects],
            "seed": table.context.seed,
        },
    )
    world = {
        "incident": card.id,
        "severity": card.severity,
        "injects": [c.id for c in injects],
        "resolved": False,
    }
    return {"events": [event], "world": world}


def deal_inject(state: GameState, table: Table) -> dict[str, Any]:
    s = _tabletop(table)
    dealt = _deal(table)
    card = s.tabletop.inject_card(dealt[table.round - 1])
    event = make_event(
        round=table.round,
        phase="inject",
        kind="inject",
        author=s.control.name,
        text=f"Inject {table.round} of {len(dealt)}: {card.text}",
        data={"inject": card.id, "number": table.round, "of": len(dealt)},
    )
    return {"events": [event]}


def respond(state: GameState, table: Table) -> dict[str, Any]:
    """The kernel's `order` phase (members propose, leaders combine), told the true number of
    injects of this incident rather than the scenario's cap."""
    s = table.scenario.model_copy(update={"rounds": len(_deal(table))})
    return order(state, Table(s, table.context, table.state))


def roll(state: GameState, table: Table) -> dict[str, Any]:
    cfg = _tabletop(table).tabletop
    value = roll_die(table.context.seed, table.round, cfg.die)
    outcome = outcome_of(value, cfg)
    partial = f", partial success on {cfg.partial} or more" if cfg.partial is not None else ""
    event = make_event(
        round=table.round,
        phase="roll",
        kind="roll",
        author=table.scenario.control.name,
        text=(
            f"The die: {value} on a d{cfg.die} (full success on {cfg.success} or more{partial}). "
            f"The response was {OUTCOME_TEXT[outcome]}"
        ),
        data={
            "die": cfg.die,
            "roll": value,
            "success": cfg.success,
            "partial": cfg.partial,
            "outcome": outcome,
        },
    )
    return {"events": [event], "world": {"outcome": outcome, "resolved": outcome == "success"}}


def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    """The control narrates what the response achieved, bound by the die; then the next inject,
    or the end on a full success or an empty hand."""
    world = table.state.get("world", {})
    outcome = world.get("outcome", "failure")
    dealt = _deal(table)
    update = narrate(
        table,
        task="narrate",
        system="tabletop_control_system",
        question="tabletop_adjudicate_question",
        variables={"number": table.round, "total": len(dealt), "outcome": OUTCOME_TEXT[outcome]},
        fallback=FALLBACK_NARRATIVE[outcome],
        data={"outcome": outcome},
    )
    if update.get("asks"):
        return update
    if world.get("resolved") or table.round >= len(dealt):
        update["done"] = True  # the kit moves on to the debrief
        update["world"] = {"ended": "resolved" if world.get("resolved") else "injects exhausted"}
    else:
        update.update(next="inject", round=table.round + 1)  # the incident is drawn only once
    return update


def build(scenario: TabletopScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> StateGraph:
    """The graph for this scenario's seats: draw_incident, then inject -> respond -> roll ->
    adjudicate per inject; then analyze (the debrief)."""
    sc = load_scenario(scenario)
    if not isinstance(sc, TabletopScenario):
        raise ScenarioError(
            f"family: the tabletop graph needs family 'tabletop' (got {sc.family!r})"
        )
    return build_game(
        {
            "draw_incident": draw_incident,
            "inject": deal_inject,
            "respond": respond,  # the kernel's `order` phase, in the exercise's words
            "roll": roll,
            "adjudicate": adjudicate,
        },
        roster=list(sc.roles),
        end={"analyze": analyze},
    )


builder = build()
graph = builder.compile()
