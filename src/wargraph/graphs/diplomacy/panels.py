"""Diplomacy's panels: the engine's map of every phase (drawn now, never during play) with the
orders given in it, the orders' results and the supply centres; and the engine phase as the fork
point of `wargraph replay --phase`."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from wargraph.view.pack import Lines
from wargraph.view.panels import whole

Panels = dict[int, list[dict[str, Any]]]


def _saved(record: dict[str, Any]) -> dict[str, Any]:
    world = record.get("world") or {}
    saved = world.get("diplomacy") if isinstance(world, dict) else None
    return saved if isinstance(saved, dict) and isinstance(saved.get("phases"), list) else {}


def engine_phases(record: dict[str, Any], phases: list[tuple[int, str]]) -> dict[int, str]:
    """Round -> engine phase name (one kit round is one engine phase): from the events' data
    where they name it, else the saved game's phase list in order."""
    names = [str(p.get("name")) for p in _saved(record).get("phases", []) if isinstance(p, dict)]
    out: dict[int, str] = {}
    for e in record.get("events", []):
        data = e.get("data") if isinstance(e, dict) else None
        rnd = whole(e.get("round")) if isinstance(e, dict) else 0
        if isinstance(data, dict) and isinstance(data.get("phase"), str) and rnd >= 1:
            out.setdefault(rnd, data["phase"])
    for rnd in {r for r, _ in phases if r >= 1}:
        if rnd not in out and rnd - 1 < len(names):
            out[rnd] = names[rnd - 1]
    return out


def replay_points(record: dict[str, Any], phases: list[tuple[int, str]]) -> dict[int, str]:
    """Round -> the engine phase `wargraph replay --phase` forks at (the round's start)."""
    return engine_phases(record, phases)


def _orders_table(phase: dict[str, Any]) -> list[list[str]]:
    orders = phase.get("orders") or {}
    results = phase.get("results") or {}
    rows = []
    for power in sorted(orders):
        for order in orders.get(power) or []:
            unit = " ".join(str(order).split()[:2])
            res = results.get(unit) or []
            rows.append([power, str(order), ", ".join(map(str, res)) or "ok"])
    return rows


def _centres(phase: dict[str, Any]) -> list[list[str]]:
    centres = (phase.get("state") or {}).get("centers") or {}
    units = (phase.get("state") or {}).get("units") or {}
    return [
        [
            power,
            str(len(centres.get(power) or [])),
            str(len(units.get(power) or [])),
            " ".join(map(str, centres.get(power) or [])),
        ]
        for power in sorted(set(centres) | set(units))
    ]


def panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
    from wargraph.graphs.diplomacy.render import render_svg

    saved = _saved(record)
    out: Panels = defaultdict(list)
    if not saved:
        return out
    by_name = {str(p.get("name")): p for p in saved["phases"] if isinstance(p, dict)}
    rounds: dict[int, list[int]] = defaultdict(list)
    for i, (rnd, _) in enumerate(phases):
        rounds[rnd].append(i)
    for rnd, name in sorted(engine_phases(record, phases).items()):
        if not rounds.get(rnd) or name not in by_name:
            continue
        shown: list[dict[str, Any]] = []
        try:
            svg = render_svg(saved, name)
            shown.append(
                {"kind": "svg", "title": f"Map {name} (orders as given)", "svg": lines.svg_ids(svg)}
            )
        except (ValueError, RuntimeError, KeyError) as exc:
            shown.append(
                {"kind": "text", "title": f"Map {name}", "text": lines.ids(f"not drawn: {exc}")}
            )
        phase = by_name[name]
        rows = _orders_table(phase)
        if rows:
            shown.append(
                {
                    "kind": "table",
                    "title": f"Orders and results {name}",
                    "columns": ["power", "order", "result"],
                    "rows": rows,
                }
            )
        cs = _centres(phase)
        if cs:
            shown.append(
                {
                    "kind": "table",
                    "title": f"Supply centres and units at the start of {name}",
                    "columns": ["power", "centres", "units", "which"],
                    "rows": cs,
                }
            )
        for at in rounds[rnd]:  # the same panels on every step of the round (one map)
            out[at] = shown
    return out
