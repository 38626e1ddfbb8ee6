"""Maps: the engine's offline SVG renderer for any phase of a saved game. Maps are drawn on
request (the end of a game, `wargraph eval diplomacy`), never inside the game loop: one map
costs more than a whole phase of play."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from diplomacy.engine.renderer import Renderer  # type: ignore[import-untyped]

from wargraph.graphs.diplomacy.engine import load


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
    with _RENDER_LOCK:
        renderer = _renderer(game)
        svg = renderer.render(incl_orders=incl_orders, incl_abbrev=incl_abbrev)
    if not svg:
        raise RuntimeError("the engine's renderer produced nothing (map SVG missing?)")
    return svg


# A Renderer parses its map's SVG twice when made (the template, then its metadata): about two
# thirds of a map's CPU. It keeps nothing of a game but the one it draws, so one per map serves
# every game of the process, one drawing at a time.
_RENDERERS: dict[str, Renderer] = {}
_RENDER_LOCK = threading.Lock()


def _renderer(game: Any) -> Renderer:
    key = str(game.map_name)
    renderer = _RENDERERS.get(key)
    if renderer is None:
        renderer = _RENDERERS[key] = Renderer(game)
    renderer.game = game
    return renderer


def write_maps(
    saved: Mapping[str, Any], folder: str | Path, phases: Iterable[str] | None = None
) -> list[Path]:
    """``folder/<PHASE>.svg`` for each of ``phases`` (default: every phase of the game, the
    current one included): each the position at the start of that phase with its orders."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = list(phases) if phases is not None else [p["name"] for p in saved["phases"]]
    out = []
    for name in names:
        path = folder / f"{name}.svg"
        path.write_text(render_svg(saved, name), encoding="utf-8")
        out.append(path)
    return out
