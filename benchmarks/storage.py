"""Benchmark 5: storage.

Checkpoint bytes per round and per game as the runner's store keeps them (SQLite, blobs
compressed, encrypted and sealed by `wargraph.store.saver`): every checkpoint row (the game's and each
agent seat's private namespace, metadata included) and every pending-write row, by their stored
length, each assigned to the round the game was in when it was written. What each checkpoint
holds is read back through the store's own saver (it decrypts and checks every checkpoint), one
channel at a time. Then the time to resume a game from its checkpoint: a game stopped halfway
(an exception at a step boundary, as a crash would leave it) is resumed with
`wargraph.runs.runner.resume`; the load of its state and the time to its first new step are reported.

Targets (issue 12): a 1901-1905 scripted Diplomacy game within 3 MB of checkpoints and a
10-round scripted crisis within 300 kB (decimal units, seat namespaces included); in both, at
most 2 checkpoint writes of a seat per agent step (an agent step is one run of an
`agent_<role>` node; all rows per agent step, the game's included, are reported beside it).
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
    finish,
    load_average,
    result_payload,
    rich_table,
    scenario_name,
    select_families,
    target,
    targets_table,
)

NAME = "storage"

# The games the targets name: Diplomacy as shipped (1901 to its max_year, 1905), and the crisis
# over 10 rounds. Other families play their 10-round game (`FamilySpec.long`).
GAME_OF = {"diplomacy": ({}, "the shipped game, 1901-1905 (to its max_year)")}
# (family, the game, limit, unit, bytes per unit, rounds the game must have had or None)
TARGETS = (
    ("diplomacy", "checkpoints of a scripted Diplomacy game, 1901-1905", 3.0, "MB", 1e6, None),
    ("crisis", "checkpoints of a 10-round scripted crisis", 300.0, "kB", 1e3, 10),
)


class _Stop(Exception):
    """Raised from the progress callback to stop a game at a step boundary."""


def stored_rows(db: Path, thread_id: str) -> tuple[list[tuple], list[tuple], int]:
    """(namespace, checkpoint id, stored bytes) of every checkpoint row (blob and metadata) and
    every write row of one thread, and the file's size. Lengths only, read-only: what the store
    wrote is measured as it lies on disk; nothing is decoded here."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        checkpoints = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, length(checkpoint) + length(metadata)"
            " FROM checkpoints WHERE thread_id = ? ORDER BY rowid",
            (thread_id,),
        ).fetchall()
        writes = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, length(value), task_id FROM writes"
            " WHERE thread_id = ?",
            (thread_id,),
        ).fetchall()
        file_bytes = conn.execute(
            "SELECT page_size * page_count FROM pragma_page_size, pragma_page_count"
        ).fetchone()[0]
    finally:
        conn.close()
    return checkpoints, writes, file_bytes


def read_back(db: Path, thread_id: str) -> dict[tuple[str, str], tuple[dict[str, int], Any]]:
    """Per checkpoint: bytes of each channel as the store serialises it on its own
    (compressed and encrypted), and the game's round then (None in a seat's namespace). Read
    through the saver, which checks every checkpoint against its seal."""
    from wargraph.store.saver import open_saver

    out: dict[tuple[str, str], tuple[dict[str, int], Any]] = {}
    with open_saver(db, create=False) as saver:
        for tup in saver.list({"configurable": {"thread_id": thread_id}}):
            conf = tup.config["configurable"]
            values = tup.checkpoint.get("channel_values", {})
            sizes = {k: len(saver.serde.dumps_typed(v)[1]) for k, v in values.items()}
            where = None
            if conf.get("checkpoint_ns", "") == "":
                where = "post-game" if values.get("done") else str(values.get("round", 0))
            out[(conf.get("checkpoint_ns", ""), conf["checkpoint_id"])] = (sizes, where)
    return out


def db_rows(db: Path, thread_id: str) -> dict[str, Any]:
    """Bytes of every checkpoint and write of one thread, by round and by namespace."""
    checkpoints, writes, file_bytes = stored_rows(db, thread_id)
    held = read_back(db, thread_id)
    if len(held) != len(checkpoints):
        raise RuntimeError(
            f"{db}: {len(checkpoints)} checkpoint rows but the saver read {len(held)} back"
        )
    by_round: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    round_of: dict[tuple[str, str], str] = {}
    current, largest = "0", 0
    channels: dict[str, dict[str, int]] = {"game": defaultdict(int), "seat": defaultdict(int)}
    for ns, cid, size in checkpoints:
        sizes, where = held[(ns, cid)]
        for channel, n in sizes.items():
            channels["seat" if ns else "game"][channel] += n
        if not ns:
            current = where or current
            largest = max(largest, size)
        round_of[(ns, cid)] = current
        part = by_round[current]
        part["checkpoints"] += 1
        part["seat_checkpoints" if ns else "game_checkpoints"] += 1
        part["checkpoint_bytes"] += size
        part["seat_bytes" if ns else "game_bytes"] += size
    for ns, cid, size, _task in writes:
        part = by_round[round_of.get((ns, cid), current)]
        part["writes"] += 1
        part["write_bytes"] += size or 0
        part["seat_bytes" if ns else "game_bytes"] += size or 0
    for part in by_round.values():
        part["bytes"] = part["checkpoint_bytes"] + part["write_bytes"]
    return {
        "by_round": {k: dict(v) for k, v in by_round.items()},
        "channel_bytes": {
            k: dict(sorted(v.items(), key=lambda kv: -kv[1])) for k, v in channels.items()
        },
        "checkpoints": len(checkpoints),
        "seat_checkpoints": sum(1 for c in checkpoints if c[0]),
        # one put_writes call stores one row per channel: its batches are the calls
        "seat_write_batches": len({(w[0], w[1], w[3]) for w in writes if w[0]}),
        "writes": len(writes),
        "bytes": sum(v["bytes"] for v in by_round.values()),
        "seat_bytes": sum(v.get("seat_bytes", 0) for v in by_round.values()),
        "largest_game_checkpoint_bytes": largest,
        "db_file_bytes": file_bytes,
    }


def storage_targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's two targets, from the games played; "not measured" when that game was not
    played to its end (a family left out, or another number of rounds)."""
    by_family = {r["family"]: r for r in rows}
    out = []
    for fam, what, limit, unit, per_unit, rounds in TARGETS:
        r = by_family.get(fam)
        played = r is not None and r["finished"] and rounds in (None, r["rounds"])
        value = r["bytes_per_game"] / per_unit if played else None
        out.append(target(f"{what} ({unit})", value, limit, rule="<=", unit=f" {unit}"))
        per_step = r.get("seat_checkpoint_writes_per_agent_step") if played else None
        out.append(target(f"{fam}: seat checkpoint writes per agent step", per_step, 2, rule="<="))
    return out


def play_to_db(spec: FamilySpec, scenario: str, overrides: dict[str, Any], db: Path, stop_at=None):
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    meter = GameMeter(spec.world)

    def progress(node: str, values: dict[str, Any]) -> None:
        meter.progress(node, values)
        if stop_at is not None and meter.steps >= stop_at:
            raise _Stop

    thread_id = f"bench-{time.time_ns()}"
    start = time.perf_counter()
    try:
        with meter.installed():  # counts the saver's put / put_writes calls too
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
    return thread_id, result, meter, time.perf_counter() - start


def resume_timing(db: Path, thread_id: str) -> dict[str, Any]:
    """Load (scenario, graph, state) on its own, then a real resume to the end."""
    from wargraph.runs.runner import build_for, load_run, resume
    from wargraph.store.saver import open_saver

    start = time.perf_counter()
    sc, _ = load_run(db, thread_id)
    with open_saver(db, create=False) as saver:
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
        overrides, game_note = GAME_OF.get(spec.name, (dict(spec.long), ""))
        db = workdir / f"{spec.name}.sqlite"
        thread_id, result, meter, wall = play_to_db(spec, scenario, overrides, db)
        steps = meter.steps
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
                "game": game_note or f"overrides {overrides}",
                "graph_steps": steps,
                "play_s": wall,
                "finished": bool(result and result.finished),
                "bytes_per_game": stats["bytes"],
                "seat_bytes": stats["seat_bytes"],
                "db_file_bytes": stats["db_file_bytes"],
                "checkpoints": stats["checkpoints"],
                "seat_checkpoints": stats["seat_checkpoints"],
                "writes": stats["writes"],
                "agent_steps": meter.agent_steps,
                # what a seat's step saves in its own namespace, checkpoints and write batches
                # (target: <= 2); the game's checkpoint of that step is shared by its seats
                "seat_checkpoint_writes_per_agent_step": (
                    stats["seat_checkpoints"] + stats["seat_write_batches"]
                )
                / meter.agent_steps
                if meter.agent_steps
                else None,
                # what the issue counted (about 7 per agent step before): every put / put_writes
                "saver_calls_per_agent_step": meter.checkpoint.count / meter.agent_steps
                if meter.agent_steps
                else None,
                "all_rows_per_agent_step": (stats["checkpoints"] + stats["writes"])
                / meter.agent_steps
                if meter.agent_steps
                else None,
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
        saver="the SQLite store as wargraph.runs.runner opens it (compressed, encrypted, sealed)",
        rows=rows,
        unavailable=unavailable,
        targets=storage_targets(rows),
        notes=[
            "bytes = checkpoint rows (blob + metadata) + pending-write values, by their stored "
            "length; the game's namespace and every seat's",
            "the event record and the world are DeltaChannels: a game checkpoint holds them "
            "whole only every few updates; the other checkpoints are rebuilt from the writes",
            "games of 10 rounds where the family allows (see prompt_growth for the overrides); "
            "Diplomacy: the shipped game, 1901-1905",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


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
                kb(r["seat_bytes"]),
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
        rows.append([fam, why] + [""] * 11)
    console.print(
        rich_table(
            "5. Storage: SQLite checkpoint bytes per game and per round, as stored (10-round "
            "games where the family allows, Diplomacy 1901-1905; scripted decider)",
            [
                "family",
                "rounds",
                "checkpoints",
                "of seats",
                "writes",
                "KiB/game",
                "of seats KiB",
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
            caption="load state = scenario from the run metadata + graph build + compile + "
            "get_state; resume = wargraph.runs.runner.resume",
        )
    )
    console.print(targets_table("Storage targets (issue 12)", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.storage", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="crisis only (its 10 rounds)")
    parser.add_argument("--family", action="append")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, families=args.family, write=not args.no_write)


if __name__ == "__main__":
    main()
