"""Ratings recover known strengths, with intervals; ties and crosstables count right."""

from __future__ import annotations

import numpy as np

from wargraph.evals.tournament.ratings import (
    crosstable,
    openskill_ratings,
    pairwise,
    plackett_luce,
    separated,
)


def simulated(worths: dict[str, float], games: int, per_game: int, seed: int) -> list:
    """Plackett-Luce draws: pick the winner in proportion to worth, then the next ..."""
    rng = np.random.default_rng(seed)
    names = list(worths)
    out = []
    for _ in range(games):
        pool = list(rng.choice(names, per_game, replace=False))
        order = []
        while pool:
            w = np.array([worths[x] for x in pool])
            pick = pool[rng.choice(len(pool), p=w / w.sum())]
            order.append([pick])
            pool.remove(pick)
        out.append(order)
    return out


def test_plackett_luce_recovers_the_order_with_separated_intervals():
    worths = {"strong": 8.0, "middle": 2.0, "weak": 0.5}
    rankings = simulated(worths, 150, 3, seed=1)
    fit = plackett_luce(rankings, list(worths), bootstrap=100, seed=0)
    t = fit.table()
    assert t["strong"]["lo"] > t["middle"]["hi"]
    assert t["middle"]["lo"] > t["weak"]["hi"]
    # log-worth differences near the truth (log 4 = 1.39)
    assert abs((t["strong"]["strength"] - t["middle"]["strength"]) - np.log(4)) < 0.5
    assert separated(fit)[:3] == ("strong", "middle", True)
    p = pairwise(fit)
    assert p["strong"]["weak"]["lo"] > 0.5 and p["weak"]["strong"]["hi"] < 0.5
    assert abs(p["strong"]["weak"]["p"] + p["weak"]["strong"]["p"] - 1) < 1e-9


def test_bradley_terry_with_two_per_game():
    rankings = simulated({"a": 3.0, "b": 1.0}, 200, 2, seed=2)
    fit = plackett_luce(rankings, ["a", "b"], bootstrap=100)
    p = pairwise(fit)["a"]["b"]
    wins = sum(r[0] == ["a"] for r in rankings) / len(rankings)
    assert abs(p["p"] - wins) < 0.02  # two entrants: the MLE is the win rate (small ridge)
    assert p["lo"] < wins < p["hi"]


def test_equal_entrants_are_not_separated():
    rankings = simulated({"a": 1.0, "b": 1.0, "c": 1.0}, 60, 3, seed=3)
    fit = plackett_luce(rankings, ["a", "b", "c"], bootstrap=100)
    assert separated(fit)[2] is False
    assert all(lo < 0 < hi for lo, hi in zip(fit.lo, fit.hi, strict=True))


def test_ties_and_crosstable():
    rankings = [[["a", "b"], ["c"]], [["c"], ["a"], ["b"]]]
    table = crosstable(rankings, ["a", "b", "c"])
    assert table["a"]["b"] == {"score": 1.5, "games": 2, "rate": 0.75}
    assert table["c"]["a"]["score"] == 1.0 and table["c"]["a"]["games"] == 2
    fit = plackett_luce(rankings, ["a", "b", "c"], bootstrap=20)
    assert fit.table()["a"]["strength"] > fit.table()["b"]["strength"]


def test_openskill_orders_like_the_truth():
    worths = {"strong": 8.0, "middle": 2.0, "weak": 0.5}
    ratings = openskill_ratings(simulated(worths, 120, 3, seed=4), list(worths))
    assert ratings["strong"]["mu"] > ratings["middle"]["mu"] > ratings["weak"]["mu"]
    assert ratings["strong"]["lo"] > ratings["weak"]["hi"]
