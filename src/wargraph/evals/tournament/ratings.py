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


@dataclass
class Stages:
    """Every stage of every game as arrays: who is still in play (`pool`), how many of them win
    the stage (`wins` per entrant, `count` in all) and the game each stage belongs to."""

    pool: np.ndarray  # stages x entrants, bool
    wins: np.ndarray  # stages x entrants, 0/1
    count: np.ndarray  # stages
    game: np.ndarray  # stages -> game index


def _stages(rankings: list[Ranking], index: dict[str, int]) -> Stages:
    pool, wins, game = [], [], []
    for g, ranking in enumerate(rankings):
        left = np.zeros(len(index), dtype=bool)
        for group in ranking:
            left[[index[e] for e in group]] = True
        for group in ranking[:-1]:
            won = np.zeros(len(index))
            won[[index[e] for e in group]] = 1
            pool.append(left.copy())
            wins.append(won)
            game.append(g)
            left[[index[e] for e in group]] = False
    n = len(index)
    return Stages(
        np.array(pool, dtype=bool).reshape(-1, n),
        np.array(wins).reshape(-1, n),
        np.array([w.sum() for w in wins]),
        np.array(game, dtype=int),
    )


def _fit(st: Stages, weight: np.ndarray | None = None, iterations: int = 50) -> np.ndarray:
    """Newton's method on the (concave) log-likelihood plus the ridge; `weight` per stage (a
    bootstrap sample's multiplicity of its game)."""
    n = st.pool.shape[1]
    w = np.ones(len(st.count)) if weight is None else weight
    c = w * st.count
    won = (w[:, None] * st.wins).sum(axis=0)
    theta = np.zeros(n)
    for _ in range(iterations):
        e = np.where(st.pool, np.exp(theta - theta.max()), 0.0)
        p = e / e.sum(axis=1, keepdims=True)
        grad = (c[:, None] * p).sum(axis=0) - won + 2 * RIDGE * theta
        hess = np.diag((c[:, None] * p).sum(axis=0)) - (p * c[:, None]).T @ p
        step = np.linalg.solve(hess + 2 * RIDGE * np.eye(n), grad)
        theta -= step
        if np.abs(step).max() < 1e-9:
            break
    return theta - theta.mean()


def plackett_luce(
    rankings: list[Ranking], names: list[str], *, bootstrap: int = 200, seed: int = 0
) -> Fit:
    index = {n: i for i, n in enumerate(names)}
    st = _stages(rankings, index)
    strength = _fit(st)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(bootstrap):
        picks = np.bincount(rng.integers(0, len(rankings), len(rankings)), minlength=len(rankings))
        draws.append(_fit(st, picks[st.game].astype(float)))
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
        teams: list[list[Any]] = []
        ranks: list[float] = []
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
    table: dict[str, dict[str, dict[str, Any]]] = {
        a: {b: {"score": 0.0, "games": 0} for b in names if b != a} for a in names
    }
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
