"""Intervals and tests of src/wargraph/evals/stats.py against values worked out by hand or published."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import wargraph.evals.stats as stats


def test_wilson_14_of_20_by_hand():
    # By hand: centre (0.7 + z²/40) / (1 + z²/20), half-width z·sqrt(0.7·0.3/20 + z²/1600) / (1 + z²/20)
    z = 1.959963984540054
    denom = 1 + z * z / 20
    centre = (0.7 + z * z / 40) / denom
    half = z * math.sqrt(0.21 / 20 + z * z / 1600) / denom
    w = stats.wilson(14, 20)
    assert w.p == pytest.approx(0.7)
    assert (w.lo, w.hi) == pytest.approx((centre - half, centre + half), abs=1e-12)
    # the published three-decimal values for 14/20
    assert round(w.lo, 3) == 0.481 and round(w.hi, 3) == 0.855


def test_wilson_edges_and_bad_counts():
    zero = stats.wilson(0, 20)
    assert zero.lo == 0.0 and 0.16 < zero.hi < 0.17  # 0/20: upper bound 0.161
    full = stats.wilson(20, 20)
    assert full.hi == 1.0 and round(full.lo, 3) == 0.839
    empty = stats.wilson(0, 0)
    assert empty.p is None and (empty.lo, empty.hi) == (0.0, 1.0)
    assert stats.wilson(1, 20).text() == "1/20 (5%, 1%–24%)"
    with pytest.raises(ValueError, match="0 <= k <= n"):
        stats.wilson(21, 20)
    with pytest.raises(ValueError, match="level"):
        stats.wilson(1, 2, level=1.5)


def test_wilson_other_level_matches_scipy_normal_quantile():
    w90 = stats.wilson(14, 20, level=0.90)
    w95 = stats.wilson(14, 20)
    assert w95.lo < w90.lo < 0.7 < w90.hi < w95.hi


def test_newcombe_difference_published_example():
    # Newcombe (1998), Stat Med 17:873, example (a): 56/70 vs 48/80 -> 0.2 (0.0524, 0.3339)
    d = stats.diff_proportions(56, 70, 48, 80)
    assert d.estimate == pytest.approx(0.2)
    assert round(d.lo, 4) == 0.0524 and round(d.hi, 4) == 0.3339


def test_fisher_exact_tea_tasting():
    # Fisher's lady tasting tea: [[3, 1], [1, 3]]; P(table) by the hypergeometric law
    def prob(a):  # a = cups called milk-first that were milk-first
        return Fraction(math.comb(4, a) * math.comb(4, 4 - a), math.comb(8, 4))

    one_sided = prob(3) + prob(4)  # 16/70 + 1/70
    two_sided = sum(prob(a) for a in range(5) if prob(a) <= prob(3))
    assert one_sided == Fraction(17, 70) and two_sided == Fraction(34, 70)
    odds, p = stats.fisher_exact([[3, 1], [1, 3]])
    assert odds == pytest.approx(9.0)
    assert p == pytest.approx(float(two_sided))
    _, p1 = stats.fisher_exact([[3, 1], [1, 3]], alternative="greater")
    assert p1 == pytest.approx(float(one_sided))


def test_fisher_exact_snow_globe_table_by_hand():
    # hawk-hawk 14/20 vs dove-dove 1/20: two-sided p by summing hypergeometric terms <= observed
    n1, n2, k = 20, 20, 15  # 15 conflicts in all

    def prob(a):
        return Fraction(math.comb(n1, a) * math.comb(n2, k - a), math.comb(n1 + n2, k))

    observed = prob(14)
    p = sum(prob(a) for a in range(0, k + 1) if prob(a) <= observed)
    d = stats.diff_proportions(14, 20, 1, 20)
    assert d.p_value == pytest.approx(float(p), rel=1e-9)
    assert d.p_value < 1e-4
    # Newcombe by hand from the two Wilson intervals: 0.65 - sqrt((0.7-0.4810)² + (0.2361-0.05)²)
    a, b = stats.wilson(14, 20), stats.wilson(1, 20)
    assert round(b.lo, 4) == 0.0089 and round(b.hi, 4) == 0.2361
    assert d.estimate == pytest.approx(0.65)
    assert d.lo == pytest.approx(0.65 - math.sqrt((0.7 - a.lo) ** 2 + (b.hi - 0.05) ** 2))
    assert d.hi == pytest.approx(0.65 + math.sqrt((a.hi - 0.7) ** 2 + (0.05 - b.lo) ** 2))
    assert round(d.lo, 3) == 0.363 and round(d.hi, 3) == 0.810


def test_fisher_rejects_bad_tables():
    with pytest.raises(ValueError, match="2x2"):
        stats.fisher_exact([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="2x2"):
        stats.fisher_exact([[1, -2], [3, 4]])
    with pytest.raises(ValueError, match="alternative"):
        stats.fisher_exact([[1, 2], [3, 4]], alternative="bigger")


def test_permutation_test_exact_by_hand():
    # pooled {1..6}, 20 splits into 3+3; only the two extreme splits have |diff| >= 3
    assert stats.permutation_test([1, 2, 3], [4, 5, 6]) == pytest.approx(2 / 20)
    # identical samples: every split is at least as extreme as a zero difference
    assert stats.permutation_test([1, 1], [1, 1]) == 1.0
    assert stats.permutation_test([], [1.0]) is None


def test_permutation_test_monte_carlo_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 10), rng.normal(0.8, 1, 10)
    exact = stats.permutation_test(x, y, max_exact=10**6)  # C(20, 10) = 184756 splits
    mc1 = stats.permutation_test(x, y, max_exact=0, n_resamples=20_000, seed=5)
    mc2 = stats.permutation_test(x, y, max_exact=0, n_resamples=20_000, seed=5)
    assert mc1 == mc2
    assert mc1 == pytest.approx(exact, abs=0.01)


def test_mean_sd_and_bootstrap():
    mean, sd = stats.mean_sd([2, 4, 4, 4, 5, 5, 7, 9])
    assert mean == 5.0 and sd == pytest.approx(math.sqrt(32 / 7))
    assert stats.mean_sd([3.0]) == (3.0, 0.0)
    assert stats.mean_sd([]) == (None, None)
    assert stats.bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)
    rng = np.random.default_rng(0)
    xs = rng.normal(10, 2, 400)
    lo, hi = stats.bootstrap_ci(xs, seed=1)
    assert stats.bootstrap_ci(xs, seed=1) == (lo, hi)
    assert stats.bootstrap_ci(xs, seed=2) != (lo, hi)
    # the percentile interval of a mean is close to mean ± 1.96·sd/√n for a large normal sample
    se = xs.std(ddof=1) / math.sqrt(xs.size)
    assert lo == pytest.approx(xs.mean() - 1.96 * se, abs=0.05)
    assert hi == pytest.approx(xs.mean() + 1.96 * se, abs=0.05)
    s = stats.summarise([1.0, 2.0, 3.0])
    assert s.n == 3 and s.mean == 2.0 and s.sd == 1.0 and 1.0 <= s.lo <= 2.0 <= s.hi <= 3.0


def test_diff_means():
    d = stats.diff_means([1, 2, 3], [4, 5, 6], seed=0)
    assert d.estimate == -3.0 and d.p_value == pytest.approx(0.1)
    assert d.lo <= -3.0 <= d.hi and d.hi < 0
    assert stats.diff_means([], [1]).estimate is None


def test_paired_difference_uses_the_pairs():
    """Runs with the same seed are pairs: a constant shift is exact, with a point interval,
    although each arm alone varies widely; the sign-flip p-value is exact for few pairs."""
    from wargraph.evals.stats import diff_paired, sign_flip_test

    base = [1.0, 9.0, 4.0, 7.0, 2.0]
    d = diff_paired([b + 1.0 for b in base], base)
    assert d.estimate == 1.0 and d.lo == 1.0 and d.hi == 1.0
    assert d.p_value == pytest.approx(2 / 32)  # only all-plus and all-minus are as extreme
    same = diff_paired(base, base)
    assert (same.estimate, same.lo, same.hi, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert sign_flip_test([]) is None
    with pytest.raises(ValueError, match="same length"):
        diff_paired([1.0], [1.0, 2.0])
