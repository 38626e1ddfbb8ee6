"""Game records: record.json (scenario, events with audience, world), transcript.md, usage totals."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from wargraph.kernel.state import EVERYONE
from wargraph.runs.trace import CACHED, failure, read_trace

RECORD_VERSION = 1
MAX_RECORD_BYTES = 1 << 30  # read whole: /dev/zero named as a record must not be


class RecordError(ValueError):
    pass


def usage_from_trace(trace: list[dict[str, Any]]) -> dict[str, Any]:
    """Real token counts and latency per role, from the model calls in the trace. Answers taken
    from the model cache are no calls: a role's `cached` counts them (present only then)."""
    per_role: dict[str, dict[str, float]] = defaultdict(
        lambda: {
            "calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "latency_s": 0.0,
            "faults": 0,
        }
    )
    fallbacks = 0
    for entry in trace:
        role = entry.get("role", "?")
        if entry.get("event") == "call":
            r = per_role[role]
            r["calls"] += 1
            r["prompt_tokens"] += entry.get("prompt_tokens", 0)
            r["completion_tokens"] += entry.get("completion_tokens", 0)
            r["latency_s"] = round(r["latency_s"] + entry.get("latency_s", 0.0), 4)
        elif entry.get("event") == CACHED:  # reused, not paid for: counted apart
            r = per_role[role]
            r["cached"] = r.get("cached", 0) + 1
        elif entry.get("event") == "fault":
            per_role[role]["faults"] += 1
        elif entry.get("event") == "fallback":
            fallbacks += 1
    return {"per_role": dict(per_role), "fallbacks": fallbacks}


def build_record(
    values: dict[str, Any], *, thread_id: str, trace_path: str | Path | None = None
) -> dict[str, Any]:
    trace = read_trace(trace_path) if trace_path else []
    record = {
        "version": RECORD_VERSION,
        "thread_id": thread_id,
        "scenario": values.get("spec", {}),
        "round": values.get("round", 0),
        "done": bool(values.get("done")),
        "error": values.get("error", ""),
        "events": values.get("events", []),
        "world": values.get("world", {}),
        "usage": usage_from_trace(trace),
    }
    models = models_from_trace(trace)
    if models:  # games on models (not scripted seats alone): which calls ran on which model
        record["models"] = models
    if failure(trace_path):  # a cut trace under-counts: say so rather than look complete
        record["trace_error"] = f"the trace could not be written in full ({failure(trace_path)})"
    return record


def models_from_trace(trace: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Which calls ran on which model (a game resumed on another model has several): per model,
    its answered calls, the seats it played and the first and last round it answered."""
    out: dict[str, dict[str, Any]] = {}
    for e in trace:
        if e.get("event") != "call" or not e.get("model"):
            continue
        m = out.setdefault(
            str(e["model"]), {"calls": 0, "roles": [], "first_round": None, "last_round": None}
        )
        m["calls"] += 1
        role = str(e.get("role", "?"))
        if role not in m["roles"]:
            m["roles"].append(role)
        r = e.get("round")
        if isinstance(r, int):
            m["first_round"] = r if m["first_round"] is None else min(m["first_round"], r)
            m["last_round"] = r if m["last_round"] is None else max(m["last_round"], r)
    return out


def transcript(record: dict[str, Any]) -> str:
    """A readable account of the game; private events are marked with their audience."""
    spec = record.get("scenario", {})
    lines = [f"# {spec.get('title', 'Game')}", ""]
    if record.get("error"):
        lines += [f"**Error:** {record['error']}", ""]
    current = None
    for e in record.get("events", []):
        if e["round"] != current:
            current = e["round"]
            lines += ["", "## Setup" if current == 0 else f"## Round {current}", ""]
        to = "" if EVERYONE in e["audience"] else f" _(to {', '.join(e['audience'])})_"
        lines.append(f"**{e['author']}** · {e['kind']}{to}")
        lines.append("")
        lines += [f"> {line}" if line else ">" for line in str(e["text"]).splitlines()]
        lines.append("")
    usage = record.get("usage", {}).get("per_role", {})
    if usage:
        lines += [
            "## Model use",
            "",
            "| role | calls | prompt tokens | completion tokens | seconds |",
        ]
        lines.append("|---|---|---|---|---|")
        for role, u in sorted(usage.items()):
            lines.append(
                f"| {role} | {u['calls']} | {u['prompt_tokens']} | {u['completion_tokens']} "
                f"| {u['latency_s']:.1f} |"
            )
    return "\n".join(lines).strip() + "\n"


def write_record(record: dict[str, Any], out_dir: str | Path) -> Path:
    """transcript.md, then record.json, each written whole: the record is the last of the set,
    so a record is never beside an older transcript, and no half-written file is left."""
    from wargraph.runs.rundir import write_set

    record_text = json.dumps(record, indent=2, ensure_ascii=False, default=str)
    write_set(out_dir, {"transcript.md": transcript(record), "record.json": record_text})
    return Path(out_dir) / "record.json"


def load_record(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if p.is_dir():
        p = p / "record.json"
    if not p.exists():
        raise RecordError(f"{p}: no such record (expected a record.json or a folder holding one)")
    from wargraph.runs.userfiles import UserFileError, read_regular

    try:
        data = json.loads(read_regular(p, MAX_RECORD_BYTES).decode("utf-8"))
    except UserFileError as err:
        raise RecordError(str(err)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise RecordError(f"{p}: not a valid record.json ({err})") from None
    if not isinstance(data, dict) or "events" not in data or "scenario" not in data:
        raise RecordError(f"{p}: not a wargraph record (no events or scenario)")
    return data
