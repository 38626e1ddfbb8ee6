"""Blotto's panels in `wargraph view`: the allocations per front, who won each, points and scores."""

from __future__ import annotations

from typing import Any

from wargraph.view.pack import Lines
from wargraph.view.panels import Panels, at_phase, event_panels, where


def panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
    out: Panels = event_panels(record, phases, lines)
    for e in record.get("events", []):
        data = (e.get("data") or {}) if isinstance(e, dict) else {}
        if e.get("kind") != "result" or "allocations" not in data:
            continue
        at = at_phase(phases, *where(e))
        if at is None:
            continue
        alloc: dict[str, dict[str, Any]] = data.get("allocations") or {}
        sides = list(alloc)
        fronts = list(dict.fromkeys(f for a in alloc.values() for f in (a or {})))
        winners = data.get("winners") or {}
        rows = [
            [f, *(str((alloc[s] or {}).get(f, "")) for s in sides), _names(winners.get(f)) or "tie"]
            for f in fronts
        ]
        points = data.get("points") or {}
        scores = data.get("scores") or {}
        rows.append(["points", *(str(points.get(s, "")) for s in sides), ""])
        rows.append(["score", *(str(scores.get(s, "")) for s in sides), ""])
        out[at].append(
            {
                "kind": "table",
                "title": "Allocations per front",
                "columns": ["front", *sides, "won by"],
                "rows": rows,
            }
        )
    return out


def _names(value: Any) -> str:
    """A winner or several (a tie): names joined, never a Python list's text."""
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value) if value else ""
