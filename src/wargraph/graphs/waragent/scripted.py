"""A seeded scripted player that proposes only actions the rules allow (for tests and
benchmarks)."""

from __future__ import annotations

from typing import Any

from wargraph.graphs.waragent.actions import ACTION_TYPES, NO_TARGET, UNTARGETED, Action
from wargraph.graphs.waragent.board import Board
from wargraph.graphs.waragent.secretary import amend, validate


def valid_options(actor: str, board: Board, countries: list[str]) -> list[Action]:
    """Every single action the rules allow the actor right now (ally obligations aside)."""
    out = []
    for t in ACTION_TYPES:
        targets = [NO_TARGET] if t in UNTARGETED else [c for c in countries if c != actor]
        for target in targets:
            text = f"{actor} to {target}: {t.replace('_', ' ')}." if t == "send_message" else ""
            a = Action(type=t, target=target, message=text)
            if not validate(actor, [a], board, countries).action_reasons[0]:
                out.append(a)
    return out


def scripted_proposal(
    actor: str, board: Board, countries: list[str], rng: Any, max_actions: int = 3
) -> list[Action]:
    """A seeded, always-valid proposal: a few action types drawn at random, then a target each.

    Drawing the type first keeps the mix varied (otherwise declarations, with one option per
    country, would crowd out the rest). Plays no strategy; for tests and benchmarks.
    """
    options = valid_options(actor, board, countries)
    by_type: dict[str, list[Action]] = {}
    for a in options:
        by_type.setdefault(a.type, []).append(a)
    types = sorted(by_type)
    chosen = rng.sample(types, k=min(len(types), rng.randint(1, max_actions)))
    picked = [rng.choice(by_type[t]) for t in chosen]
    kept, _ = amend(actor, picked, board, countries, max_actions, ally_at_war="join")
    return kept
