"""Benchmark 6: scale.

Games per minute for one experiment of N scripted games (200; `--quick` 20), run four ways side
by side in one run: in this process (games in threads) or as Ray tasks on a local instance,
each on a SQLite file and on PostgreSQL. Ray's start-up is timed apart (a cluster starts once
per study, not per game). Then one shipped Diplomacy game (scripted, to its last year) is
measured for what docs/scaling.md plans a study from: model calls, prompt tokens per call
(the embedded model's tokenizer), phases, and checkpoint bytes on both stores.

PostgreSQL: WARGRAPH_BENCH_PG_URL (default the local server's Unix socket); each measurement
gets a fresh database, dropped afterwards. Without PostgreSQL or Ray those rows say why.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.common import (
    console,
    finish,
    load_average,
    result_payload,
    rich_table,
)

NAME = "scale"
PG_URL = os.environ.get(
    "WARGRAPH_BENCH_PG_URL", "postgresql:///test?host=/var/run/postgresql&user=postgres"
)
MODES = (
    ("in-process", "sqlite"),
    ("in-process", "postgresql"),
    ("ray", "sqlite"),
    ("ray", "postgresql"),
)


def experiment(games: int) -> dict[str, Any]:
    """Two conditions x games/2 runs of a 2-round crisis, scripted (no model, no judge)."""
    return {
        "name": "scale_bench",
        "scenario": "azuristan_crimsonia",
        "set": {"rounds": 2},
        "model": "scripted",
        "runs": max(1, games // 2),
        "concurrency": os.cpu_count() or 2,
        "langsmith": False,
        "grid": {"persona": {"key": "players.azuristan.persona", "values": ["dove", "hawk"]}},
    }


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the PostgreSQL server, as a URL; dropped on the way out."""
    import psycopg

    name = f"wg_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f"CREATE DATABASE {name}")
        try:
            url = urlsplit(PG_URL)
            yield f"{url.scheme}://{url.netloc}/{name}?{url.query}"
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def database_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


def postgres_missing() -> str:
    try:
        import psycopg

        psycopg.connect(PG_URL, connect_timeout=5).close()
    except Exception as err:  # no extra, no server: the rows say why
        return f"{type(err).__name__}: {str(err).strip()[:120]}"
    return ""


def run_mode(mode: str, store: str, games: int, workdir: Path) -> dict[str, Any]:
    from wargraph.evals.experiment import load_experiment, run_experiment, run_experiment_on_ray

    exp = load_experiment(experiment(games))
    out = workdir / f"{mode}-{store}"
    with contextlib.ExitStack() as stack:
        db = stack.enter_context(fresh_database()) if store == "postgresql" else None
        start = time.perf_counter()
        if mode == "ray":
            res = run_experiment_on_ray(
                exp, out, address="auto", db=db, show_progress=False, report=False
            )
        else:
            res = run_experiment(exp, out, db=db, show_progress=False, report=False)
        seconds = time.perf_counter() - start
        size = database_bytes(db) if db else (out / "checkpoints.sqlite").stat().st_size
    played = res.counts["played"]
    return {
        "mode": mode,
        "store": store,
        "games": played,
        "crashed": res.counts["crashed"],
        "seconds": seconds,
        "games_per_minute": 60 * played / seconds if seconds else None,
        "store_bytes_per_game": size / played if played else None,
    }


def diplomacy_game(workdir: Path, pg: bool) -> dict[str, Any]:
    """One shipped Diplomacy game, scripted: calls, prompt tokens, phases, bytes per store."""
    from benchmarks.common import FAMILIES
    from benchmarks.prompt_growth import play_traced, prompt_tokens
    from benchmarks.storage import play_to_db
    from wargraph.kernel.context import GameContext

    spec = next(f for f in FAMILIES if f.name == "diplomacy")
    result, calls = play_traced(spec, "diplomacy", {}, workdir)
    tokens = [prompt_tokens(c) for c in calls]
    _, sqlite_result, meter, _ = play_to_db(spec, "diplomacy", {}, workdir / "dip.sqlite")
    steps = meter.steps
    row: dict[str, Any] = {
        "phases": result.values.get("round"),
        "calls": len(calls),
        "prompt_tokens": sum(tokens),
        "prompt_tokens_per_call": sum(tokens) / len(tokens) if tokens else None,
        "max_prompt_tokens": max(tokens, default=0),
        "graph_steps": steps,
        "max_tokens_per_answer": GameContext().max_tokens,
    }
    thread = next(iter(_threads(workdir / "dip.sqlite")))
    row["sqlite_bytes"] = sqlite_row_bytes(workdir / "dip.sqlite", thread)
    if pg:
        with fresh_database() as url:
            empty = database_bytes(url)
            exp = {
                "name": "dip_bytes",
                "scenario": "diplomacy",
                "model": "scripted",
                "langsmith": False,
                "measures": False,
            }
            from wargraph.evals.experiment import load_experiment, run_experiment

            run_experiment(
                load_experiment(exp), workdir / "dip-pg", db=url, show_progress=False, report=False
            )
            row["postgresql_bytes"] = database_bytes(url) - empty
    return row


def sqlite_row_bytes(db: Path, thread_id: str) -> int:
    """Bytes of a thread's checkpoints and writes as stored (read as lengths: the blobs are
    sealed by the store and need not be opened to be counted)."""
    import sqlite3

    conn = sqlite3.connect(str(db))
    try:
        (checkpoints,) = conn.execute(
            "SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints "
            "WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        (writes,) = conn.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?", (thread_id,)
        ).fetchone()
    finally:
        conn.close()
    return int(checkpoints) + int(writes)


def _threads(db: Path) -> list[str]:
    from wargraph.runs.runner import list_runs

    return list_runs(db)


def run(
    *, quick: bool = False, write: bool = True, show: bool = True, games: int | None = None
) -> dict[str, Any]:
    started, load_at_start = time.perf_counter(), load_average()
    games = games or (20 if quick else 200)
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-scale-"))
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    no_pg = postgres_missing()
    try:
        import ray  # noqa: F401

        no_ray = ""
    except ImportError:
        no_ray = "ray is not installed (pip install 'wargraph[scale]')"
    rows, skipped, ray_start_s = [], {}, None
    started_ray = False
    try:
        for mode, store in MODES:
            why = (no_ray if mode == "ray" else "") or (no_pg if store == "postgresql" else "")
            if why:
                skipped[f"{mode}/{store}"] = why
                continue
            if mode == "ray" and not started_ray:
                from wargraph.evals.experiment.cluster import connect_ray

                t = time.perf_counter()
                started_ray = connect_ray("local", os.cpu_count() or 2)
                ray_start_s = time.perf_counter() - t
            rows.append(run_mode(mode, store, games, workdir))
    finally:
        if started_ray:
            import ray

            ray.shutdown()
    base = next((r for r in rows if r["mode"] == "in-process" and r["store"] == "sqlite"), None)
    for r in rows:
        r["ratio_to_in_process_sqlite"] = (
            r["games_per_minute"] / base["games_per_minute"]
            if base and base["games_per_minute"]
            else None
        )
    try:
        dip = diplomacy_game(workdir, pg=not no_pg)
    except Exception as exc:  # the rates above still stand
        dip = {"error": f"{type(exc).__name__}: {exc}"}
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        games=games,
        game="azuristan_crimsonia, 2 rounds, scripted; 2 conditions",
        ray_start_s=ray_start_s,
        rows=rows,
        skipped=skipped,
        diplomacy=dip,
        targets=[],
        notes=[
            "in-process: games in threads, `concurrency` = CPU count; ray: one task per game, "
            "num_cpus = CPU count, a local instance started once (ray_start_s, not in the rates)",
            "each store is fresh; store bytes per game include the store's own overhead",
            "diplomacy: the shipped scenario as is (to its max_year), prompts counted with the "
            "embedded model's tokenizer; completions are capped by max_tokens per answer",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    console.print(
        rich_table(
            f"Games per minute, {p['games']} scripted games ({p['game']})",
            [
                "mode",
                "store",
                "games",
                "crashed",
                "seconds",
                "games/min",
                "x in-process SQLite",
                "store KB/game",
            ],
            [
                [
                    r["mode"],
                    r["store"],
                    r["games"],
                    r["crashed"],
                    r["seconds"],
                    r["games_per_minute"],
                    r["ratio_to_in_process_sqlite"],
                    (r["store_bytes_per_game"] or 0) / 1024,
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
    d = p["diplomacy"]
    if "error" in d:
        console.print(f"[red]Diplomacy game not measured[/]: {d['error']}")
        return
    console.print(
        rich_table(
            "One Diplomacy game (shipped scenario, scripted)",
            [
                "phases",
                "calls",
                "prompt tokens",
                "per call",
                "largest",
                "SQLite KB",
                "PostgreSQL KB",
            ],
            [
                [
                    d["phases"],
                    d["calls"],
                    d["prompt_tokens"],
                    d["prompt_tokens_per_call"],
                    d["max_prompt_tokens"],
                    d["sqlite_bytes"] / 1024,
                    (d.get("postgresql_bytes") or 0) / 1024,
                ]
            ],
        )
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--games", type=int, help="games per mode (default 200, quick 20)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, write=not args.no_write, games=args.games)


if __name__ == "__main__":
    main()
