"""Tournament harness cost: a scripted Diplomacy tournament of bots (greedy, hold, random legal,
the seeded scripted decider) over the seven powers, in-process and as Ray tasks.

    python -m benchmarks.tournament             # 100 games per mode (to 1902, no press)
    python -m benchmarks.tournament --quick     # 20 games per mode

Modes: `processes` (the default for games of bots and scripted seats: forked worker
processes, concurrency = CPU count), `threads` (the same games in threads of one process, as
`workers: threads` plays them), `ray` (one task per game on a local instance).

Reported: games per minute per mode (schedule, play, records and the report; each game's page
is written after the run, timed apart; the local Ray instance's start-up apart), CPU seconds
per game (this process and its worker processes; the machine's load skews it less than the
rate; not measured for Ray, whose workers are not this process's children), the load average
as each mode starts, and the report's own cost (ratings with 200 bootstrap draws, figures)
from the stored games. Ray runs a local instance on this machine's CPUs, inside a network
namespace with only loopback when this runs as root (else on the machine's own address)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    console,
    finish,
    load_average,
    result_payload,
    rich_table,
    target,
    targets_table,
)

NAME = "tournament"
GAMES_PER_MINUTE = 150  # issue 30: the 100-game scripted tournament, pages after the run
ENTRANTS = {
    "greedy": {"model": "bot:greedy"},
    "hold": {"model": "bot:hold"},
    "random": {"model": "bot:random_legal"},
    "scripted": {"model": "scripted"},
}


def spec(games: int, concurrency: int, workers: str = "auto") -> dict[str, Any]:
    return {
        "name": "bench_tournament",
        "scenario": "diplomacy",
        "set": {
            "diplomacy.max_year": 1902,
            "diplomacy.negotiation_rounds": 0,
            "diplomacy.diary": False,
            "diplomacy.maps": "none",
        },
        "entrants": ENTRANTS,
        "rotations": max(1, games // len(ENTRANTS)),
        "score": "centres",
        "concurrency": concurrency,
        "workers": workers,
    }


def cpu_seconds() -> float:
    """CPU of this process and of its children that have ended (the worker processes, once
    their pool is shut down at the end of the run)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_mode(mode: str, games: int, workdir: Path) -> dict[str, Any]:
    from wargraph.evals.tournament import load_tournament, report_only, run_tournament

    cpus = os.cpu_count() or 2
    t = load_tournament(spec(games, cpus, "threads" if mode == "threads" else "auto"))
    out = workdir / mode
    load = load_average()
    start, cpu = time.perf_counter(), cpu_seconds()
    result = run_tournament(t, out, ray="local" if mode == "ray" else None, show_progress=False)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    t0 = time.perf_counter()
    report_only(t, out)
    report_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    report_only(t, out, pages=True)  # every game's page, after the run (`--pages`)
    pages_s = time.perf_counter() - t0
    n = len(result.games)
    top = result.standing_lines()[0] if result.standing.fit is not None else ""
    return {
        "mode": mode,
        "games": n,
        "crashed": result.counts.get("crashed", 0),
        "seconds": round(seconds, 2),
        "games_per_minute": round(60 * n / seconds, 1) if seconds else None,
        "cpu_s_per_game": None if mode == "ray" or not n else round(cpu / n, 3),
        "load_average": load,
        "report_seconds": round(report_s, 2),
        "pages_seconds": round(pages_s, 2),
        "games_per_minute_with_pages": round(60 * n / (seconds + pages_s), 1) if seconds else None,
        "leader": top,
    }


def warm_up(workdir: Path) -> None:
    """A four-game tournament first, not counted: the modes that follow all start with the
    code imported and the game's graph compiled, as the second run of a process would."""
    from wargraph.evals.tournament import load_tournament, run_tournament

    t = load_tournament({**spec(4, 1, "threads"), "name": "bench_warm_up"})
    run_tournament(t, workdir / "warm-up", show_progress=False)


def ray_part(games: int, workdir: Path) -> dict[str, Any]:
    """The Ray mode in this process: a local instance, started once (not in the rate)."""
    from wargraph.evals.experiment.cluster import connect_ray

    t = time.perf_counter()
    started_ray = connect_ray("local", os.cpu_count() or 2)
    start_s = round(time.perf_counter() - t, 2)
    try:
        return {**run_mode("ray", games, workdir), "ray_start_s": start_s}
    finally:
        if started_ray:
            import ray

            ray.shutdown()


def ray_row(games: int, workdir: Path) -> dict[str, Any]:
    """Ray binds the machine's own address unless it runs in a network namespace of its own
    with only loopback (NOTES.md): there when root and `unshare` allow it, else here."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return ray_part(games, workdir)
    out = workdir / "ray.json"
    cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable]
    cmd += ["-m", "benchmarks.tournament", "--ray-part", str(out), "--games", str(games)]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode or not out.exists():
        return {"error": f"the Ray part failed ({done.returncode}): {done.stderr[-300:]}"}
    return json.loads(out.read_text(encoding="utf-8"))


def run(
    *, quick: bool = False, write: bool = True, show: bool = True, games: int | None = None
) -> dict[str, Any]:
    started, load_at_start = time.perf_counter(), load_average()
    games = games or (20 if quick else 100)
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-tournament-"))
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    rows, skipped, ray_start_s = [], {}, None
    try:
        warm_up(workdir)
        rows.append(run_mode("processes", games, workdir))
        rows.append(run_mode("threads", games, workdir))
        try:
            import ray  # noqa: F401
        except ImportError:
            skipped["ray"] = "ray is not installed (pip install 'wargraph[scale]')"
        else:
            row = ray_row(games, workdir)
            ray_start_s = row.pop("ray_start_s", None)
            if "error" in row:
                skipped["ray"] = row["error"]
            else:
                rows.append(row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        games=games,
        game="diplomacy to 1902, no press, no diaries; 4 entrants (bots + scripted) x 7 powers",
        ray_start_s=ray_start_s,
        rows=rows,
        skipped=skipped,
        targets=[
            target(
                "tournament: scripted games per minute, worker processes (pages after the run)",
                rows[0].get("games_per_minute"),
                GAMES_PER_MINUTE,
                rule=">=",
            )
        ],
        notes=[
            "processes: games in forked worker processes (the default for bots and scripted "
            "seats), threads: games in threads of this process (workers: threads); both at "
            "concurrency = CPU count; ray: one task per game on a local instance started once "
            "(ray_start_s, not in the rates), in a network namespace of its own with only "
            "loopback when run as root",
            "cpu_s_per_game: CPU seconds of this process and its worker processes per game "
            "(the report included), which the machine's load skews less than games/min; "
            "load_average: as the mode started (2 cores shared with other work)",
            "report_seconds: report-only from the stored games (ratings, 200 bootstrap draws, "
            "figures), no game replayed",
            "pages_seconds: every game's page written after the run (report-only --pages); "
            "games/min with pages counts them in",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    console.print(
        rich_table(
            f"Scripted Diplomacy tournament, {p['games']} games per mode ({p['game']})",
            [
                "mode",
                "games",
                "crashed",
                "seconds",
                "games/min",
                "CPU s/game",
                "load",
                "report s",
                "pages s",
                "games/min with pages",
                "leader",
            ],
            [
                [
                    r["mode"],
                    r["games"],
                    r["crashed"],
                    r["seconds"],
                    r["games_per_minute"],
                    r.get("cpu_s_per_game"),
                    (r.get("load_average") or [None])[0],
                    r["report_seconds"],
                    r.get("pages_seconds"),
                    r.get("games_per_minute_with_pages"),
                    r["leader"],
                ]
                for r in p["rows"]
            ],
            caption=(
                f"Ray start-up {p['ray_start_s']:.1f} s (not in the rates)"
                if p["ray_start_s"] is not None
                else ""
            ),
        )
    )
    for k, why in p["skipped"].items():
        console.print(f"[yellow]{k} skipped[/]: {why}")
    if p.get("targets"):
        console.print(targets_table("Targets", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tournament", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--games", type=int, help="games per mode (default 100, quick 20)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--ray-part", type=Path, help=argparse.SUPPRESS)  # the namespaced run
    args = parser.parse_args(argv)
    if args.ray_part:
        workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-tournament-ray-"))
        try:
            row = ray_part(args.games or 100, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        args.ray_part.write_text(json.dumps(row), encoding="utf-8")
        return row
    return run(quick=args.quick, write=not args.no_write, games=args.games)


if __name__ == "__main__":
    main()
