"""The tabletop world (HAIWIRE style): an incident card drawn by the run's seed, inject cards
dealt one per round (the incident's severity sets how many), a die after each response that
decides whether it resolved the incident, and the control narrating the outcome bound by the die.
A full success ends play early."""

from __future__ import annotations

import random
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from wargraph.kernel.scenario import MemoryPolicy, Scenario
from wargraph.kernel.state import Event, make_event
from wargraph.kernel.table import Table
from wargraph.kernel.views import render_events
from wargraph.prompts import render_prompt
from wargraph.seats.scripted import stable_seed
from wargraph.worlds import Cast, Narration, Opening, Orders, Question, World

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
    # The last round in full and a one-line digest of the rounds before it (`render_view`): the
    # incident card stays in view, and prompts stop growing after the second inject.
    memory: MemoryPolicy = "last_round"
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


def _digest(rolls: list[Event]) -> str:
    """Rounds no longer in a seat's view, in one line of fixed size: how many injects were
    answered and how the die judged the responses (the control's own words, not quoted data)."""
    first, last = rolls[0]["round"], rolls[-1]["round"]
    counts = {o: sum(e["data"].get("outcome") == o for e in rolls) for o in OUTCOMES}
    told = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
    span = f"round {first}" if first == last else f"rounds {first}-{last}"
    return f"[earlier, {span}: {len(rolls)} inject(s) answered; the die's verdicts: {told}]"


# --- the world -----------------------------------------------------------------------------------


def _tabletop(table: Table) -> TabletopScenario:
    return table.scenario_as(TabletopScenario)


def _dealt(table: Table) -> list[str]:
    return list(table.state.get("world", {}).get("injects", []))


def _roll(table: Table) -> tuple[int, str]:
    cfg = _tabletop(table).tabletop
    value = roll_die(table.context.seed, table.round, cfg.die)
    return value, outcome_of(value, cfg)


def _roll_text(table: Table) -> str:
    cfg = _tabletop(table).tabletop
    value, outcome = _roll(table)
    partial = f", partial success on {cfg.partial} or more" if cfg.partial is not None else ""
    return (
        f"The die: {value} on a d{cfg.die} (full success on {cfg.success} or more{partial}). "
        f"The response was {OUTCOME_TEXT[outcome]}"
    )


class Deck(Opening):
    """The incident card opens the game (round 0: every memory policy keeps it in view); each
    round deals the next inject card."""

    def open(self, table: Table) -> dict[str, Any]:
        s = _tabletop(table)
        card, injects = draw(s, table.context.seed)
        event = make_event(
            round=0,
            phase="setup",
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
        return {"events": [*table.state["events"], event], "world": world}

    def injects(self, table: Table) -> dict[str, Any]:
        s = _tabletop(table)
        dealt = _dealt(table)
        if table.round > len(dealt):
            return {}
        card = s.tabletop.inject_card(dealt[table.round - 1])
        event = table.event(
            kind="inject",
            author=s.control.name,
            text=f"Inject {table.round} of {len(dealt)}: {card.text}",
            data={"inject": card.id, "number": table.round, "of": len(dealt)},
        )
        return {"events": [event]}


class Responders(Cast):
    def render_view(self, table: Table, role: str, events: list[Event]) -> str:
        """The seat's events, with the rounds its memory policy leaves out told in one line
        after the setup (how many injects came, what the die made of the responses)."""
        setup = [e for e in events if e["round"] == 0]
        rest = [e for e in events if e["round"] != 0]
        shown = {e["round"] for e in rest}
        earlier = [
            e
            for e in table.view(role, policy="full")
            if e["kind"] == "roll" and 0 < e["round"] < table.round and e["round"] not in shown
        ]
        budget = table.view_budget(role)
        parts = [render_events(setup, current_round=table.round, budget=budget)] if setup else []
        if earlier:
            parts.append(_digest(earlier))
        if rest:
            parts.append(render_events(rest, current_round=table.round, budget=budget))
        return "\n".join(parts) or render_events([])


class Responses(Orders):
    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        # responders are told the true number of injects of this incident, not the scenario's cap
        s = table.scenario.model_copy(update={"rounds": len(_dealt(table))})
        return super().question(Table(s, table.context, table.state, table.world), actor, team=team)


class DieThenNarration(Narration):
    """The die decides the response's outcome; the control narrates it, bound by the die. A full
    success or an empty hand ends play."""

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        s = _tabletop(table)
        variant = table.variant(s.control.name)
        _, outcome = _roll(table)
        nature = render_prompt("nature_clause", variant) if s.nature else ""
        return Question(
            task=self.task,
            question=_roll_text(table)
            + "\n\n"
            + render_prompt(
                "tabletop_adjudicate_question",
                variant,
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                nature=nature,
                number=table.round,
                total=len(_dealt(table)),
                outcome=OUTCOME_TEXT[outcome],
            ),
            schema="adjudication",
            fallback={"narrative": FALLBACK_NARRATIVE[outcome]},
            reviewable=True,
        )

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        cfg = _tabletop(table).tabletop
        value, outcome = _roll(table)
        control = table.scenario.control.name
        roll = table.event(
            kind="roll",
            author=control,
            text=_roll_text(table),
            data={
                "die": cfg.die,
                "roll": value,
                "success": cfg.success,
                "partial": cfg.partial,
                "outcome": outcome,
            },
        )
        told = table.event(
            kind="narration",
            author=control,
            text=narration["value"]["narrative"] if narration else FALLBACK_NARRATIVE[outcome],
            data={"source": narration["source"] if narration else "fallback", "outcome": outcome},
        )
        update: dict[str, Any] = {"events": [roll, told], "world": {"outcome": outcome}}
        resolved = outcome == "success"
        update["world"]["resolved"] = resolved
        if resolved or table.round >= len(_dealt(table)):
            update["done"] = True  # on to the debrief
            update["world"]["ended"] = "resolved" if resolved else "injects exhausted"
        return update


# Cards and a die: the incident opens the game, each round deals an inject, the die decides the
# response's outcome and the control narrates it.
TABLETOP = World(
    "tabletop",
    cast=Responders(),
    opening=Deck(),
    orders=Responses(),
    resolution=DieThenNarration(task="narrate"),
)
