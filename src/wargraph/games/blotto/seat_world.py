"""What a side's seat page shows of a Colonel Blotto game (`Family.seat_world`): the fronts with
their points and the budget (the public rules), who took each front last round and the score,
from the results the side has seen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def panels(scenario: Any, values: Mapping[str, Any], seat: str) -> list[dict[str, Any]]:
    from wargraph.kernel.views import visible_events

    cfg = getattr(scenario, "blotto", None)
    if cfg is None:
        return []
    groups = scenario.groups_of(seat) if seat in scenario.roles else {seat}
    seen = visible_events(list(values.get("events") or []), groups)
    results = [e for e in seen if e.get("kind") == "result" and isinstance(e.get("data"), dict)]
    last = results[-1]["data"] if results else {}
    winners = last.get("winners") or {}
    mine = (last.get("allocations") or {}).get(seat) or {}
    columns = ["front", "points"]
    if results:
        columns += [f"taken in round {results[-1].get('round')}", "your force there"]
    rows = []
    for front, points in cfg.fronts.items():
        row = [front, f"{points:g}"]
        if results:
            won = winners.get(front) or []
            row += [
                " and ".join(won) + (" (tied)" if len(won) > 1 else ""),
                str(mine.get(front, "")),
            ]
        rows.append(row)
    scores = last.get("scores") or {}
    note = f"Budget: {cfg.budget} units a round (unspent units are lost)."
    if scores:
        note += " Score: " + ", ".join(f"{s} {v:g}" for s, v in scores.items()) + "."
    return [
        {"kind": "table", "title": "The fronts", "columns": columns, "rows": rows, "note": note}
    ]
