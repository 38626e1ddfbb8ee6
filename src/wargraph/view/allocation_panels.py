"""The panels of an allocation game (`wargraph.worlds.Allocate` ... `Outcome`), read from its
round results: events of kind `result` whose data has `allocations` (side -> key -> units),
`winners` (key -> the sides that took it), `points` and `scores` (side -> number).

- `allocation_panels(title, noun)`: a `Family.view_panels` function: per round, a table of each
  side's units per key and who won it, then the round's points and the score;
- `seat_keys_panel(...)`: a side's seat page (`Family.seat_world`): the keys with their points
  and, from the last result that side has seen, who took each and its own units there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wargraph.kernel.views import visible_events
from wargraph.view.panels import Panels, PanelsFn, at_phase, event_panels, where

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.view.pack import Lines


def _names(value: Any) -> str:
    """A winner or several (a tie): names joined, never a Python list's text."""
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value) if value else ""


def allocation_panels(title: str, noun: str = "key", kind: str = "result") -> PanelsFn:
    """The view's panels: the generic ones (`event_panels`), and under each round's result a
    table titled `title` (first column `noun`, then one per side and "won by"; a key nobody
    won outright is a "tie"), ending with the rows `points` and `score`."""

    def panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
        out: Panels = event_panels(record, phases, lines)
        for e in record.get("events", []):
            data = (e.get("data") or {}) if isinstance(e, dict) else {}
            at = at_phase(phases, *where(e)) if "allocations" in data else None
            if e.get("kind") != kind or at is None:
                continue
            alloc: dict[str, dict[str, Any]] = data.get("allocations") or {}
            sides = list(alloc)
            keys = list(dict.fromkeys(k for a in alloc.values() for k in (a or {})))
            winners = data.get("winners") or {}
            rows = [
                [
                    k,
                    *(str((alloc[s] or {}).get(k, "")) for s in sides),
                    _names(winners.get(k)) or "tie",
                ]
                for k in keys
            ]
            for label, field in (("points", "points"), ("score", "scores")):
                rows.append([label, *(str((data.get(field) or {}).get(s, "")) for s in sides), ""])
            columns = [noun, *sides, "won by"]
            out[at].append({"kind": "table", "title": title, "columns": columns, "rows": rows})
        return out

    return panels


def seat_keys_panel(
    scenario: Scenario,
    values: Mapping[str, Any],
    seat: str,
    keys: Mapping[str, float],
    *,
    title: str,
    noun: str = "key",
    note: str = "",
    kind: str = "result",
) -> dict[str, Any]:
    """One table for `seat`'s page: each key with its points and, once a result of `kind` is
    visible to the seat, who took it that round and the seat's own units there; the `note`
    then the score it has seen."""
    groups = scenario.groups_of(seat) if seat in scenario.roles else {seat}
    seen = visible_events(list(values.get("events") or []), groups)
    results = [e for e in seen if e.get("kind") == kind and isinstance(e.get("data"), dict)]
    last = results[-1]["data"] if results else {}
    winners = last.get("winners") or {}
    mine = (last.get("allocations") or {}).get(seat) or {}
    columns = [noun, "points"]
    if results:
        columns += [f"taken in round {results[-1].get('round')}", "your force there"]
    rows = []
    for key, points in keys.items():
        row = [key, f"{points:g}"]
        if results:
            won = winners.get(key) or []
            row += [" and ".join(won) + (" (tied)" if len(won) > 1 else ""), str(mine.get(key, ""))]
        rows.append(row)
    scores = last.get("scores") or {}
    if scores:
        note += " Score: " + ", ".join(f"{s} {v:g}" for s, v in scores.items()) + "."
    return {"kind": "table", "title": title, "columns": columns, "rows": rows, "note": note}
