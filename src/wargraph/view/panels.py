"""Family panels: what a game family adds above the seats of a phase (Diplomacy's map, WarAgent's
board, Blotto's allocations, a tabletop's rolls and injects).

A panel is data the page knows how to draw, never code:
  {"kind": "svg", "title": ..., "svg": [line ids]}            an image (drawn as <img>)
  {"kind": "table", "title": ..., "columns": [...], "rows": [[...], ...]}
  {"kind": "text", "title": ..., "text": [line ids]}
A family's panels function is `panels(record, phases, lines) -> {phase index: [panel, ...]}`
(`phases`: the view's (round, phase) keys in order; `lines.ids(text)` stores a text). A plug-in
family names its own on its entry: `Family(..., view_panels="module:function")`, built-ins too
(each built-in's in its package: `src/wargraph/graphs/<family>/panels.py`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from wargraph.view.pack import Lines

log = logging.getLogger(__name__)

Panels = dict[int, list[dict[str, Any]]]
PanelsFn = Callable[[dict[str, Any], list[tuple[int, str]], Lines], Panels]


def whole(value: Any) -> int:
    """A round or count as a number; anything unreadable (an old or odd record) is 0."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def where(item: dict[str, Any]) -> tuple[int, str]:
    """(round, phase) of an event, or of a trace line (its `node`), whatever their types."""
    return whole(item.get("round")), str(item.get("phase") or item.get("node") or "?")


def _family(record: dict[str, Any]) -> str:
    spec = record.get("scenario") or {}
    return str(spec.get("family") or "crisis") if isinstance(spec, dict) else "crisis"


def by_round(phases: list[tuple[int, str]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for i, (rnd, _) in enumerate(phases):
        out[rnd].append(i)
    return out


def at_phase(phases: list[tuple[int, str]], rnd: int, phase: str) -> int | None:
    try:
        return phases.index((rnd, phase))
    except ValueError:
        return None


# --- built-in families --------------------------------------------------------------------------


def event_panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
    """Crisis, tabletop, flow and any family: the die rolls, injects and results recorded in
    the events' data, as a small table in their phase."""
    out: Panels = defaultdict(list)
    for e in record.get("events", []):
        if not isinstance(e, dict):
            continue
        at = at_phase(phases, *where(e))
        data = e.get("data") or {}
        if at is None or not isinstance(data, dict):
            continue
        if e.get("kind") == "roll" and "roll" in data:
            rows = [
                [k, str(data[k])]
                for k in ("die", "roll", "success", "partial", "outcome")
                if k in data
            ]
            out[at].append(
                {"kind": "table", "title": "Die roll", "columns": ["", "value"], "rows": rows}
            )
        elif e.get("kind") == "inject":
            out[at].append(
                {
                    "kind": "text",
                    "title": f"Inject ({', '.join(e.get('audience') or ['*'])})",
                    "text": lines.ids(e.get("text", "")),
                }
            )
    return out


def panels_for(record: dict[str, Any]) -> PanelsFn:
    """The family's panels function (its entry's `view_panels`), else the generic one (rolls
    and injects from the events)."""
    family = _family(record)
    fn = _declared(family, "view_panels")
    return _guarded(fn, f"{family} view_panels") if fn else event_panels


def _declared(family: str, field: str) -> Callable | None:
    """A function the family's entry declares; None when it declares none, or when the family
    cannot be used here (an unknown family, a misspelt reference: said, then the generic view)."""
    from wargraph.kernel.families import FamilyError, attribute

    try:
        return attribute(family, field)
    except FamilyError as exc:
        log.warning("%s; the generic view is shown", exc)
        return None


def _guarded(fn: PanelsFn, ref: str) -> PanelsFn:
    def run(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
        try:
            return fn(record, phases, lines)
        except Exception as exc:  # noqa: BLE001 — a family's panel must not cost the whole view
            log.warning("view panels %s failed (%s: %s)", ref, type(exc).__name__, exc)
            return {
                0: [
                    {
                        "kind": "text",
                        "title": "Panels not drawn",
                        "text": lines.ids(f"{ref} failed: {type(exc).__name__}: {exc}"),
                    }
                ]
            }

    return run


def replay_points(record: dict[str, Any], phases: list[tuple[int, str]]) -> dict[int, str] | None:
    """A family's own fork points for `wargraph replay --phase` (its entry's `replay_points`;
    None: the round numbers)."""
    points = _declared(_family(record), "replay_points")
    return points(record, phases) if points else None
