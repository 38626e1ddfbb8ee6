"""The fair schedule, fixed before play: who sits where in every game, and with which seed.

A *rotation* is a cyclic (Latin-square) design over an order of the entrants: in its game g,
seat j goes to entrant (g + j) mod n. Over the rotation's n games every entrant takes every
seat exactly once, whatever the numbers of entrants (n) and seats (k): with n = k every game
seats everyone, a Latin square; with n > k each game seats k of them; with n < k an entrant
holds several seats of a game. Rotations after the first use a seeded random order of the
entrants, so that opponents mix, and every game of a rotation shares its seed (the same deal,
seats rotated), so two entrants are compared on the same seeds. With two seats and
`games_per_pairing`, every pair of entrants plays that many games instead, sides alternating.
`check_balance` verifies the schedule before anything is played."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Game:
    index: int
    block: int  # the rotation (or pairing round) it belongs to; games of a block share a seed
    seed: int
    seats: dict[str, str]  # seat -> entrant

    @property
    def entrants(self) -> list[str]:
        return sorted(set(self.seats.values()))


def rotation(order: list[str], seats: list[str], block: int, seed: int, start: int) -> list[Game]:
    n = len(order)
    return [
        Game(start + g, block, seed, {s: order[(g + j) % n] for j, s in enumerate(seats)})
        for g in range(n)
    ]


def rotations(
    entrants: list[str],
    seats: list[str],
    count: int,
    seed: int,
    *,
    first_block: int = 0,
    first_index: int = 0,
) -> list[Game]:
    """`count` rotations from `first_block` on (adaptive runs add more later; each block's
    order depends only on the seed and its number, so a schedule is the same when extended)."""
    games: list[Game] = []
    for block in range(first_block, first_block + count):
        order = list(entrants)
        if block:
            random.Random(f"{seed}:{block}").shuffle(order)
        games += rotation(order, seats, block, seed + block, first_index + len(games))
    return games


def pairings(entrants: list[str], seats: list[str], per_pair: int, seed: int) -> list[Game]:
    """Two seats: every pair plays `per_pair` games, sides alternating; with an odd count the
    first side of each pair is oriented so that every entrant starts as often as it can."""
    if len(seats) != 2:
        raise ValueError(
            f"games_per_pairing needs a two-seat game (this one has {len(seats)}); "
            "give rotations instead"
        )
    n = len(entrants)
    games: list[Game] = []
    pairs: list[tuple[int, int]] = []
    for i, j in itertools.combinations(range(n), 2):
        # a regular orientation of the round robin: i first when j is at most n//2 ahead, so
        # every entrant is first in (n-1)/2 pairs (n odd) or n/2 or n/2-1 (n even)
        pairs.append((i, j) if j - i <= n // 2 else (j, i))
    for r in range(per_pair):
        for a, b in pairs:
            x, y = (a, b) if r % 2 == 0 else (b, a)
            games.append(
                Game(
                    len(games),
                    r // 2,
                    seed + r // 2,
                    {seats[0]: entrants[x], seats[1]: entrants[y]},
                )
            )
    return games


def seat_counts(games: list[Game]) -> dict[str, Counter]:
    counts: dict[str, Counter] = {}
    for g in games:
        for seat, e in g.seats.items():
            counts.setdefault(e, Counter())[seat] += 1
    return counts


def check_balance(games: list[Game], entrants: list[str], seats: list[str]) -> list[str]:
    """Problems with the schedule (empty: fair): every entrant must take every seat, and as
    often as every other seat, give or take one."""
    problems = []
    counts = seat_counts(games)
    for e in entrants:
        c = counts.get(e, Counter())
        per = [c[s] for s in seats]
        if min(per) == 0:
            problems.append(f"{e} never plays {', '.join(s for s in seats if not c[s])}")
        elif max(per) - min(per) > 1:
            problems.append(f"{e} plays seats unevenly ({dict(c)})")
    return problems


def pair_counts(games: list[Game]) -> Counter:
    """Games in which each unordered pair of distinct entrants met."""
    met: Counter = Counter()
    for g in games:
        for a, b in itertools.combinations(g.entrants, 2):
            met[(a, b)] += 1
    return met


def schedule_text(games: list[Game], seats: list[str]) -> str:
    """The schedule as a Markdown table (printed before play and kept in the report)."""
    lines = ["| game | seed | " + " | ".join(seats) + " |", "|---|---|" + "---|" * len(seats)]
    for g in games:
        lines.append(f"| {g.index} | {g.seed} | " + " | ".join(g.seats[s] for s in seats) + " |")
    return "\n".join(lines)
