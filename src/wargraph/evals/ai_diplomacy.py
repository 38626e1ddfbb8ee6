"""`wargraph import`: a published AI_Diplomacy game file (`lmvsgame.json`) into a wargraph record
and store, so `wargraph view`, `wargraph eval diplomacy` (reciprocity and aggression without a
judge; promises with one) and `wargraph replay --phase` (Critical State Analysis on someone
else's game) work on it.

AI_Diplomacy saves the `diplomacy` engine's saved game, as wargraph's Diplomacy world does, with
its own additions. What is kept (`KEPT`) and what is not (`NOT_KEPT`) is listed below and in
docs/studies.md. The store gets one checkpoint per engine phase at the point where wargraph's
graph starts that phase (`negotiate` next), written as the `adjudicate` node would write it, so
a fork of any phase plays on from that phase's board, messages and diaries."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wargraph.graphs.diplomacy.engine import outcome_of
from wargraph.runs.records import RecordError

MAX_GAME_BYTES = 256 << 20

KEPT = {
    "phases[].name, state, orders, results": "the board of every phase, the orders and their "
    "results (world.diplomacy, and one adjudication narration per phase with order records)",
    "phases[].messages": "message events (GLOBAL to everyone, else to the two powers)",
    "phases[].state_agents[POWER].relationships": "each power's ratings in a diary event of the "
    "phase (reciprocity reads them)",
    "phases[].state_agents[POWER].full_private_diary": "the phase's diary entries, as the diary "
    "event's text",
    "phases[].state_agents[POWER].goals": "the diary event's goals",
    "phases[].state_agents[POWER].model_id": "which model played the power (record.imported."
    "models, and record.models for per-model analyses)",
    "phases[].state_history_plans": "the diary event's intent",
    "phase_summaries": "in the phase's adjudication narration",
    "id": "record.imported.game_id",
}
NOT_KEPT = {
    "phases[].config": "the AI_Diplomacy run's settings (kept whole in record.imported.config "
    "of the last phase that has one, never applied)",
    "final_agent_states": "the same as the last phase's state_agents",
    "llm_responses.csv, overview.jsonl, logs": "other files of a run: prompts, raw answers, "
    "tokens and costs are not in the game file",
    "phases[].messages[].time_sent": "message order within a phase is kept, not the times",
}


class GameFileError(RecordError):
    """A game file that cannot be imported; the message says why."""


@dataclass
class Imported:
    thread_id: str
    db: str
    record: Path
    phases: list[str]
    models: dict[str, str]


def read_game(path: str | Path) -> dict[str, Any]:
    """The file's JSON, checked to be an AI_Diplomacy (or `diplomacy` engine) saved game of the
    standard map."""
    from wargraph.runs.userfiles import UserFileError, read_regular

    p = Path(path)
    try:
        data = json.loads(read_regular(p, MAX_GAME_BYTES).decode("utf-8"))
    except UserFileError as err:  # it names the file and why
        raise GameFileError(str(err)) from None
    except OSError as err:
        raise GameFileError(f"{p}: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise GameFileError(f"{p}: not JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("phases"), list):
        raise GameFileError(f"{p}: not a game file (expected a JSON object with a `phases` list)")
    if str(data.get("map", "standard")) != "standard":
        raise GameFileError(f"{p}: map {data.get('map')!r}: only the standard map is played here")
    phases = [ph for ph in data["phases"] if isinstance(ph, dict)]
    if len(phases) != len(data["phases"]) or not phases:
        raise GameFileError(f"{p}: every phase must be an object, and there must be one")
    for i, ph in enumerate(phases):
        name = str(ph.get("name", ""))
        if name == "COMPLETED":
            continue
        if (
            len(name) != 6
            or name[0] not in "SFW"
            or not name[1:5].isdigit()
            or name[5] not in "MRA"
        ):
            raise GameFileError(f"{p}: phases[{i}].name {name!r}: expected a phase like S1901M")
        if not isinstance(ph.get("state"), dict) or "units" not in ph["state"]:
            raise GameFileError(f"{p}: phases[{i}] ({name}): no board state")
    return data


def _models(phases: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for ph in phases:
        for power, agent in (ph.get("state_agents") or {}).items():
            if isinstance(agent, dict) and agent.get("model_id"):
                out[str(power)] = str(agent["model_id"])
    return out


def _records(ph: dict[str, Any]) -> list[dict[str, Any]]:
    """Order records as wargraph's adjudication writes them, from the engine's orders and
    results (results are keyed by unit)."""
    results = ph.get("results") or {}
    out = []
    for power, orders in sorted((ph.get("orders") or {}).items()):
        for order in orders or []:
            unit = " ".join(str(order).split()[:2])
            raw = results.get(unit) or []
            out.append(
                {
                    "phase": ph["name"],
                    "power": power,
                    "order": str(order),
                    "result": outcome_of([str(r) for r in raw]),
                    "invalid": False,
                    "defaulted": False,
                }
            )
    return out


def phase_events(
    ph: dict[str, Any], nxt: dict[str, Any] | None, round_: int, summary: str
) -> list[dict[str, Any]]:
    """One phase's messages, diaries and adjudication as wargraph events of round `round_`."""
    name = str(ph["name"])
    events: list[dict[str, Any]] = []
    for i, m in enumerate(ph.get("messages") or []):
        sender, to = str(m.get("sender", "")), str(m.get("recipient", ""))
        public = to in ("GLOBAL", "ALL", "")
        events.append(
            {
                "id": f"r{round_}.negotiate.message.{sender}.imported.{i}",
                "round": round_,
                "phase": "negotiate",
                "kind": "message",
                "author": sender,
                "audience": ["*"] if public else [sender, to],
                "text": str(m.get("message", "")),
                "data": {"to": None if public else to, "phase": name, "source": "imported"},
            }
        )
    plans = ph.get("state_history_plans") or {}
    for power, agent in sorted((ph.get("state_agents") or {}).items()):
        if not isinstance(agent, dict):
            continue
        rel = {str(k).upper(): str(v) for k, v in (agent.get("relationships") or {}).items()}
        entries = [
            str(e) for e in agent.get("full_private_diary") or [] if str(e).startswith(f"[{name}]")
        ]
        goals = agent.get("goals") or []
        events.append(
            {
                "id": f"r{round_}.summarize.diary.{power}",
                "round": round_,
                "phase": "summarize",
                "kind": "diary",
                "author": power,
                "audience": [power],
                "text": "\n".join(entries) or f"{power}: relationships as of {name}",
                "data": {
                    "phase": name,
                    "year": int(name[1:5]),
                    "summary": "\n".join(entries),
                    "intent": str(plans.get(power, "")),
                    "goals": "; ".join(map(str, goals)) if isinstance(goals, list) else str(goals),
                    "relationships": rel,
                    "source": "imported",
                },
            }
        )
    records = _records(ph)
    orders = {p: list(o or []) for p, o in sorted((ph.get("orders") or {}).items())}
    centres = {p: len(c) for p, c in sorted(((nxt or ph)["state"].get("centers") or {}).items())}
    lines = [f"{name} adjudicated."]
    for power in sorted({r["power"] for r in records}):
        mine = [f"{r['order']} ({r['result']})" for r in records if r["power"] == power]
        lines.append(f"{power}: " + "; ".join(mine))
    lines.append("Centres: " + ", ".join(f"{p} {n}" for p, n in centres.items()))
    if summary:
        lines.append(f"Summary: {summary}")
    if nxt is not None:
        lines.append(f"Next: {nxt['name']}")
    events.append(
        {
            "id": f"r{round_}.adjudicate.narration.secretary",
            "round": round_,
            "phase": "adjudicate",
            "kind": "narration",
            "author": "secretary",
            "audience": ["*"],
            "text": "\n".join(lines),
            "data": {
                "phase": name,
                "next_phase": nxt["name"] if nxt else None,
                "orders": orders,
                "records": records,
                "engine_errors": {},
                "centres": centres,
                "sources": {p: ["imported"] for p in orders},
            },
        }
    )
    return events


def _saved_at(template: dict[str, Any], phases: list[dict[str, Any]], i: int) -> dict[str, Any]:
    """The engine's saved game at the start of phase i: phases up to it, its own orders,
    results and messages still to come."""
    keep = ("name", "state", "orders", "results", "messages")
    done = [{k: ph.get(k, {} if k != "messages" else []) for k in keep} for ph in phases[:i]]
    current = {
        "name": phases[i]["name"],
        "state": phases[i]["state"],
        "orders": {},
        "results": {},
        "messages": [],
    }
    return {**template, "phases": [*done, current]}


def import_game(
    path: str | Path, *, db: str, thread_id: str | None = None, out: str | Path | None = None
) -> Imported:
    """Write the game into the store `db` (thread `thread_id`, default `aidip-<game id>`) and
    its record into `out` (default runs/<thread>)."""
    from wargraph.kernel.context import GameContext
    from wargraph.kernel.scenario import load_scenario
    from wargraph.runs.records import build_record, write_record
    from wargraph.runs.runner import GameError, build_for, holds_game, thread_config
    from wargraph.store.saver import open_saver

    data = read_game(path)
    phases = [ph for ph in data["phases"] if ph.get("name") != "COMPLETED"]
    if phases[0]["name"] != "S1901M":
        raise GameFileError(f"{path}: the game starts at {phases[0]['name']}, not S1901M")
    game_id = str(data.get("id") or Path(path).stem)
    thread = thread_id or "aidip-" + "".join(
        c if c.isalnum() or c in "-_" else "_" for c in game_id
    )
    if holds_game(db, thread):
        raise GameError(f"{db} already holds a game on thread {thread!r}; give another --thread")
    models = _models(phases)
    configs = [ph["config"] for ph in phases if isinstance(ph.get("config"), dict)]
    last_year = int(phases[-1]["name"][1:5])
    asked = str(configs[-1].get("max_year") or "") if configs else ""
    # the run's own last year when it names one, so a fork plays on to where it would have
    max_year = max(last_year, int(asked) if asked.isdigit() else last_year)
    scenario = load_scenario("diplomacy", [f"diplomacy.max_year={max_year}"])
    ctx = GameContext(model="scripted")
    summaries = data.get("phase_summaries") or {}
    config = thread_config(thread)
    with open_saver(db) as saver:
        graph = build_for(scenario).compile(checkpointer=saver)
        saver.register_run(
            thread, {"scenario": scenario.model_dump(), "context": dataclasses.asdict(ctx)}
        )
        graph.invoke(
            {"scenario": scenario.model_dump()}, config, context=ctx, interrupt_after=["setup"]
        )
        base = dict(graph.get_state(config).values)
        template = {k: v for k, v in base["world"]["diplomacy"].items() if k != "phases"}
        for i in range(1, len(phases)):
            before = phases[i - 1]
            new = phase_events(before, phases[i], i, str(summaries.get(before["name"], "")))
            world = {**base["world"], "diplomacy": _saved_at(template, phases, i)}
            # two steps, as a played phase ends: secretary_validate hands over to adjudicate,
            # whose write starts the next phase (the checkpoint `replay --phase` forks)
            graph.update_state(
                config, {"round": i, "next": "adjudicate", "asks": []}, as_node="secretary_validate"
            )
            graph.update_state(
                config,
                {"round": i + 1, "world": world, "events": new, "next": "negotiate", "asks": []},
                as_node="adjudicate",
            )
        values = dict(graph.get_state(config).values)
    record = build_record(values, thread_id=thread)
    record["db"] = str(db)
    record["models"] = {
        m: {"calls": 0, "roles": sorted(p for p, mm in models.items() if mm == m)}
        for m in sorted(set(models.values()))
    }
    record["imported"] = {
        "format": "AI_Diplomacy game file",
        "source": str(path),
        "game_id": game_id,
        "models": models,
        "config": configs[-1] if configs else {},
        "kept": list(KEPT),
        "not_kept": list(NOT_KEPT),
    }
    folder = Path(out) if out is not None else Path("runs") / thread
    written = write_record(record, folder)
    return Imported(thread, str(db), written, [str(p["name"]) for p in phases], models)
