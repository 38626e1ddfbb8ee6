"""Blotto bots of known strength (wargraph.seats.bots), reading the ask's `facts` (fronts with their
points, the budget, last round's public allocations).

- `fixed`: the same split every round, weighted by the fronts' points.
- `even`: the budget spread evenly over the fronts (the documented fallback), every round.
- `best_response`: against each opponent's last allocation, the cheapest set of fronts worth the
  most points (one unit more than the opponent on each), the rest spread; `fixed` in round one.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from wargraph.worlds import spread


def _facts(ask: dict[str, Any]) -> dict[str, Any] | None:
    """The facts of a Blotto allocation ask (the fronts with their points), else None."""
    facts = ask.get("facts") or {}
    return facts if "fronts" in facts and "budget" in facts else None


def fixed_split(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    facts = _facts(ask)
    return None if facts is None else spread(facts["fronts"], int(facts["budget"]))


def even(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    return None if _facts(ask) is None else dict(ask["fallback"])


def best_response(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    facts = _facts(ask)
    if facts is None:
        return None
    fronts, budget = facts["fronts"], int(facts["budget"])
    others = [a for side, a in (facts.get("last") or {}).items() if side != facts.get("side")]
    if not others:
        return fixed_split(ask, rng)
    # what it takes to win each front outright against every opponent's last allocation
    need = {f: max(int(a.get(f, 0)) for a in others) + 1 for f in fronts}
    best: tuple[float, int, tuple[str, ...]] = (-1.0, 0, ())
    for k in range(len(fronts), 0, -1):
        for combo in itertools.combinations(fronts, k):
            cost = sum(need[f] for f in combo)
            if cost <= budget:
                best = max(best, (sum(fronts[f] for f in combo), -cost, combo))
    out = {f: (need[f] if f in best[2] else 0) for f in fronts}
    left = spread({f: fronts[f] for f in best[2] or fronts}, budget - sum(out.values()))
    return {f: units + left.get(f, 0) for f, units in out.items()}
