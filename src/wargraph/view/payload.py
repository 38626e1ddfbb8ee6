"""What the page shows, built from a game's record and trace: phases in the game's order, each
phase's events and model calls, per seat; who had each private event in a prompt; costs."""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from typing import Any

from wargraph.kernel.state import EVERYONE
from wargraph.view.pack import Lines
from wargraph.view.panels import where, whole

# Trace lines that stand for a question asked of a seat (the rest are stops and notes).
ASKED = ("call", "rejected", "fallback", "fault", "scripted", "human", "corrected")
NEEDLE = 42  # characters of an event's first quoted line that identify it in a prompt


def _key(at: tuple[int, str]) -> str:
    return f"r{at[0]}.{at[1]}"


def seats_and_groups(record: dict[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """The seats in the scenario's order (players, then the control) and the groups each seat
    belongs to (itself and its teams: an event addressed to a team reaches its members)."""
    from wargraph.kernel.scenario import ScenarioError, validate_data

    spec = record.get("scenario") or {}
    try:
        sc = validate_data(spec, "record.json")
        seats = list(sc.roles)
        return seats, {s: sorted(sc.groups_of(s)) for s in seats}
    except (ScenarioError, ValueError, TypeError, KeyError):
        # an unknown (plug-in) family or an old record: the players and authors it names
        players = list((spec.get("players") or {}) if isinstance(spec, dict) else [])
        authors = [e.get("author") for e in record.get("events", []) if isinstance(e, dict)]
        seats = list(dict.fromkeys([*players, *(a for a in authors if isinstance(a, str))]))
        return seats, {s: [s] for s in seats}


def _phases(events: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(round, phase) in the game's order: rounds ascending; within a round the phases in the
    order of their first event (the record is in the game's order), and a phase that asked
    questions but recorded nothing right after the phase asked before it."""

    seq = list(dict.fromkeys(where(e) for e in events))
    before: tuple[int, str] | None = None
    for c in calls:
        k = where(c)
        if k not in seq:
            at = seq.index(before) + 1 if before in seq and before[0] == k[0] else None
            if at is None:  # the round's first phase, or a round of its own
                at = next((n for n, s in enumerate(seq) if s[0] >= k[0]), len(seq))
            seq.insert(at, k)
        before = k
    return sorted(seq, key=lambda k: k[0])  # stable: keeps the order within a round


def _call(entry: dict[str, Any], p: int, lines: Lines) -> dict[str, Any]:
    msgs = entry.get("messages") or []
    out = entry.get("output")
    call: dict[str, Any] = {
        "p": p,
        "role": str(entry.get("role", "?")),
        "task": str(entry.get("task", "")),
        "node": str(entry.get("node", "")),
        "ev": str(entry.get("event", "")),
        "model": str(
            entry.get("model", "") or ("scripted" if entry.get("event") == "scripted" else "")
        ),
        "attempt": whole(entry.get("attempt")),
        "pt": whole(entry.get("prompt_tokens")),
        "ct": whole(entry.get("completion_tokens")),
        "lat": float(entry.get("latency_s") or 0.0),
        "msgs": [
            [str(m.get("role", "")), lines.ids(m.get("content", ""))]
            for m in msgs
            if isinstance(m, dict)
        ],
        "size": sum(len(str(m.get("content", ""))) for m in msgs if isinstance(m, dict)),
    }
    if out not in (None, ""):
        call["out"] = lines.ids(out if isinstance(out, str) else _plain(out))
    reason = entry.get("reason") or entry.get("error") or entry.get("cause")
    if entry.get("event") == "corrected":
        reason = corrected_reason(entry) or reason
    if reason:
        call["reason"] = str(reason)
    return call


def corrected_reason(entry: dict[str, Any]) -> str:
    """What a correction of an answer changed: the side names the model misspelt, put right in
    the record, and the prompt's own words it restated, left out of it."""
    fixes = entry.get("corrections")
    named = [
        f"{f.get('written')} -> {f.get('name')}"
        for f in (fixes if isinstance(fixes, list) else [])
        if isinstance(f, dict)
    ]
    restated = entry.get("restated")
    dropped = [str(r) for r in (restated if isinstance(restated, list) else []) if r]
    parts = [f"names put right: {'; '.join(named)}"] if named else []
    if dropped:
        quoted = " / ".join(f"\u201c{d}\u201d" for d in dropped)
        parts.append(f"the prompt's own words, restated, left out: {quoted}")
    return "; ".join(parts)


def _plain(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _trail(data: Any, lines: Lines) -> list[list[Any]]:
    """A secretary's verdict: each proposal it was given and why it was sent back, as
    [proposal lines, reason lines, source] (`data.trail` of a verdict event)."""
    trail = data.get("trail") if isinstance(data, dict) else None
    if not isinstance(trail, list):
        return []
    out = []
    for step in trail:
        if isinstance(step, dict):
            reasons = step.get("reasons") or []
            reasons = reasons if isinstance(reasons, list) else [reasons]
            out.append(
                [
                    lines.ids(_plain(step.get("proposal"))),
                    lines.ids("\n".join(map(str, reasons))),
                    str(step.get("source", "")),
                ]
            )
    return out


def cut_note(data: Any) -> str:
    """What the page says under a cut answer (`data.cut`, records.py): as the transcript says
    it, and which field."""
    from wargraph.seats.limits import cut_words

    cut = data.get("cut") if isinstance(data, dict) else None
    if not isinstance(cut, dict):
        return ""
    return f"{cut_words(cut)} ({cut.get('field')})"


def _first_line(text: Any) -> str | None:
    for line in str(text or "").splitlines():
        if line.strip():
            return line
    return None


def _quotes(line: str, first: str) -> bool:
    """Whether a prompt's quoted line is this first line: whole, or cut short and marked with
    an ellipsis (`views.shorten`, the Diplomacy budget)."""
    body = line[2:]
    if body == first:
        return True
    cut = body.removesuffix(" …")
    return cut != body and len(cut) >= NEEDLE - 2 and first.startswith(cut.rstrip())


def knowledge(
    events: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    lines: Lines,
    groups: dict[str, list[str]],
) -> None:
    """For each event, per seat, the first call whose prompt quoted it (`seen`: seat -> call
    number), at or after the event's own phase. Looked up by the quoted line's start, so the
    cost is one pass over the prompts, not events x prompts. A text that several events share
    (a secretary's "accepted your actions") tells nothing about which one a seat was shown:
    it counts only for the seats each event was addressed to."""
    openings = Counter(ev.get("_first") for ev in events)
    by_start: dict[str, list[int]] = defaultdict(list)  # a quoted line's start -> line ids
    for lid, line in enumerate(lines.table):
        if line.startswith("> "):
            by_start[line[:NEEDLE]].append(lid)
    first: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for ci, call in enumerate(calls):
        for _, ids in call["msgs"]:
            for lid in ids:
                seats = first[lid]
                mine = seats[call["role"]]
                if not mine or mine[-1] != ci:
                    mine.append(ci)
    for ev in events:
        first_line = ev.pop("_first", None)
        if not first_line:
            continue
        seen: dict[str, int] = {}
        for lid in by_start.get(("> " + first_line)[:NEEDLE], ()):
            if not _quotes(lines.table[lid], first_line):
                continue  # another text that opens with the same words
            for seat, cis in first.get(lid, {}).items():
                for ci in cis:
                    if calls[ci]["p"] >= ev["p"]:
                        if seat not in seen or ci < seen[seat]:
                            seen[seat] = ci
                        break
        if openings[first_line] > 1 and EVERYONE not in ev["audience"]:
            told = set(ev["audience"])
            seen = {s: ci for s, ci in seen.items() if told & set(groups.get(s, [s]))}
        if seen:
            ev["seen"] = seen


# answers no model gave: the scripted decider, a seat's script, a person
NOT_MODEL = ("scripted", "human", "script", "script-ended")


def costs(calls: list[dict[str, Any]], seats: list[str]) -> dict[str, dict[str, Any]]:
    """Per seat: model calls (a re-ask is a call of its own) with their tokens and seconds, and
    apart from them the answers no model gave, so a scripted or a person's seat costs nothing."""
    out: dict[str, dict[str, Any]] = {}
    for s in [*seats, *(c["role"] for c in calls)]:
        out.setdefault(
            s,
            {
                "calls": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "latency_s": 0.0,
                "reasked": 0,
                "fallbacks": 0,
                "faults": 0,
                "other_answers": 0,
                "models": [],
            },
        )
    for c in calls:
        row = out[c["role"]]
        if c["ev"] in NOT_MODEL:
            row["other_answers"] += 1
        elif c["ev"] == "call":
            row["calls"] += 1
            row["prompt_tokens"] += c["pt"]
            row["completion_tokens"] += c["ct"]
            row["latency_s"] = round(row["latency_s"] + c["lat"], 4)
            if c["attempt"] > 1:
                row["reasked"] += 1
        elif c["ev"] == "fallback":
            row["fallbacks"] += 1
        elif c["ev"] == "fault":
            row["faults"] += 1
        if c["model"] and c["model"] not in row["models"]:
            row["models"].append(c["model"])
    return out


def coverage_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Per seat, its profile and what its views showed of the texts given to them (the record's
    `view_coverage`, wargraph.runs.records), then the game's row; empty for older records."""
    cover = record.get("view_coverage")
    if not isinstance(cover, dict):
        return []
    found = record.get("seats")
    seats: dict[str, Any] = found if isinstance(found, dict) else {}
    rows = []
    for seat, c in sorted((cover.get("per_seat") or {}).items()):
        if isinstance(c, dict):
            profile = (seats.get(seat) or {}).get("profile", "")
            rows.append({"seat": str(seat), "profile": str(profile), **_coverage_of(c)})
    rows.append({"seat": "the game", "profile": "", **_coverage_of(cover)})
    return rows


def _coverage_of(c: dict[str, Any]) -> dict[str, Any]:
    def part(k: str) -> list[int]:
        found = c.get(k)
        v: dict[str, Any] = found if isinstance(found, dict) else {}
        return [int(v.get("items", 0) or 0), int(v.get("chars", 0) or 0)]

    share = c.get("share")
    return {
        "asks": int(c.get("asks", 0) or 0),
        "items": int(c.get("items", 0) or 0),
        "chars": int(c.get("chars", 0) or 0),
        "share": float(share) if isinstance(share, int | float) else None,
        "whole": part("whole"),
        "shortened": part("shortened"),
        "dropped": part("dropped"),
    }


def replay_command(thread: str, fork: str, db: str | None) -> str:
    """`wargraph replay` forking the game at `fork` (quoted for a shell: ids and paths are data)."""
    parts = ["wargraph", "replay", "--db", db or "wargraph.sqlite", "--thread", thread]
    return shlex.join([*parts, "--phase", fork, "--runs", "3"])


def build_payload(
    record: dict[str, Any],
    trace: list[dict[str, Any]],
    *,
    db: str | None = None,
    panels: Any = None,
    replay: bool = True,
) -> dict[str, Any]:
    """The page's data. `panels(record, phases, lines)` adds a family's panels per phase
    (`phases` is the list of (round, phase) keys in order)."""
    lines = Lines()
    spec = record.get("scenario") or {}
    seats, groups = seats_and_groups(record)
    events_in = [e for e in record.get("events", []) if isinstance(e, dict)]
    asked = [t for t in trace if isinstance(t, dict) and t.get("event") in ASKED]
    order = _phases(events_in, [{**t, "phase": t.get("node")} for t in asked])
    index = {_key(at): i for i, at in enumerate(order)}
    thread = str(record.get("thread_id") or "?")
    # the store named on the command line, else the one the game was played with
    recorded = record.get("db")
    db = db or (recorded if isinstance(recorded, str) and recorded.strip() else None)

    phases: list[dict[str, Any]] = []
    names = round_names(record, order)
    hooks = names or {rnd: str(rnd) for rnd, _ in order if rnd >= 1}  # the generic fork point
    for rnd, ph in order:
        group = (
            "Setup" if rnd == 0 else f"Round {rnd}" + (f" · {names[rnd]}" if rnd in names else "")
        )
        label = group if rnd == 0 else f"{group} · {ph}"
        entry: dict[str, Any] = {
            "key": _key((rnd, ph)),
            "round": rnd,
            "phase": ph,
            "label": label,
            "short": ph if rnd else "setup",
            "group": group,
            "events": [],
            "calls": [],
        }
        fork = hooks.get(rnd) if replay else None
        if fork:
            entry["replay"] = replay_command(thread, fork, db)
        phases.append(entry)

    calls = []
    for t in asked:
        p = index[_key(where(t))]
        calls.append(_call(t, p, lines))
        phases[p]["calls"].append(len(calls) - 1)

    events: list[dict[str, Any]] = []
    for e in events_in:
        p = index[_key(where(e))]
        audience = e.get("audience") or [EVERYONE]
        ev: dict[str, Any] = {
            "i": len(events),
            "id": str(e.get("id", "")),
            "p": p,
            "kind": str(e.get("kind", "")),
            "author": str(e.get("author", "")),
            "audience": [str(a) for a in audience] if isinstance(audience, list) else [EVERYONE],
            "text": lines.ids(e.get("text", "")),
        }
        trail = _trail(e.get("data"), lines)
        if trail:
            ev["trail"] = trail
        cut = cut_note(e.get("data"))
        if cut:
            ev["cut"] = cut
        ev["_first"] = _first_line(e.get("text"))  # public events too: who was shown it
        events.append(ev)
        phases[p]["events"].append(ev["i"])

    knowledge(events, calls, lines, groups)
    for entry in phases:
        entry["counts"] = {"events": len(entry["events"]), "calls": len(entry["calls"])}
    family_panels = panels(record, order, lines) if panels else {}
    usage_note = record.get("trace_error")
    return {
        "v": 1,
        "title": str(spec.get("title") or "Game"),
        "family": str(spec.get("family") or "crisis"),
        "thread": thread,
        "done": bool(record.get("done")),
        "error": str(record.get("error") or ""),
        "trace_note": str(usage_note)
        if usage_note
        else (
            ""
            if trace
            else "no model calls were recorded for this game (no trace.jsonl): "
            "prompts and costs are not shown"
        ),
        "seats": seats,
        "groups": groups,
        "phases": phases,
        "start": 1 if len(phases) > 1 and phases[0]["round"] == 0 else 0,
        "events": events,
        "calls": calls,
        # model calls as `wargraph` counts them ("Model calls: N answered"): the other lines of
        # a call (rejected, corrected, fallback, fault) describe a call already counted
        "model_calls": sum(1 for c in calls if c["ev"] == "call"),
        "panels": {str(k): v for k, v in family_panels.items()},
        "costs": costs(calls, seats),
        "coverage": coverage_rows(record),
        "L": lines.table,
    }


def round_names(record: dict[str, Any], order: list[tuple[int, str]]) -> dict[int, str]:
    """A family's name for each round, which is also where `wargraph replay --phase` forks it
    (Diplomacy: the engine phase, S1901M); empty for families that number their rounds."""
    from wargraph.view.panels import replay_points

    return replay_points(record, order) or {}
