"""Benchmark 4: concurrency — many games at once in one process (`wargraph.runs.batch.play_many`).

Part 1 (issue 12, target 7): games per minute with N = 1, 8, 32, 64 games in flight against a
loopback OpenAI-compatible fake endpoint (benchmarks/fake_endpoint.py, its own process) that
answers every call after a fixed 200 ms with a valid answer, so the numbers are the harness's,
not a model's. Each game is the crisis scenario, 2 rounds, no post-game questions (6 calls);
every row plays 2N games (at least 4) on one shared SQLite store with records on disk, and the
endpoint limit is 2N (never binding: a game's two seats plan at once). Target: games/min at
N >= 0.7 * N * games/min at N = 1, up to N = 32.
Three bounds explain where it stops scaling: the endpoint latency (N games each as fast as the
N = 1 game), the endpoint limit (limit / 200 ms calls per second) and the process's CPU (under
the GIL one core: 60 s / CPU seconds per game); two extra rows at N = 32 isolate the SQLite
store (in-memory checkpoints instead) and the default endpoint limit of 4.

Part 2: N = 1, 2, 4 games at once vs one after another against llama.cpp's own
`python -m llama_cpp.server` serving the embedded GGUF, started here on a free port and stopped
at the end. Reports the speed-up (sequential wall / concurrent wall) and where it stops scaling.
Each side runs twice per N, alternating which goes first, and the fastest run of each side is
compared (N = 1 compares two identical runs: its speed-up is the noise floor of the machine).
Each game is the crisis scenario with one round and no post-game questions (three model calls:
two plans and the umpire's narrative) with short answers, so the run stays within minutes on a
two-core machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
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
from benchmarks.fake_endpoint import FakeEndpoint
from benchmarks.server_process import ServerProcess
from wargraph.models.chat import endpoint_concurrency

NAME = "concurrency"
GAME = "azuristan_crimsonia"
GAME_OVERRIDES = {"rounds": 1, "questions": []}
MAX_TOKENS = 64
ALIAS = "smollm2"
BUDGET_S = 200.0  # after this, further repeats are skipped
SCALES = 1.15  # a doubling of N "still scales" if it gains at least 15% more speed-up

FAKE_OVERRIDES = {"rounds": 2, "questions": []}
FAKE_NS = (1, 8, 32, 64)
LATENCY_S = 0.2
SHARE = 0.7  # the target: games/min at N >= SHARE * N * games/min at N = 1
TARGET_UP_TO = 32
DEFAULT_LIMIT = 4  # WARGRAPH_ENDPOINT_CONCURRENCY's default, for the row that shows the limit


class LlamaServer(ServerProcess):
    """`python -m llama_cpp.server` with the embedded GGUF on 127.0.0.1; always stopped."""

    name = "llama_cpp.server"
    start_timeout_s = 90.0

    def __init__(self, n_threads: int, n_ctx: int = 4096, log_dir: Path | None = None) -> None:
        folder = log_dir or Path(tempfile.mkdtemp(prefix="wargraph-bench-server-"))
        super().__init__(folder / "server.log")
        self.n_threads, self.n_ctx = n_threads, n_ctx

    def command(self) -> list[str]:
        from wargraph.models.chat import embedded_model_path

        return [
            *(sys.executable, "-m", "llama_cpp.server"),
            *("--model", str(embedded_model_path()), "--model_alias", ALIAS),
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *("--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads)),
            # Without this, a new request cuts a running stream short (see NOTES.md).
            *("--interrupt_requests", "False"),
        ]


# --- part 1: N games in flight against the fake endpoint ----------------------------------------


def fake_batch(
    endpoint: FakeEndpoint, n: int, workdir: Path, *, limit: int, store: str = "sqlite"
) -> dict[str, Any]:
    """2N games (at least 4), N at a time, through `play_many`; wall and CPU of this process."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.batch import GameSpec, play_many

    folder = Path(tempfile.mkdtemp(prefix=f"n{n}-", dir=workdir))
    games = [
        GameSpec(GAME, FAKE_OVERRIDES, GameContext(model=endpoint.model(), seed=seed))
        for seed in range(max(2 * n, 4))
    ]
    before = endpoint.stats()  # also resets the server's peak
    load, cpu, start = load_average(), time.process_time(), time.perf_counter()
    runs = play_many(
        games,
        db=folder / "checkpoints.sqlite" if store == "sqlite" else None,
        out=folder / "games",
        concurrency=n,
        endpoint_concurrency=limit,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    served = endpoint.stats()
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "n": n,
        "games": len(runs),
        "endpoint_limit": limit,
        "store": store,
        "wall_s": wall,
        "games_per_min": 60 * len(runs) / wall,
        "cpu_s_per_game": cpu / len(runs),
        "calls": served["requests"] - before["requests"],
        "peak_calls_in_flight": served["peak_in_flight"],
        "finished": sum(r.finished for r in runs),
        "errors": sorted({r.error[:200] for r in runs if r.error}),
        "load_average": load,
    }


def fake_bounds(row: dict[str, Any], one_game_s: float) -> dict[str, Any]:
    """Games/min each limit allows at this row's N; the smallest is the one that binds."""
    bounds = {
        "latency": 60 * row["n"] / one_game_s,
        "endpoint limit": 60 * row["endpoint_limit"] / LATENCY_S / (row["calls"] / row["games"]),
        "CPU (one core, GIL)": 60 / row["cpu_s_per_game"],
    }
    return {"bounds": bounds, "binding": min(bounds, key=bounds.__getitem__)}


def fake_part(*, quick: bool, ns: tuple[int, ...] | None, repeats: int | None) -> dict[str, Any]:
    ns = ns or ((1, 8) if quick else FAKE_NS)
    repeats = repeats or (1 if quick else 2)
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-batch-"))
    rows: list[dict[str, Any]] = []
    try:
        with FakeEndpoint(LATENCY_S, log_dir=workdir) as endpoint:
            fake_batch(endpoint, 1, workdir, limit=2)  # warm-up: imports, the HTTP client
            for n in ns:
                # the fastest of the repeats: the one least disturbed by other work; a limit
                # that never binds (a game's two seats plan at once)
                runs = [fake_batch(endpoint, n, workdir, limit=2 * n) for _ in range(repeats)]
                best = max(runs, key=lambda r: r["games_per_min"])
                rows.append({**best, "games_per_min_all": [r["games_per_min"] for r in runs]})
            if not quick and TARGET_UP_TO in ns:
                rows.append(
                    fake_batch(
                        endpoint, TARGET_UP_TO, workdir, limit=2 * TARGET_UP_TO, store="memory"
                    )
                )
                rows.append(fake_batch(endpoint, TARGET_UP_TO, workdir, limit=DEFAULT_LIMIT))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    base = next(r for r in rows if r["n"] == 1) if 1 in ns else None
    for row in rows:
        row["ratio_to_n1"] = row["games_per_min"] / base["games_per_min"] if base else None
        if base:
            row.update(fake_bounds(row, 60 / base["games_per_min"]))
    targets = [
        target(
            f"7. games/min with {r['n']} games in flight vs 1 (fake endpoint, {LATENCY_S * 1000:.0f}"
            f" ms), at least {SHARE} x N",
            r["ratio_to_n1"],
            SHARE * r["n"],
            rule=">=",
            unit="x",
        )
        for r in rows
        if 1 < r["n"] <= TARGET_UP_TO
        and r["store"] == "sqlite"
        and r["endpoint_limit"] == 2 * r["n"]
    ]
    targets.append(
        target(
            f"7. every one of the {sum(r['games'] for r in rows)} fake-endpoint games finished",
            float(sum(r["games"] - r["finished"] for r in rows)),
            0.0,
            rule="<=",
            unit=" unfinished",
        )
    )
    return {
        "endpoint": f"benchmarks.fake_endpoint, {LATENCY_S * 1000:.0f} ms per call, own process",
        "game": f"{GAME} {FAKE_OVERRIDES}",
        "calls_per_game": sum(r["calls"] for r in rows) / sum(r["games"] for r in rows),
        "rows": rows,
        "targets": targets,
        "notes": [
            "bounds in games/min: latency = N x the N = 1 rate; endpoint limit = limit / latency "
            "/ calls per game; CPU = 60 / this process's CPU seconds per game (the GIL lets one "
            "thread run Python at a time, so one core at most; less on a loaded machine)",
            "the N = 32 rows with store 'memory' and limit 4 isolate the SQLite checkpoints and "
            "the default endpoint limit",
        ],
    }


def show_fake(p: dict[str, Any]) -> None:
    rows = [
        [
            r["n"],
            r["store"],
            r["endpoint_limit"],
            r["games"],
            r["wall_s"],
            r["games_per_min"],
            r["ratio_to_n1"],
            SHARE * r["n"],
            r["cpu_s_per_game"],
            r["peak_calls_in_flight"],
            f"{r.get('binding', '-')}"
            + (f" ({r['bounds'][r['binding']]:.0f})" if r.get("binding") else ""),
            f"{r['finished']}/{r['games']}",
            " ".join(str(x) for x in r["load_average"][:1]),
        ]
        for r in p["rows"]
    ]
    console.print(
        rich_table(
            f"4a. Games in flight in one process ({p['game']}) against {p['endpoint']}",
            [
                "N",
                "store",
                "endpoint limit",
                "games",
                "wall s",
                "games/min",
                "vs N=1",
                "target",
                "CPU s/game",
                "peak calls in flight",
                "binding bound (games/min)",
                "finished",
                "load",
            ],
            rows,
            caption=p["notes"][0],
        )
    )


# --- part 2: N games at once vs one after another against llama.cpp's server --------------------


def play_one(model: str, workdir: Path, seed: int) -> dict[str, Any]:
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    run_dir = workdir / f"game-{seed}-{time.time_ns()}"
    start = time.perf_counter()
    result = play(
        GAME,
        overrides=GAME_OVERRIDES,
        context=GameContext(model=model, seed=seed, max_tokens=MAX_TOKENS, call_timeout=300),
        db=run_dir / "game.sqlite",
        out_dir=run_dir / "out",
    )
    wall = time.perf_counter() - start
    trace = read_trace(run_dir / "out" / "trace.jsonl")
    return {
        "wall_s": wall,
        "finished": result.finished,
        "calls": sum(1 for e in trace if e.get("event") == "call"),
        "faults": sum(1 for e in trace if e.get("event") == "fault"),
        "fallbacks": sum(1 for e in trace if e.get("event") == "fallback"),
        "completion_tokens": sum(e.get("completion_tokens", 0) for e in trace),
    }


def sequential(model: str, n: int, workdir: Path) -> tuple[float, list[dict[str, Any]]]:
    start = time.perf_counter()
    games = [play_one(model, workdir, seed) for seed in range(n)]
    return time.perf_counter() - start, games


def concurrent(model: str, n: int, workdir: Path) -> tuple[float, list[dict[str, Any]]]:
    games: list[dict[str, Any] | None] = [None] * n
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            games[i] = play_one(model, workdir, i)
        except BaseException as err:  # reported below, never lost in a thread
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"a concurrent game failed: {errors[0]!r}") from errors[0]
    return wall, [g for g in games if g is not None]


def llama_part(
    *, quick: bool, ns: tuple[int, ...] | None, n_threads: int | None, repeats: int | None
) -> dict[str, Any]:
    """N = 1, 2, 4 games at once vs one after another against llama.cpp's server."""
    started = time.perf_counter()
    ns = ns or ((1, 2) if quick else (1, 2, 4))
    repeats = repeats or (1 if quick else 2)
    n_threads = n_threads or os.cpu_count() or 2
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-concurrency-"))
    rows: list[dict[str, Any]] = []
    with LlamaServer(n_threads, log_dir=workdir) as server:
        model = f"openai:{ALIAS}@{server.url}"
        warm = play_one(model, workdir, 99)  # warm-up: the server's first request, caches
        if not warm["calls"]:  # rows of games that only met faults would measure nothing
            exited = server.proc.poll() if server.proc else None
            raise RuntimeError(
                "llama_cpp.server answered no call of the warm-up game"
                + (f" (it exited with status {exited})" if exited is not None else "")
                + f"; its log: {server.log}"
            )
        for n in ns:
            seq_runs, con_runs = [], []
            for rep in range(repeats):
                if rep and time.perf_counter() - started > BUDGET_S:
                    break  # a busy machine: one run per side, so `make bench` still ends
                # Alternate which side goes first so a drifting machine load hits both alike;
                # the fastest of the repeats is kept (the least disturbed by other work).
                if (n + rep) % 2:
                    seq_runs.append(sequential(model, n, workdir))
                    con_runs.append(concurrent(model, n, workdir))
                else:
                    con_runs.append(concurrent(model, n, workdir))
                    seq_runs.append(sequential(model, n, workdir))
            seq_wall, seq_games = min(seq_runs, key=lambda r: r[0])
            con_wall, con_games = min(con_runs, key=lambda r: r[0])
            games = [g for _, gs in seq_runs + con_runs for g in gs]
            calls = sum(g["calls"] for g in con_games)
            seq_calls = sum(g["calls"] for g in seq_games)
            rows.append(
                {
                    "n": n,
                    "repeats": len(seq_runs),
                    "sequential_all_s": [r[0] for r in seq_runs],
                    "concurrent_all_s": [r[0] for r in con_runs],
                    "sequential_s": seq_wall,
                    "concurrent_s": con_wall,
                    "speedup": seq_wall / con_wall if con_wall else None,
                    # Re-asks after unusable answers make games differ in calls: compare the
                    # rate of model calls as well as the wall time.
                    "calls_sequential": seq_calls,
                    "calls_concurrent": calls,
                    "call_rate_speedup": (calls / con_wall) / (seq_calls / seq_wall)
                    if seq_calls and con_wall
                    else None,
                    "games_per_min_sequential": 60 * n / seq_wall,
                    "games_per_min_concurrent": 60 * n / con_wall,
                    "calls_per_s_concurrent": calls / con_wall,
                    "generated_tok_per_s_concurrent": sum(g["completion_tokens"] for g in con_games)
                    / con_wall,
                    "all_finished": all(g["finished"] for g in games),
                    "faults": sum(g["faults"] for g in games),
                    "fallbacks": sum(g["fallbacks"] for g in games),
                }
            )
    stops = None
    for prev, cur in zip(rows, rows[1:], strict=False):
        if (
            cur["speedup"] is None
            or prev["speedup"] is None
            or cur["speedup"] < prev["speedup"] * SCALES
        ):
            stops = prev["n"]
            break
    best = max(rows, key=lambda r: r["speedup"] or 0)
    targets = [
        target(
            f"all {sum(2 * r['n'] * r['repeats'] for r in rows)} games finished with no "
            "transport fault",
            float(sum(r["faults"] for r in rows)),
            0.0,
            rule="<=",
            unit=" faults",
        ),
    ]
    return {
        "server": f"python -m llama_cpp.server --n_threads {n_threads} --interrupt_requests "
        "False (embedded GGUF)",
        "game": f"{GAME} {GAME_OVERRIDES}, max_tokens {MAX_TOKENS}",
        "endpoint_concurrency": endpoint_concurrency(),
        "rows": rows,
        "best_speedup": best["speedup"],
        "best_n": best["n"],
        "stops_scaling_after_n": stops,
        "targets": targets,
        "notes": [
            f"'stops scaling' = the first N whose doubling gains less than {SCALES:.2f}x more "
            "speed-up; None = it still scaled at the largest N measured",
            "llama_cpp.server runs one model with one lock: requests are evaluated one at a "
            "time, so concurrency can only overlap the framework and HTTP with generation",
        ],
    }


def run(
    *,
    quick: bool = False,
    ns: tuple[int, ...] | None = None,
    n_threads: int | None = None,
    repeats: int | None = None,
    parts: tuple[str, ...] = ("fake", "llama"),
    write: bool = True,
    show: bool = True,
) -> dict[str, Any]:
    started, load_at_start = time.perf_counter(), load_average()
    body: dict[str, Any] = {}
    if "fake" in parts:
        body["fake"] = fake_part(quick=quick, ns=ns, repeats=repeats)
    if "llama" in parts:
        try:
            body["llama"] = llama_part(quick=quick, ns=ns, n_threads=n_threads, repeats=repeats)
        except RuntimeError as err:  # the server broke: say so, keep the other part's rows
            body["llama"] = {
                "error": str(err),
                "targets": [
                    target(
                        "llama.cpp server games finished with no transport fault",
                        None,
                        0.0,
                        rule="<=",
                        unit=" faults",
                    )
                ],
            }
    targets = [t for part in body.values() for t in part["targets"]]
    payload = result_payload(NAME, started, load_at_start, quick=quick, targets=targets, **body)
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    if "fake" in p:
        show_fake(p["fake"])
    if "llama" in p and "error" in p["llama"]:
        console.print(f"[red]4b. llama.cpp server part not measured:[/] {p['llama']['error']}")
    elif "llama" in p:
        show_llama(p["llama"])
    console.print(targets_table("Targets (concurrency)", p["targets"]))


def show_llama(p: dict[str, Any]) -> None:
    rows = [
        [
            r["n"],
            r["sequential_s"],
            r["concurrent_s"],
            r["speedup"],
            f"{r['calls_sequential']} / {r['calls_concurrent']}",
            r["call_rate_speedup"],
            r["games_per_min_sequential"],
            r["games_per_min_concurrent"],
            r["calls_per_s_concurrent"],
            r["generated_tok_per_s_concurrent"],
            r["all_finished"],
            r["faults"],
            r["fallbacks"],
        ]
        for r in p["rows"]
    ]
    stops = p["stops_scaling_after_n"]
    console.print(
        rich_table(
            f"4b. Concurrency: N games at once vs one after another ({p['game']}) against "
            f"{p['server']}; fastest of {p['rows'][0]['repeats']} alternating repeats per side",
            [
                "N",
                "one after another s",
                "at once s",
                "speed-up",
                "calls seq / at once",
                "calls/s speed-up",
                "games/min seq",
                "games/min at once",
                "calls/s at once",
                "gen tok/s at once",
                "all finished",
                "faults",
                "fallbacks",
            ],
            rows,
            caption=(
                f"best speed-up {p['best_speedup']:.2f}x at N={p['best_n']}; "
                + (f"stops scaling after N={stops}" if stops else "still scaling at the largest N")
            ),
        )
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.concurrency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="N = 1, 8 (fake); 1, 2 (llama)")
    parser.add_argument("--n", type=int, action="append", help="N values (repeatable)")
    parser.add_argument(
        "--part", action="append", choices=("fake", "llama"), help="only this part (repeatable)"
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(
        quick=args.quick,
        ns=tuple(args.n) if args.n else None,
        parts=tuple(args.part or ("fake", "llama")),
        write=not args.no_write,
    )


if __name__ == "__main__":
    main()
