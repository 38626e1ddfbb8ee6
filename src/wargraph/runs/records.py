"""Game records: record.json (scenario, events with audience, world), transcript.md, usage totals."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from wargraph.kernel.state import EVERYONE
from wargraph.runs.trace import CACHED, failure, read_trace
from wargraph.seats.limits import cut_words

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
    seats = seats_from_trace(trace)
    if seats:
        record["seats"] = seats
    coverage = view_coverage(trace)
    if coverage:
        record["view_coverage"] = coverage
    record["events"] = mark_cut_answers(record["events"], trace)
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


# trace lines that carry a prompt (a cached answer's prompt was built and shown as well)
PROMPT_EVENTS = ("call", CACHED, "scripted", "script", "script-ended", "human")


def seats_from_trace(trace: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each seat's model profile and the models that answered it (a resumed game may change
    them): from the prompts it was sent (wargraph.seats.deciders.view_fields)."""
    out: dict[str, dict[str, Any]] = {}
    for e in trace:
        if e.get("event") not in PROMPT_EVENTS or "profile" not in e:
            continue
        seat = out.setdefault(str(e.get("role", "?")), {"profile": e["profile"], "models": []})
        seat["profile"] = e["profile"]
        model = str(e.get("model") or e.get("event"))
        if model not in seat["models"]:
            seat["models"].append(model)
    return dict(sorted(out.items()))  # parallel seats write their lines in any order


def view_coverage(trace: list[dict[str, Any]]) -> dict[str, Any]:
    """What the seats' views showed of the texts given to them (events, messages, diary
    entries, goals), counted once per ask (a re-ask shows the same view): per seat and for the
    game, items and characters shown whole, shortened and left out, and `share`, the share of
    the characters shown whole (1.0: no view cut anything)."""
    per_seat: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for e in trace:
        view = e.get("view")
        if not isinstance(view, dict) or e.get("ask_id") in seen:
            continue
        seen.add(str(e.get("ask_id")))
        seat = per_seat.setdefault(str(e.get("role", "?")), _empty_coverage())
        _add_coverage(seat, view)
    if not per_seat:
        return {}
    game = _empty_coverage()
    for seat in per_seat.values():
        _add_coverage(game, seat)
    for c in [game, *per_seat.values()]:
        c["share"] = round(c["whole"]["chars"] / c["chars"], 4) if c["chars"] else 1.0
    return {**game, "per_seat": dict(sorted(per_seat.items()))}


def _empty_coverage() -> dict[str, Any]:
    return {
        "asks": 0,
        "items": 0,
        "chars": 0,
        **{k: {"items": 0, "chars": 0} for k in ("whole", "shortened", "dropped")},
    }


def _add_coverage(into: dict[str, Any], view: dict[str, Any]) -> None:
    into["asks"] += int(view.get("asks", 1))
    into["items"] += int(view.get("items", 0))
    into["chars"] += int(view.get("chars", 0))
    for k in ("whole", "shortened", "dropped"):
        part = view.get(k) or {}
        into[k]["items"] += int(part.get("items", 0))
        into[k]["chars"] += int(part.get("chars", 0))


def mark_cut_answers(events: list[dict[str, Any]], trace: list[dict[str, Any]]) -> list[Any]:
    """The events, those holding a cut answer (a `cut` trace line: after a re-ask under the
    capable profile, to the field's limit or at the token cap under the small one) with `cut`
    in their data (field, characters written and kept, limit, why), so the record read alone
    is not taken for word for word. Marked events are copies: the game's
    state is not changed."""
    marks: dict[tuple[Any, Any, str], dict[str, Any]] = {}
    for line in trace:
        if line.get("event") != "cut":
            continue
        for cut in line.get("cuts") or []:
            text = _field_of(line.get("output"), str(cut.get("field", "")))
            if isinstance(text, str) and text.strip():
                marks[(line.get("round"), line.get("role"), text.strip())] = dict(cut)
    if not marks:
        return events
    out = []
    for e in events:
        cut = marks.get((e.get("round"), e.get("author"), str(e.get("text", "")).strip()))
        out.append({**e, "data": {**(e.get("data") or {}), "cut": cut}} if cut else e)
    return out


def _field_of(value: Any, path: str) -> Any:
    """`messages[0].text` of an answer's value (None when the path is not there)."""
    for part in path.replace("]", "").split("."):
        name, _, index = part.partition("[")
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        if index:
            value = (
                value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
            )
    return value


def _round_names(record: dict[str, Any]) -> dict[int, str]:
    """The family's name of each round, as the game's page shows it (Diplomacy: the engine phase,
    S1901M); none for families that number their rounds, or when the family's hook fails."""
    from wargraph.view.panels import replay_points

    order = [(e.get("round"), str(e.get("phase", ""))) for e in record.get("events", [])]
    try:
        return replay_points(record, order) or {}
    except Exception:  # noqa: BLE001 — a family's hook must not cost the transcript
        return {}


def transcript(record: dict[str, Any]) -> str:
    """A readable account of the game; private events are marked with their audience."""
    spec = record.get("scenario", {})
    lines = [f"# {spec.get('title', 'Game')}", ""]
    if record.get("error"):
        lines += [f"**Error:** {record['error']}", ""]
    current = None
    names = _round_names(record)
    for e in record.get("events", []):
        if e["round"] != current:
            current = e["round"]
            named = f" · {names[current]}" if current in names else ""
            lines += ["", "## Setup" if current == 0 else f"## Round {current}{named}", ""]
        to = "" if EVERYONE in e["audience"] else f" _(to {', '.join(e['audience'])})_"
        cut = (e.get("data") or {}).get("cut")
        said = f" _({cut_words(cut)})_" if isinstance(cut, dict) else ""
        lines.append(f"**{e['author']}** · {e['kind']}{to}{said}")
        lines.append("")
        lines += [f"> {line}" if line else ">" for line in str(e["text"]).splitlines()]
        lines.append("")
    lines += _seats_and_coverage(record)
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


def _seats_and_coverage(record: dict[str, Any]) -> list[str]:
    """The transcript's table of seats: profile, models and how much of what each was given its
    views showed whole (record["view_coverage"])."""
    seats = record.get("seats") or {}
    coverage = (record.get("view_coverage") or {}).get("per_seat") or {}
    if not seats and not coverage:
        return []
    out = ["## Seats and view coverage", "", "| seat | profile | models | shown whole |"]
    out.append("|---|---|---|---|")
    for role in sorted(set(seats) | set(coverage)):
        s, c = seats.get(role, {}), coverage.get(role)
        whole = f"{c['share']:.0%} of {c['chars']} characters" if c else "-"
        out.append(
            f"| {role} | {s.get('profile', '?')} | {', '.join(s.get('models', []))} | {whole} |"
        )
    game = record.get("view_coverage") or {}
    if game:
        out += [
            "",
            f"View coverage of the game: {game['share']:.1%} of the characters given to the seats were shown whole.",
        ]
    return out + [""]


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
    except RecursionError:
        raise RecordError(f"{p}: not a valid record.json (nested too deeply to read)") from None
    if not isinstance(data, dict) or "events" not in data or "scenario" not in data:
        raise RecordError(f"{p}: not a wargraph record (no events or scenario)")
    return data
