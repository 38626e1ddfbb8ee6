"""Maps: the engine's offline SVG renderer for any phase of a saved game."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from diplomacy.engine.renderer import Renderer

from wargraph.worlds.diplomacy.engine import load


def render_svg(
    saved: Mapping[str, Any],
    phase: str | None = None,
    *,
    incl_orders: bool = True,
    incl_abbrev: bool = False,
) -> str:
    """SVG map (the engine's renderer, offline) of ``phase`` (default: the current one): the
    position at the start of that phase with the orders given in it, if any."""
    phases = list(saved["phases"])
    if phase is not None:
        idx = next((i for i, p in enumerate(phases) if p["name"] == phase), None)
        if idx is None:
            raise ValueError(f"phase {phase!r} not in this game")
        phases = phases[: idx + 1]
    game = load({**saved, "phases": phases})
    svg = Renderer(game).render(incl_orders=incl_orders, incl_abbrev=incl_abbrev)
    if not svg:
        raise RuntimeError("the engine's renderer produced nothing (map SVG missing?)")
    return svg
