"""A game's world (the true board, each country's beliefs, the history) and the round: every
country's actions applied at once in a fixed order, and the rule that stops the game."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field, model_validator

from wargraph.graphs.waragent.actions import NO_TARGET, Action, split_action
from wargraph.graphs.waragent.board import Board, apply_action, empty_board, observers


class RoundLog(BaseModel):
    """One round on the true board: the applied actions and the board after them."""

    round: int
    actions: dict[str, list[Action]] = Field(default_factory=dict)
    board: Board


class Situation(BaseModel):
    """The true board, each country's beliefs, and the per-round history."""

    countries: list[str]
    true: Board
    beliefs: dict[str, Board]
    history: list[RoundLog] = Field(default_factory=list)
    round: int = 0
    unchanged: int = 0  # rounds in a row the board and stick did not change

    def renamed(self, f: Any) -> Situation:
        """The same world with every country name passed through `f` (e.g. anonymised back)."""

        def acts(a: Action) -> Action:
            return a.model_copy(
                update={"target": f(a.target) if a.target != NO_TARGET else a.target}
            )

        return Situation(
            countries=[f(c) for c in self.countries],
            true=self.true.renamed(f),
            beliefs={f(c): b.renamed(f) for c, b in self.beliefs.items()},
            history=[
                RoundLog(
                    round=log.round,
                    actions={f(c): [acts(a) for a in v] for c, v in log.actions.items()},
                    board=log.board.renamed(f),
                )
                for log in self.history
            ],
            round=self.round,
            unchanged=self.unchanged,
        )

    @model_validator(mode="after")
    def _every_country_believes(self) -> Situation:
        missing = set(self.countries) - set(self.beliefs)
        if missing:
            raise ValueError(f"beliefs missing for {sorted(missing)}")
        return self


def new_world(countries: Iterable[str], initial: Board | None = None) -> Situation:
    """Everyone starts from the same (public) initial board."""
    countries = list(countries)
    start = initial.model_copy(deep=True) if initial else empty_board(countries)
    return Situation(
        countries=countries,
        true=start,
        beliefs={c: start.model_copy(deep=True) for c in countries},
        history=[RoundLog(round=0, board=start.model_copy(deep=True))],
    )


# The order effects are applied inside one round, so simultaneous moves give one answer:
# breaking and answering come before new requests, and a war declared in the same round as
# a peace is accepted wins (it is the later, stronger act).
_APPLY_ORDER = ("betray", "reject", "accept", "publish", "request", "declare_war")


def _apply_rank(a: Action) -> int:
    verb, _ = split_action(a.type)
    return _APPLY_ORDER.index(verb) if verb in _APPLY_ORDER else len(_APPLY_ORDER)


def apply_round(
    world: Situation, proposals: Mapping[str, list[Action]], visibility: Mapping[str, str]
) -> Situation:
    """All countries' (already validated) actions at once; returns a new world.

    The true board takes every action; each country's beliefs take the public actions and
    the private ones it made or that were addressed to it.
    """
    new = world.model_copy(deep=True)
    ordered = sorted(
        (
            (_apply_rank(a), new.countries.index(actor), i, actor, a)
            for actor, acts in proposals.items()
            for i, a in enumerate(acts)
        ),
        key=lambda t: t[:3],
    )
    before = new.true.state_key()
    for _, _, _, actor, action in ordered:
        apply_action(new.true, actor, action)
        for who in observers(actor, action, new.countries, visibility):
            apply_action(new.beliefs[who], actor, action)
    new.round += 1
    new.unchanged = new.unchanged + 1 if new.true.state_key() == before else 0
    new.history.append(
        RoundLog(
            round=new.round,
            actions={c: list(proposals.get(c, [])) for c in new.countries},
            board=new.true.model_copy(deep=True),
        )
    )
    return new


def should_stop(world: Situation, max_rounds: int, unchanged_rounds: int) -> str | None:
    """Why the game ends now, or None. `unchanged_rounds` <= 0 disables the stillness rule."""
    if world.round >= max_rounds:
        return f"round limit ({max_rounds}) reached"
    if unchanged_rounds > 0 and world.unchanged >= unchanged_rounds:
        return f"board and stick unchanged for {world.unchanged} rounds"
    return None
