"""A scoreboard, and a round decided by code and told by the control.

The scores are kept in `world["scores"]` (player -> points, every player from the start: a part
keeps no state of its own). `Rules` opens the game with the public rules and every score at 0;
`ScoreCast` shows each seat "Score so far" under its view; `Outcome` lets code decide a round,
shows the control that fixed result to narrate (so the story cannot contradict the arithmetic),
records it and adds its points; `FinalScore` records the final score and the winners;
`score_measures` gives a finished game's scores, winners and the secretary's work."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wargraph.kernel.parts.allocation import TermsFn, template_of
from wargraph.kernel.parts.cast import Cast
from wargraph.kernel.parts.debrief import Debrief
from wargraph.kernel.parts.opening import Opening
from wargraph.kernel.parts.resolution import Narration
from wargraph.kernel.question import Question
from wargraph.kernel.state import make_event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

Scores = dict[str, float]


def scores(table: Table) -> Scores:
    """The scores so far (empty before the game opens them)."""
    return dict((table.state.get("world") or {}).get("scores") or {})


def standing(points: Scores) -> str:
    """`north 1.5, south 2.5`: points or scores as the record and the prompts write them."""
    return ", ".join(f"{s} {p:g}" for s, p in points.items())


def leaders(points: Scores) -> list[str]:
    """Who has the most (several on a tie)."""
    best = max(points.values(), default=0.0)
    return [s for s, p in points.items() if p == best]


def add_points(before: Scores, points: Scores) -> Scores:
    """The scores after a round's points (rounded: sums of thirds stay comparable)."""
    return {s: round(before.get(s, 0.0) + points.get(s, 0.0), 6) for s in {**before, **points}}


@dataclass(frozen=True)
class Rules(Opening):
    """The public rules, rendered from `template` with `values`, as an event of round 0 (every
    memory policy keeps it) carrying `data`; with `scored`, every player's score starts at 0.
    With an allocation game's `terms`, the values are its templates' and the data its public
    facts and budget."""

    template: str = ""  # the family's template: no default text fits every game
    scored: bool = True
    terms: TermsFn | None = None

    def values(self, table: Table) -> dict[str, Any]:
        return self.terms(table).values_for(table, "") if self.terms else {}

    def data(self, table: Table) -> dict[str, Any]:
        if self.terms is None:
            return {}
        t = self.terms(table)
        return {**t.facts, "budget": t.budget}

    def open(self, table: Table) -> dict[str, Any]:
        s = table.scenario
        text = render_prompt(template_of(self), s.prompt_variant, **self.values(table))
        rules = make_event(
            round=0,
            phase="setup",
            kind="rules",
            author="scenario",
            text=text,
            data=self.data(table),
        )
        update: dict[str, Any] = {"events": [*table.state["events"], rules]}
        if self.scored:
            update["world"] = {"scores": {p: 0.0 for p in s.players}}
        return update


@dataclass(frozen=True)
class ScoreCast(Cast):
    """Every seat reads the score so far under its view; with `secret`, its own score alone
    (a hidden-score game: see `Outcome.secret`)."""

    secret: bool = False

    def private_view(self, table: Table, role: str) -> str:
        now = scores(table)
        if self.secret:
            return f"Your score so far: {now[role]:g}." if role in now else ""
        return f"Score so far: {standing(now)}." if now else ""


@dataclass(frozen=True)
class Result:
    """What code decided this round: the text the control is shown and the record keeps, the
    result event's data, the narration when the control gives none, and the round's points
    (None: no scoreboard)."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    fallback: str = "The round is decided."
    points: Scores | None = None
    world: dict[str, Any] = field(default_factory=dict)
    """World keys this round sets (an eliminated seat, a revealed role), beside the scores."""
    ends: bool = False
    """The game ends after this round (a winner found before the last round)."""


@dataclass(frozen=True)
class Outcome(Narration):
    """Code decides the round (`outcome`); the control narrates it from the `template` (values
    `round`, `rounds`, `timestep` and the quoted `result`); the record gets a public event of
    `kind` (its text ends with the points and the score) and the narration."""

    template: str = ""  # the family's template: no default text fits every game
    kind: str = "result"
    secret: bool = False
    """Scores are hidden: the result event goes to the control alone, and each player gets a
    private event with its own points and score (the narration stays public: keep scores out
    of the template). `FinalScore` still tells every score at the end."""

    def outcome(self, table: Table, proposals: dict[str, Any]) -> Result:
        """The round's result. Called when the control is asked and again when the round is
        resolved (and again after a crash): a function of the table and the proposals alone."""
        raise NotImplementedError("an Outcome's family decides the round in `outcome`")

    def told(self, result: Result) -> str:
        """The result as the control is shown it."""
        if result.points is None:
            return result.text
        return f"{result.text}\npoints this round: {standing(result.points)}"

    def question(self, table: Table, proposals: dict[str, Any]) -> Question:
        s, result = table.scenario, self.outcome(table, proposals)
        variant = table.variant(s.control.name)
        text = render_prompt(
            template_of(self),
            variant,
            round=table.round,
            rounds=s.rounds,
            timestep=s.timestep,
            result=quote(self.told(result)),
        )
        return Question(
            task=self.task,
            system=render_prompt("control_system", variant),
            question=text,
            schema="adjudication",
            fallback={"narrative": result.fallback},
            reviewable=True,
        )

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        result, control = self.outcome(table, proposals), table.scenario.control.name
        text, data, world = self.told(result), dict(result.data), dict(result.world)
        own: list[Any] = []
        if result.points is not None:
            now = add_points(scores(table), result.points)
            text, world["scores"] = f"{text}\nscore: {standing(now)}", now
            data.update(points=result.points, scores=now)
            if self.secret:  # each player its own points alone
                own = [
                    table.event(
                        kind="score",
                        author=control,
                        text=f"Your points this round: {result.points.get(p, 0.0):g}; "
                        f"your score: {now.get(p, 0.0):g}.",
                        audience=[p],
                        key=p,
                    )
                    for p in now
                ]
        told = table.event(
            kind="narration",
            author=control,
            text=narration["value"]["narrative"] if narration else result.fallback,
            data={"source": narration["source"] if narration else "fallback"},
        )
        audience = [control] if self.secret else None
        out = table.event(kind=self.kind, author=control, text=text, data=data, audience=audience)
        update: dict[str, Any] = {"events": [out, *own, told]}
        if world:
            update["world"] = world
        if result.ends:
            update["done"] = True
        return update


@dataclass(frozen=True)
class FinalScore(Debrief):
    """After the last round: a public event of `kind` with the final score and the winner (or
    the draw)."""

    kind: str = "score"

    def debrief(self, table: Table) -> dict[str, Any]:
        now = scores(table)
        won = leaders(now)
        verdict = f"{won[0]} wins" if len(won) == 1 else "a draw between " + " and ".join(won)
        text = f"Final score: {standing(now)}; {verdict}."
        data = {"scores": now, "winners": won}
        return {
            "events": [
                table.event(
                    kind=self.kind, author=table.scenario.control.name, text=text, data=data
                )
            ]
        }


def score_measures(
    record: dict[str, Any], *, kind: str = "result", give_up_status: str | None = None
) -> dict[str, Any]:
    """A finished game's measures (`Family.measures`): the rounds resolved (events of `kind`),
    the last scores and the winners; with the secretary's `give_up_status`, the revisions it
    asked and the proposals it gave up on (a measure named by that status)."""
    events = record.get("events") or []
    results = [e for e in events if e["kind"] == kind]
    last = results[-1]["data"].get("scores", {}) if results else {}
    out: dict[str, Any] = {
        "rounds": len(results),
        "scores": last,
        "winners": leaders(last) if last else [],
    }
    if give_up_status:
        verdicts = [e for e in events if e["kind"] == "verdict" and "status" in e.get("data", {})]
        out["revisions"] = sum(int(e["data"].get("revisions", 0)) for e in verdicts)
        out[give_up_status] = sum(e["data"]["status"] == give_up_status for e in verdicts)
    return out
