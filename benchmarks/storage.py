"""Benchmark 5: storage.

Checkpoint bytes per round and per game with the runner's SQLite checkpointer (`SqliteSaver`),
read back from the database rows: every checkpoint (the game's and each agent seat's private
namespace) and every pending write, each assigned to the round the game was in when it was
written. Then the time to resume a game from its checkpoint: a game stopped halfway (an
exception at a step boundary, as a crash would leave it) is resumed with `wargraph.runner.resume`;
the load of its state and the time to its first new step are reported.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.common import (
    FamilySpec,
    GameMeter,
    console,
    family_module,
    load_average,
    result_payload,
    rich_table,
    scenario_name,
    select_families,
    write_result,
)

NAME = "storage"


class _Stop(Exception):
    """Raised from the progress callback to stop a game at a step boundary."""


def db_rows(db: Path, thread_id: str) -> dict[str, Any]:
    """Bytes of every checkpoint and write of one thread, by round and by namespace."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    conn = sqlite3.connect(str(db))
    try:
        checkpoints = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, type, checkpoint, length(checkpoint), "
            "length(metadata) FROM checkpoints WHERE thread_id = ? ORDER BY rowid",
            (thread_id,),
        ).fetchall()
        writes = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, length(value) FROM writes WHERE thread_id = ?",
            (thread_id,),
        ).fetchall()
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    finally:
        conn.close()
    by_round: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    round_of: dict[tuple[str, str], str] = {}
    current, largest = "0", 0
    channels: dict[str, dict[str, int]] = {"game": defaultdict(int), "seat": defaultdict(int)}
    for ns, cid, type_, blob, size, meta in checkpoints:
        values = serde.loads_typed((type_, blob)).get("channel_values", {})
        # What each checkpoint carries, channel by channel (each re-serialised on its own).
        for channel, value in values.items():
            channels["seat" if ns else "game"][channel] += len(serde.dumps_typed(value)[1])
        if ns == "":
            if values.get("done"):
                current = "post-game"  # after the last round: end phases and the final state
            elif "round" in values:
                current = str(values["round"])
            largest = max(largest, size)
        round_of[(ns, cid)] = current
        part = by_round[current]
        part["checkpoints"] += 1
        part["seat_checkpoints" if ns else "game_checkpoints"] += 1
        part["checkpoint_bytes"] += size + (meta or 0)
        part["seat_bytes" if ns else "game_bytes"] += size + (meta or 0)
    for ns, cid, size in writes:
        part = by_round[round_of.get((ns, cid), current)]
        part["writes"] += 1
        part["write_bytes"] += size or 0
    for part in by_round.values():
        part["bytes"] = part["checkpoint_bytes"] + part["write_bytes"]
    return {
        "by_round": {k: dict(v) for k, v in by_round.items()},
        "channel_bytes": {
            k: dict(sorted(v.items(), key=lambda kv: -kv[1])) for k, v in channels.items()
        },
        "checkpoints": len(checkpoints),
        "seat_checkpoints": sum(1 for c in checkpoints if c[0]),
        "writes": len(writes),
        "bytes": sum(v["bytes"] for v in by_round.values()),
        "largest_game_checkpoint_bytes": largest,
        "db_file_bytes": page_size * pages,
    }


def play_to_db(spec: FamilySpec, scenario: str, overrides: dict[str, Any], db: Path, stop_at=None):
    from wargraph.context import GameContext
    from wargraph.runner import play

    meter = GameMeter(spec.world)

    def progress(node: str, values: dict[str, Any]) -> None:
        meter.progress(node, values)
        if stop_at is not None and meter.steps >= stop_at:
            raise _Stop

    thread_id = f"bench-{time.time_ns()}"
    start = time.perf_counter()
    try:
        result = play(
            scenario,
            overrides=overrides,
            context=GameContext(model="scripted"),
            db=db,
            thread_id=thread_id,
            progress=progress,
        )
    except _Stop:
        result = None
    return thread_id, result, meter.steps, time.perf_counter() - start


def resume_timing(db: Path, thread_id: str) -> dict[str, Any]:
    """Load (scenario, graph, state) on its own, then a real resume to the end."""
    from wargraph.runner import build_for, load_run, resume, sqlite_saver

    start = time.perf_counter()
    sc, _ = load_run(db, thread_id)
    with sqlite_saver(db) as saver:
        graph = build_for(sc).compile(checkpointer=saver)
        state = graph.get_state({"configurable": {"thread_id": thread_id}})
    load_s = time.perf_counter() - start
    first: list[float] = []

    def progress(node: str, values: dict[str, Any]) -> None:
        if not first:
            first.append(time.perf_counter())

    start = time.perf_counter()
    result = resume(db=db, thread_id=thread_id, progress=progress)
    total = time.perf_counter() - start
    return {
        "stopped_at_round": state.values.get("round"),
        "load_state_s": load_s,
        "resume_to_first_step_s": (first[0] - start) if first else None,
        "resume_to_end_s": total,
        "finished": result.finished,
    }


def run(
    *, quick: bool = False, families: list[str] | None = None, write: bool = True, show: bool = True
) -> dict[str, Any]:
    started, load_at_start = time.perf_counter(), load_average()
    specs = select_families(families or (["crisis"] if quick else None))
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-storage-"))
    rows: list[dict[str, Any]] = []
    unavailable: dict[str, str] = {}
    for spec in specs:
        module, why = family_module(spec)
        if module is None:
            unavailable[spec.name] = why
            continue
        scenario = scenario_name(spec, module)
        overrides = dict(spec.long)
        if quick:
            overrides["rounds"] = 3
        db = workdir / f"{spec.name}.sqlite"
        thread_id, result, steps, wall = play_to_db(spec, scenario, overrides, db)
        stats = db_rows(db, thread_id)
        rounds = sorted(int(k) for k in stats["by_round"] if k.isdigit() and k != "0")
        per_round = {r: stats["by_round"][str(r)]["bytes"] for r in rounds}
        crash_db = workdir / f"{spec.name}-crash.sqlite"
        crash_id, _, _, _ = play_to_db(
            spec, scenario, overrides, crash_db, stop_at=max(steps // 2, 1)
        )
        timing = resume_timing(crash_db, crash_id)
        rows.append(
            {
                "family": spec.name,
                "scenario": scenario,
                "rounds": len(rounds),
                "graph_steps": steps,
                "play_s": wall,
                "finished": bool(result and result.finished),
                "bytes_per_game": stats["bytes"],
                "db_file_bytes": stats["db_file_bytes"],
                "checkpoints": stats["checkpoints"],
                "seat_checkpoints": stats["seat_checkpoints"],
                "writes": stats["writes"],
                "largest_game_checkpoint_bytes": stats["largest_game_checkpoint_bytes"],
                "bytes_per_round": per_round,
                "setup_bytes": stats["by_round"].get("0", {}).get("bytes", 0),
                "post_game_bytes": stats["by_round"].get("post-game", {}).get("bytes", 0),
                "mean_bytes_per_round": (sum(per_round.values()) / len(per_round))
                if per_round
                else None,
                "ratio_last_to_first_round": (per_round[rounds[-1]] / per_round[rounds[0]])
                if rounds
                else None,
                "by_round": stats["by_round"],
                "channel_bytes": stats["channel_bytes"],
                **timing,
            }
        )
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        saver="SqliteSaver as wargraph.runner opens it",
        rows=rows,
        unavailable=unavailable,
        targets=[],
        notes=[
            "bytes = checkpoint blobs + metadata + pending-write values, as stored (msgpack)",
            "each game checkpoint stores the whole state (the event record included), so a "
            "round's bytes grow with the length of the record",
            "games of 10 rounds where the family allows (see prompt_growth for the overrides)",
        ],
    )
    if show:
        show_tables(payload)
    if write:
        write_result(NAME, payload)
    return payload


def show_tables(p: dict[str, Any]) -> None:
    def kb(v):
        return None if v is None else v / 1024

    rows, resume_rows = [], []
    for r in p["rows"]:
        pr = {int(k): v for k, v in r["bytes_per_round"].items()}
        first, last = (min(pr), max(pr)) if pr else (None, None)
        rows.append(
            [
                r["family"],
                r["rounds"],
                r["checkpoints"],
                r["seat_checkpoints"],
                r["writes"],
                kb(r["bytes_per_game"]),
                kb(r["db_file_bytes"]),
                kb(r["mean_bytes_per_round"]),
                kb(pr.get(first)),
                kb(pr.get(last)),
                r["ratio_last_to_first_round"],
                kb(r["largest_game_checkpoint_bytes"]),
            ]
        )
        resume_rows.append(
            [
                r["family"],
                r["stopped_at_round"],
                1000 * r["load_state_s"],
                None if r["resume_to_first_step_s"] is None else 1000 * r["resume_to_first_step_s"],
                r["resume_to_end_s"],
                r["play_s"],
                r["finished"],
            ]
        )
    for fam, why in p["unavailable"].items():
        rows.append([fam, why] + [""] * 10)
    console.print(
        rich_table(
            "5. Storage: SQLite checkpoint bytes per game and per round (10-round games where the "
            "family allows, scripted decider)",
            [
                "family",
                "rounds",
                "checkpoints",
                "of seats",
                "writes",
                "KiB/game",
                "DB file KiB",
                "KiB/round mean",
                "KiB round 1",
                "KiB last round",
                "last/first",
                "largest ckpt KiB",
            ],
            rows,
            caption="checkpoints include each seat's private namespace; a round's bytes = the "
            "checkpoints and writes made while the game was in that round",
        )
    )
    chan_rows = []
    for r in p["rows"]:
        for where in ("game", "seat"):
            ch = r["channel_bytes"][where]
            total = sum(ch.values()) or 1
            top = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in list(ch.items())[:4])
            chan_rows.append([r["family"], where, kb(sum(ch.values())), top])
    console.print(
        rich_table(
            "What the checkpoints hold: bytes by state channel (game graph and seat subgraphs)",
            ["family", "checkpoints of", "KiB (channels)", "largest channels"],
            chan_rows,
        )
    )
    console.print(
        rich_table(
            "Resuming a game stopped halfway (at a step boundary) from its SQLite checkpoint",
            [
                "family",
                "stopped in round",
                "load state ms",
                "resume to 1st step ms",
                "resume to end s",
                "whole game s",
                "resumed to the end",
            ],
            resume_rows,
            caption="load state = scenario from the runs table + graph build + compile + "
            "get_state; resume = wargraph.runner.resume",
        )
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.storage", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="crisis only, 3 rounds")
    parser.add_argument("--family", action="append")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, families=args.family, write=not args.no_write)


if __name__ == "__main__":
    main()
