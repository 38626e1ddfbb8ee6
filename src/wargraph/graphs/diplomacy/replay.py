"""Critical state analysis for Diplomacy (used by `wargraph replay`): where an engine phase
starts in a game's checkpoints, when a replayed stretch stops, and what the replays produced."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wargraph.graphs.diplomacy.rules as W
from wargraph.graphs.diplomacy.schemas import RELATIONS
from wargraph.graphs.diplomacy.view import relationships_of
from wargraph.kernel.state import Event

_PHASE_NAME = re.compile(r"[SFW]\d{4}[MRA]")


def _engine_phase(values: dict[str, Any]) -> str | None:
    saved = (values.get("world") or {}).get("diplomacy")
    return W.phase_info(saved).name if saved else None


def checkpoint_label(values: dict[str, Any]) -> str | None:
    return _engine_phase(values)


def critical_state(phase: str) -> Callable[[Any], bool]:
    """The start of engine phase `phase` (e.g. F1903M): the checkpoint where the engine is at that
    phase and the graph is about to run its `negotiate`."""
    name = phase.strip().upper()
    if not _PHASE_NAME.fullmatch(name):
        raise ValueError(
            f"--phase {phase!r}: expected an engine phase such as S1901M, F1903M, F1903R or W1903A"
        )

    def holds(snap: Any) -> bool:
        return tuple(snap.next or ()) == ("negotiate",) and _engine_phase(snap.values) == name

    return holds


def replay_stop(start: dict[str, Any], values: dict[str, Any], phases: int) -> bool:
    """Stop at the start of the first movement phase after at least `phases` engine phases were
    played from the fork (so a fall movement includes its retreats and adjustments), or at the end."""
    if values.get("done"):
        return True
    if values.get("next") != "negotiate" or values.get("asks"):
        return False
    first, now = _engine_phase(start), _engine_phase(values)
    if not first or not now or now == first or not now.endswith("M"):
        return False
    names = [p["name"] for p in values["world"]["diplomacy"]["phases"]]
    played = names[names.index(first) : names.index(now)] if first in names else []
    return len(played) >= phases


def _new_events(start: dict[str, Any], end: dict[str, Any]) -> list[Event]:
    seen = {e["id"] for e in start.get("events", [])}
    return [e for e in end.get("events", []) if e["id"] not in seen]


def replay_outcome(start: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """What a replayed stretch produced: orders per phase, centres (and their change), each
    power's relationship labels and shifts (Enemy -2 ... Ally +2), messages sent."""
    new = _new_events(start, end)
    before = W.phase_info(start["world"]["diplomacy"])
    after = W.phase_info(end["world"]["diplomacy"])
    orders = {
        e["data"]["phase"]: e["data"]["orders"]
        for e in new
        if e["kind"] == "narration" and "records" in (e.get("data") or {})
    }
    centres = {p: len(after.centers.get(p, [])) for p in W.POWERS}
    value = {r: i - 2 for i, r in enumerate(RELATIONS)}
    relations: dict[str, dict[str, Any]] = {}
    for p in W.POWERS:
        old = relationships_of(start.get("events", []), p)
        mine = [e for e in new if e["kind"] == "diary" and e["author"] == p]
        if not mine:
            continue
        now = relationships_of(start.get("events", []) + mine, p)
        relations[p] = {
            o: {"label": now[o], "shift": value.get(now[o], 0) - value.get(old[o], 0)} for o in now
        }
    return {
        "phases": list(orders),
        "orders": orders,
        "centres": centres,
        "centre_change": {p: centres[p] - len(before.centers.get(p, [])) for p in W.POWERS},
        "relationships": relations,
        "messages": {
            p: sum(e["kind"] == "message" and e["author"] == p for e in new) for p in W.POWERS
        },
    }


def replay_summary(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The distribution over runs: how often each order was given (first replayed phase), centres
    (mean, min, max, counts), relationship labels and mean shifts, messages sent."""
    n = len(outcomes)
    if not n:
        return {"runs": 0}
    orders: dict[str, dict[str, dict[str, int]]] = {}
    for o in outcomes:
        first = o["phases"][0] if o["phases"] else None
        for power, given in (o["orders"].get(first) or {}).items():
            for order in given:
                unit = order if order == "WAIVE" else " ".join(order.split()[:2])
                slot = orders.setdefault(power, {}).setdefault(unit, {})
                slot[order] = slot.get(order, 0) + 1
    centres = {}
    for p in W.POWERS:
        vals = [o["centres"][p] for o in outcomes]
        counts: dict[str, int] = {}
        for v in vals:
            counts[str(v)] = counts.get(str(v), 0) + 1
        centres[p] = {"mean": sum(vals) / n, "min": min(vals), "max": max(vals), "counts": counts}
    relations: dict[str, dict[str, Any]] = {}
    for p in W.POWERS:
        for other in W.POWERS:
            rows = [
                o["relationships"][p][other]
                for o in outcomes
                if other in o["relationships"].get(p, {})
            ]
            if not rows:
                continue
            labels: dict[str, int] = {}
            for r in rows:
                labels[r["label"]] = labels.get(r["label"], 0) + 1
            relations.setdefault(p, {})[other] = {
                "mean_shift": sum(r["shift"] for r in rows) / len(rows),
                "labels": labels,
            }
    messages = {p: sum(o["messages"][p] for o in outcomes) / n for p in W.POWERS}
    return {
        "runs": n,
        "orders": orders,
        "centres": centres,
        "relationships": relations,
        "messages": messages,
    }


def replay_files(start: dict[str, Any], end: dict[str, Any], folder: str | Path) -> list[Path]:
    """A replayed run's maps, drawn on request (`wargraph replay --out`): every phase from the
    fork to where the run stopped, into `folder/maps/`."""
    saved = end["world"]["diplomacy"]
    names = [p["name"] for p in saved["phases"]]
    first = _engine_phase(start)
    since = names.index(first) if first in names else 0
    return W.write_maps(saved, Path(folder) / "maps", names[since:])
