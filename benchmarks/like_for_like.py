"""CPU per Diplomacy movement phase the way AI_Diplomacy's figure was measured (issue 43): the
`wargraph play` command in its own process, the default store (SQLite `wargraph.sqlite` in the
working folder) and maps (the final position), every model call over HTTP to a loopback stub
that answers at once (`fake_endpoint`, latency 0, in its own process), one negotiation round
(the reference's `--num_negotiation_rounds 1`), seed 0.

    python -m benchmarks.like_for_like              # 4 games to 1901 and 4 to 1905, alternated
    python -m benchmarks.like_for_like --repeats 5
    python -m benchmarks.like_for_like --against /work/main   # and another checkout, alternated

CPU is the command's own (user + system, from the kernel's accounting of the child process).
Per movement phase: (least CPU of a game to 1905 - least CPU of a game to 1901) / the movement
phases between (eight: S1902M-F1905M); the start-up, the first year and the end (the record,
the map) cancel out, and the adjustment phases between are charged to the movement phases. The
least of the repeats, because other work on the machine only adds CPU seconds (on these two
shared cores up to twice as many at load 4-5); the same from the medians is printed beside it.
Next to it the ratio to AI_Diplomacy's 0.274 s (`benchmarks.reference`), with what each side
ran. That figure was measured by hand (this benchmark cannot run AI_Diplomacy: Python 3.13, and
its code is not committed here) in runs alternated game by game with this command, and is
scaled here by how fast the machine runs Python now against then (`benchmarks.calibrate`,
measured between the games; the same code ran up to 1.4x slower from one hour to the next).
wargraph's figure from those runs (0.0895 s, 0.326x) is printed beside today's. Target: <= 0.33x
of the scaled figure.
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


def cli_game(url: str, year: int, folder: Path, tree: Path = REPO) -> dict[str, Any]:
    """One `wargraph play` process of the checkout `tree` to `year` in `folder` (its working
    folder: the default store is created there): its CPU (user + system), wall and the phases
    it played."""
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
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
        "store": (folder / "wargraph.sqlite").is_file(),
        "tree": str(tree),
    }


def per_phase(games: list[dict[str, Any]]) -> dict[str, Any]:
    """CPU per movement phase of one checkout's games (module docstring)."""
    short = [g for g in games if g["year"] == SHORT]
    long = [g for g in games if g["year"] == LONG]
    # a record's phases end with the one to play next: the phases played between the two
    between = long[0]["phases"][len(short[0]["phases"]) - 1 : -1]
    moves = sum(1 for name in between if name.endswith("M"))
    # the least CPU of each: other work on the machine only ever adds to a process's CPU
    # seconds (two cores shared: at load 4-5 the same game took up to twice as many)
    cpu_short = min(g["cpu_s"] for g in short)
    cpu_long = min(g["cpu_s"] for g in long)
    per = (cpu_long - cpu_short) / max(1, moves)
    median = (
        statistics.median(g["cpu_s"] for g in long) - statistics.median(g["cpu_s"] for g in short)
    ) / max(1, moves)
    return {
        "tree": games[0]["tree"],
        "phases_between": between,
        "movement_phases_between": moves,
        "cpu_game_short_s": round(cpu_short, 3),
        "cpu_game_long_s": round(cpu_long, 3),
        "cpu_per_movement_phase_s": round(per, 4),
        "cpu_per_movement_phase_medians_s": round(median, 4),
        "x_ai_diplomacy": round(per / CPU_PER_MOVEMENT_PHASE.value, 3),
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
    repeats: int = 4,
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
                for year in (SHORT, LONG):  # alternated: a change of load hits all alike
                    for t, tree in enumerate(trees):
                        speeds.append(python_seconds(3))
                        games.append(
                            cli_game(endpoint.url, year, workdir / f"g{i}-{year}-{t}", tree)
                        )
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
        games=[{k: v for k, v in g.items() if k != "phases"} for g in games],
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
            f"per movement phase: (least CPU to {LONG} - least CPU to {SHORT}) / movement phases"
            " between (the adjustment phases between charged to them); from the medians beside",
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
            f"{r['cpu_game_short_s']} / {r['cpu_game_long_s']}",
            f"{r['cpu_per_movement_phase_s']} ({r['cpu_per_movement_phase_medians_s']})",
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
            f"{same['cpu_per_movement_phase_s']} ({same['from_medians_s']})",
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
                f"least CPU to {SHORT} / {LONG} (s)",
                "CPU / movement phase (s; from medians)",
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
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--against", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(
        quick=args.quick, write=not args.no_write, repeats=args.repeats, against=args.against
    )


if __name__ == "__main__":
    main()
