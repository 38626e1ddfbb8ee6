"""CPU per Diplomacy movement phase the way AI_Diplomacy's figure was measured (issue 43): the
`wargraph play` command in its own process, the default store (SQLite `wargraph.sqlite` in the
working folder) and maps (the final position), every model call over HTTP to a loopback stub
that answers at once (`fake_endpoint`, latency 0, in its own process), one negotiation round
(the reference's `--num_negotiation_rounds 1`), seed 0, games to 1905.

    python -m benchmarks.like_for_like              # 5 games
    python -m benchmarks.like_for_like --repeats 8
    python -m benchmarks.like_for_like --against /work/main   # and another checkout, alternated

CPU is the process's own (user + system, every thread), read from inside it by the engine probe
(`benchmarks/engine_probe`) each time the `diplomacy` engine adjudicates a phase: per movement
phase = the CPU from the end of 1901's last adjudication to the end of 1905's / the movement
phases adjudicated between (eight: S1902M-F1905M; the retreat and adjustment phases between are
charged to them). The start-up (imports, model clients) and the end (record, maps) are left
out: the same game's start-up varied by seconds from run to run, more than eight phases' work,
which made the earlier difference of two whole games (to 1905 less to 1901) swing by 40%.
Games are alternated between checkouts; the least of them is the figure (other work on the
machine only adds CPU seconds; on these two shared cores up to twice as many at load 4-5), the
median beside it. Next to it the ratio to AI_Diplomacy's figure (`benchmarks.reference`), with
what each side ran. That figure was measured by hand (this benchmark cannot run AI_Diplomacy:
Python 3.13, and its code is not committed here) with the same probe, in runs alternated game
by game with this command, and is scaled here by how fast the machine runs Python now against
then (`benchmarks.calibrate`, measured between the games). wargraph's figure from those runs is
printed beside today's. Target: <= 0.33x of the scaled figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.calibrate import python_seconds
from benchmarks.common import (
    REPO,
    console,
    finish,
    load_average,
    result_payload,
    rich_table,
    target,
    targets_table,
)
from benchmarks.reference import (
    AI_DIPLOMACY_RUN,
    CALIBRATION_S,
    CPU_PER_MOVEMENT_PHASE,
    WARGRAPH_IN_THE_SAME_RUN,
)

NAME = "like_for_like"
RATIO_LIMIT = 0.33
ROUNDS = 1  # the reference's negotiation rounds
SHORT, LONG = 1901, 1905
WARGRAPH_RUN = (
    "wargraph's CLI (`wargraph play diplomacy`) in its own process, the default store (SQLite "
    "wargraph.sqlite, sealed and encrypted checkpoints) and maps (final position), every model "
    "call over HTTP (langchain-openai) to benchmarks/fake_endpoint.py answering at once, "
    f"diplomacy.negotiation_rounds={ROUNDS}, seed 0"
)


PROBE = Path(__file__).resolve().parent / "engine_probe"


def cli_game(url: str, year: int, folder: Path, tree: Path = REPO) -> dict[str, Any]:
    """One `wargraph play` process of the checkout `tree` to `year` in `folder` (its working
    folder: the default store is created there): its CPU (user + system, from the kernel), wall,
    the phases it played, and the engine probe's line for each adjudication."""
    folder.mkdir(parents=True)
    probe = folder / "adjudications.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join((str(PROBE), str(tree / "src"))),
        "WARGRAPH_ENGINE_PROBE": str(probe),
    }
    command = [
        *(sys.executable, "-m", "wargraph.cli", "play", "diplomacy"),
        *("--model", f"openai:fake@{url}", "--seed", "0", "--out", str(folder / "out")),
        *("--set", f"diplomacy.negotiation_rounds={ROUNDS}"),
        *("--set", f"diplomacy.max_year={year}"),
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode:
        raise RuntimeError(f"wargraph play exited {proc.returncode}: {err[-600:]}")
    record = json.loads((folder / "out" / "record.json").read_text())
    phases = [str(p["name"]) for p in record["world"]["diplomacy"]["phases"]]
    return {
        "year": year,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "wall_s": round(wall, 2),
        "phases": phases,
        "adjudications": adjudications(probe),
        "store": (folder / "wargraph.sqlite").is_file(),
        "tree": str(tree),
    }


def adjudications(probe: Path) -> list[dict[str, Any]]:
    """The engine probe's lines (phase adjudicated, process CPU and wall after it)."""
    if not probe.is_file():
        raise RuntimeError(f"{probe}: the engine probe wrote nothing (was the engine imported?)")
    return [json.loads(line) for line in probe.read_text().splitlines() if line.strip()]


def _year(phase: str) -> int:
    return int(phase[1:-1])


def phase_cpu(lines: list[dict[str, Any]], first: int = SHORT, last: int = LONG) -> dict[str, Any]:
    """CPU per movement phase of one game from its probe lines: from the end of year `first`'s
    last adjudication to the end of year `last`'s, over the movement phases adjudicated between."""
    before = [line for line in lines if _year(line["phase"]) <= first]
    upto = [line for line in lines if _year(line["phase"]) <= last]
    if not before or len(upto) <= len(before):
        raise RuntimeError(f"no phases adjudicated after {first} up to {last}: {lines}")
    between = [line["phase"] for line in upto[len(before) :]]
    moves = sum(1 for name in between if name.endswith("M"))
    cpu = upto[-1]["cpu_s"] - before[-1]["cpu_s"]
    return {
        "phases_between": between,
        "movement_phases_between": moves,
        "cpu_between_s": round(cpu, 4),
        "cpu_per_movement_phase_s": round(cpu / max(1, moves), 4),
    }


def per_phase(games: list[dict[str, Any]]) -> dict[str, Any]:
    """One checkout's figure over its games (module docstring): the least and the median of the
    games' CPU per movement phase."""
    figures = [phase_cpu(g["adjudications"]) for g in games]
    each = [f["cpu_per_movement_phase_s"] for f in figures]
    least = min(each)
    return {
        "tree": games[0]["tree"],
        "phases_between": figures[0]["phases_between"],
        "movement_phases_between": figures[0]["movement_phases_between"],
        "cpu_per_movement_phase_each_s": each,
        "cpu_game_least_s": min(g["cpu_s"] for g in games),
        "cpu_per_movement_phase_s": round(least, 4),
        "cpu_per_movement_phase_median_s": round(statistics.median(each), 4),
        "x_ai_diplomacy": round(least / CPU_PER_MOVEMENT_PHASE.value, 3),
    }


def scale_of(speeds: list[float]) -> float:
    """How much slower (> 1) or faster this machine runs Python now than when AI_Diplomacy's
    figure was measured: the workload's least seconds now over then (least: other work only adds
    seconds, as with the games)."""
    return round(min(speeds) / CALIBRATION_S, 3) if speeds else 1.0


def run(
    *,
    quick: bool = False,
    write: bool = True,
    show: bool = True,
    repeats: int = 5,
    against: Path | None = None,
) -> dict[str, Any]:
    from benchmarks.fake_endpoint import FakeEndpoint

    started, load_at_start = time.perf_counter(), load_average()
    repeats = 2 if quick else repeats
    trees = [REPO, *([against] if against else [])]
    games: list[dict[str, Any]] = []
    speeds: list[float] = []  # the Python workload's seconds, between the games
    with tempfile.TemporaryDirectory(prefix="wargraph-bench-l4l-") as tmp:
        workdir = Path(tmp)
        with FakeEndpoint(latency_s=0.0, log_dir=workdir) as endpoint:
            for t, tree in enumerate(trees):  # bytecode written, disk caches warm
                cli_game(endpoint.url, SHORT, workdir / f"warm-up{t}", tree)
            for i in range(repeats):
                for t, tree in enumerate(trees):  # alternated: a change of load hits all alike
                    speeds.append(python_seconds(3))
                    games.append(cli_game(endpoint.url, LONG, workdir / f"g{i}-{t}", tree))
    rows = [per_phase([g for g in games if g["tree"] == str(tree)]) for tree in trees]
    scale = scale_of(speeds)
    for row in rows:
        row["x_ai_diplomacy_scaled"] = round(
            row["cpu_per_movement_phase_s"] / (CPU_PER_MOVEMENT_PHASE.value * scale), 3
        )
    mine = rows[0]
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        repeats=repeats,
        wargraph_run=WARGRAPH_RUN,
        reference=CPU_PER_MOVEMENT_PHASE.as_dict(),
        wargraph_in_the_reference_run=WARGRAPH_IN_THE_SAME_RUN,
        games=[{k: v for k, v in g.items() if k not in ("phases", "adjudications")} for g in games],
        rows=rows,
        cpu_per_movement_phase_s=mine["cpu_per_movement_phase_s"],
        x_ai_diplomacy=mine["x_ai_diplomacy"],
        x_ai_diplomacy_scaled=mine["x_ai_diplomacy_scaled"],
        calibration={
            "then_s": CALIBRATION_S,
            "now_s": min(speeds),
            "now_all_s": speeds,
            "scale": scale,
            "ai_diplomacy_scaled_s": round(CPU_PER_MOVEMENT_PHASE.value * scale, 4),
        },
        targets=[
            target(
                "like_for_like: CPU per movement phase, CLI, default store, HTTP to an instant "
                "stub, 1 round / AI_Diplomacy's same way, scaled to this machine's speed now",
                mine["x_ai_diplomacy_scaled"],
                RATIO_LIMIT,
                rule="<=",
                unit="x",
            )
        ],
        notes=[
            f"wargraph: {WARGRAPH_RUN}",
            f"AI_Diplomacy: {AI_DIPLOMACY_RUN}; {CPU_PER_MOVEMENT_PHASE.label()}",
            f"per movement phase: the process's CPU from the end of {SHORT}'s last adjudication to"
            f" the end of {LONG}'s (engine probe) / movement phases between (the retreat and"
            " adjustment phases between charged to them); least of the games, median beside",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    ref = p["reference"]
    what = "CLI process, default SQLite store and maps, HTTP to an instant stub, 1 round"
    rows: list[list[Any]] = [
        [
            f"wargraph ({Path(r['tree']).parent.name}/{Path(r['tree']).name})",
            what,
            r["cpu_game_least_s"],
            f"{r['cpu_per_movement_phase_s']} ({r['cpu_per_movement_phase_median_s']})",
            f"{r.get('x_ai_diplomacy_scaled', '-')} (unscaled {r['x_ai_diplomacy']})",
        ]
        for r in p["rows"]
    ]
    cal = p.get("calibration") or {}
    same = p.get("wargraph_in_the_reference_run") or WARGRAPH_IN_THE_SAME_RUN
    rows.append(
        [
            f"wargraph {same['commit']} in the reference's own run",
            "the same command, alternated game by game with AI_Diplomacy "
            f"({ref.get('brief') or ref['load']})",
            "",
            f"{same['cpu_per_movement_phase_s']} ({same['median_s']})",
            same["x_ai_diplomacy"],
        ]
    )
    rows.append(
        [
            "AI_Diplomacy (reference)",
            f"CLI process, its files and maps, HTTP to an instant stub, 1 round "
            f"({ref.get('brief') or ref['load']}; {ref['spread']})",
            "",
            f"{ref['value']}; scaled to now: {cal.get('ai_diplomacy_scaled_s', '-')}",
            1.0,
        ]
    )
    first = p["rows"][0]
    console.print(
        rich_table(
            "CPU per Diplomacy movement phase, like for like with AI_Diplomacy",
            [
                "side",
                "what ran",
                f"least CPU of a whole game to {LONG} (s)",
                "CPU / movement phase (s; median)",
                "x",
            ],
            rows,
            caption=f"{p['repeats']} games each; {first['movement_phases_between']} "
            f"movement phases between ({', '.join(first['phases_between'])}); load at start "
            f"{p['load_average_at_start']}, at end {p['machine']['load_average']}; Python "
            f"workload {cal.get('now_s', '-')} s now, {cal.get('then_s', '-')} s in the "
            f"reference's runs: x{cal.get('scale', '-')}",
        )
    )
    console.print(targets_table("Target", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.like_for_like", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(
        quick=args.quick, write=not args.no_write, repeats=args.repeats, against=args.against
    )


if __name__ == "__main__":
    main()
