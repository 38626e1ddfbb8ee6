"""Statistics for experiment reports: intervals for proportions and means, two-sample tests.

Why these: outcome frequencies over 20 plays are small samples near 0 or 1, where the
textbook Wald interval collapses to a point; Wilson's score interval does not. Differences
of proportions use Newcombe's hybrid score interval (built from the two Wilson intervals)
for the same reason. Numeric measures get a percentile bootstrap interval, seeded so a
report is reproducible. Tests: Fisher's exact test (scipy) for two proportions and an
exact (or seeded Monte Carlo) permutation test for two samples of numbers.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be between 0 and 1 (got {level})")
    return statistics.NormalDist().inv_cdf(0.5 + level / 2)


def _counts(k: int, n: int) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n (got k={k}, n={n})")


@dataclass(frozen=True)
class Proportion:
    k: int
    n: int
    p: float | None  # None when n == 0
    lo: float
    hi: float

    def text(self) -> str:
        if self.p is None:
            return "0/0"
        return f"{self.k}/{self.n} ({self.p:.0%}, {self.lo:.0%}–{self.hi:.0%})"


def wilson(k: int, n: int, level: float = 0.95) -> Proportion:
    """Wilson score interval for k successes in n trials; n = 0 gives the whole [0, 1]."""
    _counts(k, n)
    if n == 0:
        return Proportion(0, 0, None, 0.0, 1.0)
    z = Z95 if level == 0.95 else _z(level)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Rounding dust aside, k = 0 gives exactly 0 and k = n exactly 1.
    lo = 0.0 if k == 0 else min(p, max(0.0, centre - half))
    hi = 1.0 if k == n else max(p, min(1.0, centre + half))
    return Proportion(k, n, p, lo, hi)


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float | None
    sd: float | None  # sample standard deviation (n - 1); 0.0 for one value
    lo: float | None  # bootstrap interval of the mean
    hi: float | None


def mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    xs = [float(v) for v in values]
    if not xs:
        return None, None
    return statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0


def bootstrap_ci(
    values: Sequence[float],
    *,
    stat: Callable[[np.ndarray], float] = np.mean,
    level: float = 0.95,
    n_boot: int = 10_000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of `stat`; the same seed gives the same interval."""
    xs = np.asarray([float(v) for v in values], dtype=float)
    if xs.size == 0:
        return None, None
    if xs.size == 1 or np.all(xs == xs[0]):
        # a constant measure: its interval is the value itself (not numpy's mean of n copies,
        # which can be a float step off the value, and off `mean_sd`'s exact mean)
        v = float(xs[0]) if stat is np.mean else float(stat(xs))
        return v, v
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, xs.size, size=(n_boot, xs.size))
    stats_ = np.apply_along_axis(stat, 1, xs[idx]) if stat is not np.mean else xs[idx].mean(1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(stats_, [alpha, 1 - alpha])
    return float(lo), float(hi)


def summarise(values: Sequence[float], *, seed: int = 0, level: float = 0.95) -> Summary:
    mean, sd = mean_sd(values)
    lo, hi = bootstrap_ci(values, seed=seed, level=level)
    if mean is not None and lo is not None and hi is not None:
        # The bootstrap's means and `mean_sd`'s exact mean can differ by rounding: the interval
        # always holds the mean it is reported with (a plot's error bars are never negative).
        lo, hi = min(lo, mean), max(hi, mean)
    return Summary(len(values), mean, sd, lo, hi)


@dataclass(frozen=True)
class Difference:
    estimate: float | None
    lo: float | None
    hi: float | None
    p_value: float | None
    test: str


def diff_proportions(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> Difference:
    """p1 - p2 with Newcombe's hybrid score interval (method 10) and Fisher's exact p-value."""
    _counts(k1, n1)
    _counts(k2, n2)
    if n1 == 0 or n2 == 0:
        return Difference(None, None, None, None, "Fisher exact")
    a, b = wilson(k1, n1, level), wilson(k2, n2, level)
    assert a.p is not None and b.p is not None
    d = a.p - b.p
    lo = d - math.sqrt((a.p - a.lo) ** 2 + (b.hi - b.p) ** 2)
    hi = d + math.sqrt((a.hi - a.p) ** 2 + (b.p - b.lo) ** 2)
    _, p = fisher_exact([[k1, n1 - k1], [k2, n2 - k2]])
    return Difference(d, max(-1.0, lo), min(1.0, hi), p, "Fisher exact")


def fisher_exact(
    table: Sequence[Sequence[int]], alternative: str = "two-sided"
) -> tuple[float, float]:
    """(odds ratio, p-value) of a 2x2 table of counts, by scipy."""
    from scipy.stats import fisher_exact as _fisher  # type: ignore[import-untyped]

    arr = np.asarray(table)
    if arr.shape != (2, 2) or (arr < 0).any() or not np.all(np.equal(np.mod(arr, 1), 0)):
        raise ValueError(f"Fisher's exact test needs a 2x2 table of counts (got {table!r})")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be two-sided, less or greater (got {alternative!r})")
    res = _fisher(arr.astype(int), alternative=alternative)
    return float(res.statistic), float(res.pvalue)


def permutation_test(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    max_exact: int = 20_000,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float | None:
    """Two-sided p-value for a difference of means between two samples.

    Exact when the number of ways to split the pooled sample is at most `max_exact` (every
    split counted), otherwise a seeded Monte Carlo estimate with the +1 correction so p is
    never 0. Why a permutation test: 7 or 20 runs per condition are too few to trust a t
    test's normality.
    """
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if xs.size == 0 or ys.size == 0:
        return None
    pooled = np.concatenate([xs, ys])
    n, k = pooled.size, xs.size
    observed = abs(xs.mean() - ys.mean())
    eps = 1e-12 * max(1.0, abs(observed))  # ties in floating point count as "as extreme"
    total = pooled.sum()
    if math.comb(n, k) <= max_exact:
        hits = count = 0
        for chosen in itertools.combinations(range(n), k):
            s = pooled[list(chosen)].sum()
            diff = abs(s / k - (total - s) / (n - k))
            hits += diff >= observed - eps
            count += 1
        return hits / count
    rng = np.random.default_rng(seed)
    perms = rng.permuted(np.tile(pooled, (n_resamples, 1)), axis=1)
    diffs = np.abs(perms[:, :k].mean(1) - perms[:, k:].mean(1))
    hits = int((diffs >= observed - eps).sum())
    return (hits + 1) / (n_resamples + 1)


def diff_means(
    x: Sequence[float],
    y: Sequence[float],
    *,
    seed: int = 0,
    level: float = 0.95,
    n_boot: int = 10_000,
) -> Difference:
    """mean(x) - mean(y) with a percentile bootstrap interval (each sample resampled on its own)
    and a permutation-test p-value."""
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if xs.size == 0 or ys.size == 0:
        return Difference(None, None, None, None, "permutation")
    d = float(xs.mean() - ys.mean())
    rng = np.random.default_rng(seed)
    bx = xs[rng.integers(0, xs.size, (n_boot, xs.size))].mean(1)
    by = ys[rng.integers(0, ys.size, (n_boot, ys.size))].mean(1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(bx - by, [alpha, 1 - alpha])
    return Difference(d, float(lo), float(hi), permutation_test(xs, ys, seed=seed), "permutation")


def sign_flip_test(
    d: Sequence[float] | np.ndarray,
    *,
    max_exact: int = 16,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float | None:
    """Two-sided p-value that paired differences `d` have mean 0: every sign flip counted when
    there are at most `max_exact` pairs, else a seeded Monte Carlo estimate (+1 correction)."""
    ds = np.asarray(d, float)
    if ds.size == 0:
        return None
    observed = abs(ds.mean())
    eps = 1e-12 * max(1.0, observed)
    if ds.size <= max_exact:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=ds.size)))
        means = np.abs((signs * ds).mean(1))
        return float((means >= observed - eps).mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(n_resamples, ds.size))
    hits = int((np.abs((signs * ds).mean(1)) >= observed - eps).sum())
    return (hits + 1) / (n_resamples + 1)


def diff_paired(
    x: Sequence[float], y: Sequence[float], *, seed: int = 0, level: float = 0.95
) -> Difference:
    """mean(x - y) over pairs (x[i], y[i]) (runs of two conditions with the same seed) with a
    percentile bootstrap interval of the mean difference and a sign-flip test p-value."""
    if len(x) != len(y):
        raise ValueError(f"paired samples need the same length (got {len(x)} and {len(y)})")
    d = np.asarray(x, float) - np.asarray(y, float)
    if d.size == 0:
        return Difference(None, None, None, None, "sign flip")
    est = float(statistics.fmean(d.tolist()))
    lo, hi = bootstrap_ci(d.tolist(), seed=seed, level=level)
    assert lo is not None and hi is not None
    return Difference(est, min(lo, est), max(hi, est), sign_flip_test(d, seed=seed), "sign flip")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of the p-values of the tests actually run (None: no test,
    not counted): the family-wise error rate stays at the level chosen, for any dependence
    between the tests, and it is never less powerful than Bonferroni's."""
    ran = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(ran)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(ran):
        running = max(running, min(1.0, (m - rank) * p))  # adjusted p-values never decrease
        out[i] = running
    return out
