"""Blotto in `wargraph view` (each round: the allocations per front, who won each, the points
and the score) and on a side's seat page (the fronts with their points and the budget, who took
each front in the last result the side has seen, its own force there, and the score)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wargraph.view.allocation_panels import allocation_panels, seat_keys_panel

panels = allocation_panels("Allocations per front", noun="front")


def seat_world(scenario: Any, values: Mapping[str, Any], seat: str) -> list[dict[str, Any]]:
    cfg = getattr(scenario, "blotto", None)
    if cfg is None:
        return []
    note = f"Budget: {cfg.budget} units a round (unspent units are lost)."
    return [
        seat_keys_panel(
            scenario, values, seat, cfg.fronts, title="The fronts", noun="front", note=note
        )
    ]
