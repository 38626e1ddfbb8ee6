"""Ratings from multi-player results, with intervals.

A game's result is a ranking: groups of entrants, best first (a tie is one group). Three views:
- `openskill_ratings`: OpenSkill's Plackett-Luce model (a Bayesian rating, mu +- 1.96 sigma),
  games taken in schedule order;
- `plackett_luce`: the maximum-likelihood Plackett-Luce strengths (Bradley-Terry when every game
  has two entrants), log-worths centred on 0, with percentile intervals from a bootstrap over
  games (a small ridge keeps an unbeaten entrant's strength finite);
- `pairwise`: the probability that one entrant finishes above another, from the strengths, with
  the bootstrap's intervals; `crosstable`: what happened head to head.
Ties are handled as in Breslow's approximation: the tied entrants of a stage each contribute
their worth against everyone still in play, and leave together."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize

Ranking = list[list[str]]  # groups best first

RIDGE = 0.01


@dataclass
class Fit:
    names: list[str]
    strength: np.ndarray  # log-worth, centred
    lo: np.ndarray
    hi: np.ndarray
    samples: np.ndarray  # bootstrap draws x entrants

    def table(self) -> dict[str, dict[str, float]]:
        return {
            n: {"strength": float(s), "lo": float(a), "hi": float(b)}
            for n, s, a, b in zip(self.names, self.strength, self.lo, self.hi, strict=True)
        }


def _stages(rankings: list[Ranking], index: dict[str, int]) -> list[tuple[list[int], list[int]]]:
    """(winners of the stage, everyone still in play) for every stage of every game."""
    stages = []
    for ranking in rankings:
        left = [index[e] for group in ranking for e in group]
        for group in ranking[:-1]:
            stages.append(([index[e] for e in group], list(left)))
            left = [i for i in left if i not in set(index[e] for e in group)]
    return stages


def _fit(stages: list[tuple[list[int], list[int]]], n: int) -> np.ndarray:
    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = RIDGE * float(theta @ theta), 2 * RIDGE * theta
        for winners, pool in stages:
            w = np.exp(theta[pool] - theta[pool].max())
            p = w / w.sum()
            value -= float(theta[winners].sum()) - len(winners) * (
                float(np.log(w.sum())) + float(theta[pool].max())
            )
            grad[winners] -= 1
            grad[pool] += len(winners) * p
        return value, grad

    res = minimize(nll, np.zeros(n), jac=True, method="L-BFGS-B")
    return res.x - res.x.mean()


def plackett_luce(
    rankings: list[Ranking], names: list[str], *, bootstrap: int = 200, seed: int = 0
) -> Fit:
    index = {n: i for i, n in enumerate(names)}
    strength = _fit(_stages(rankings, index), len(names))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(bootstrap):
        pick = rng.integers(0, len(rankings), len(rankings))
        draws.append(_fit(_stages([rankings[i] for i in pick], index), len(names)))
    samples = np.array(draws) if draws else strength[None, :]
    lo, hi = np.percentile(samples, [2.5, 97.5], axis=0)
    return Fit(list(names), strength, lo, hi, samples)


def pairwise(fit: Fit) -> dict[str, dict[str, dict[str, float]]]:
    """P(row finishes above column) with a 95% bootstrap interval."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for i, a in enumerate(fit.names):
        for j, b in enumerate(fit.names):
            if i == j:
                continue
            p = 1 / (1 + np.exp(fit.strength[j] - fit.strength[i]))
            ps = 1 / (1 + np.exp(fit.samples[:, j] - fit.samples[:, i]))
            lo, hi = np.percentile(ps, [2.5, 97.5])
            out.setdefault(a, {})[b] = {"p": float(p), "lo": float(lo), "hi": float(hi)}
    return out


def openskill_ratings(rankings: list[Ranking], names: list[str]) -> dict[str, dict[str, float]]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in names}
    for ranking in rankings:
        teams, ranks = [], []
        for place, group in enumerate(ranking):
            for e in group:
                teams.append([ratings[e]])
                ranks.append(place)
        if len(teams) < 2:
            continue
        for (new,), e in zip(
            model.rate(teams, ranks=ranks), [e for g in ranking for e in g], strict=True
        ):
            ratings[e] = new
    return {
        n: {
            "mu": r.mu,
            "sigma": r.sigma,
            "lo": r.mu - 1.96 * r.sigma,
            "hi": r.mu + 1.96 * r.sigma,
            "ordinal": r.ordinal(),
        }
        for n, r in ratings.items()
    }


def crosstable(rankings: list[Ranking], names: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Head to head: in the games both played, how often the row finished above the column
    (a tie counts a half), and in how many games they met."""
    table = {a: {b: {"score": 0.0, "games": 0} for b in names if b != a} for a in names}
    for ranking in rankings:
        place = {e: i for i, group in enumerate(ranking) for e in group}
        for a, b in itertools.permutations(place, 2):
            cell = table[a][b]
            cell["games"] += 1
            cell["score"] += 1.0 if place[a] < place[b] else 0.5 if place[a] == place[b] else 0.0
    for row in table.values():
        for cell in row.values():
            cell["rate"] = cell["score"] / cell["games"] if cell["games"] else None
    return table


def separated(fit: Fit) -> tuple[str, str, bool] | None:
    """The top two entrants by strength and whether their intervals no longer overlap."""
    if len(fit.names) < 2:
        return None
    order = np.argsort(-fit.strength)
    a, b = int(order[0]), int(order[1])
    return fit.names[a], fit.names[b], bool(fit.lo[a] > fit.hi[b])
