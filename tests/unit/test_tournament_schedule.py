"""The fair schedule: every entrant takes every seat equally often, opponents mix, seeds pair."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wargraph.evals.tournament.schedule import (
    Game,
    check_balance,
    pair_counts,
    pairings,
    rotations,
    seat_counts,
)


def names(n: int) -> list[str]:
    return [f"e{i}" for i in range(n)]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 9), k=st.integers(2, 7), count=st.integers(1, 4), seed=st.integers(0, 99))
def test_every_entrant_takes_every_seat_equally_often(n, k, count, seed):
    entrants, seats = names(n), [f"s{j}" for j in range(k)]
    games = rotations(entrants, seats, count, seed)
    assert len(games) == n * count
    assert [g.index for g in games] == list(range(len(games)))
    for e, c in seat_counts(games).items():
        assert [c[s] for s in seats] == [count] * k, (e, c)  # exactly `count` times each seat
    assert not check_balance(games, entrants, seats)
    # every game of a rotation shares its seed; rotations differ
    by_block: dict[int, set[int]] = {}
    for g in games:
        by_block.setdefault(g.block, set()).add(g.seed)
    assert all(len(v) == 1 for v in by_block.values())
    assert len({next(iter(v)) for v in by_block.values()}) == count


def test_seven_powers_seven_entrants_is_a_latin_square():
    entrants, seats = names(7), [f"p{j}" for j in range(7)]
    games = rotations(entrants, seats, 1, 0)
    for g in games:
        assert sorted(g.seats.values()) == entrants  # everyone in every game, once
    for s in seats:
        assert sorted(g.seats[s] for g in games) == entrants  # every seat held by everyone


def test_later_rotations_mix_opponents():
    entrants, seats = names(6), ["a", "b"]
    one = pair_counts(rotations(entrants, seats, 1, 0))
    many = pair_counts(rotations(entrants, seats, 6, 0))
    assert len(one) < 15  # a single cyclic rotation only pairs neighbours
    assert len(many) > len(one)


def test_extended_schedule_keeps_its_start():
    entrants, seats = names(4), ["a", "b", "c"]
    two = rotations(entrants, seats, 2, 5)
    more = two + rotations(entrants, seats, 1, 5, first_block=2, first_index=len(two))
    assert more[: len(two)] == rotations(entrants, seats, 3, 5)[: len(two)]
    assert more == rotations(entrants, seats, 3, 5)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("per_pair", [1, 2, 3, 4])
def test_pairings_meet_every_pair_and_balance_sides(n, per_pair):
    entrants, seats = names(n), ["north", "south"]
    games = pairings(entrants, seats, per_pair, 0)
    assert len(games) == per_pair * n * (n - 1) // 2
    assert set(pair_counts(games).values()) == {per_pair}
    if n == 2 and per_pair == 1:  # one game between two: someone never plays a side
        assert check_balance(games, entrants, seats)
    else:
        assert not check_balance(games, entrants, seats)


def test_pairings_need_two_seats():
    with pytest.raises(ValueError, match="two-seat"):
        pairings(names(3), ["a", "b", "c"], 1, 0)


def test_check_finds_an_unfair_schedule():
    seats = ["a", "b"]
    unfair = [Game(i, 0, 0, {"a": "x", "b": "y"}) for i in range(3)]
    problems = check_balance(unfair, ["x", "y"], seats)
    assert problems and "x never plays b" in problems[0]
    uneven = unfair + [Game(3, 0, 0, {"a": "y", "b": "x"})]
    assert any("unevenly" in p for p in check_balance(uneven, ["x", "y"], seats))
    assert Counter(g.seats["a"] for g in uneven) == {"x": 3, "y": 1}
