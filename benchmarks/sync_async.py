"""Benchmark 11: sync and async — many games at once in one process, `invoke` in threads vs
`ainvoke` under `asyncio.gather`, side by side.

Each game does the same work both ways: the game's lease, a saver on the shared store, its run
registered, the game played to its end with checkpoints written before each next step
(`durability="sync"`, as the CLI plays), its state read back and its record built. Threads: a
pool of N threads, one game each (`graph.invoke`); asyncio: one event loop, N games at a time
(`graph.ainvoke`; the lease and the saver are opened in worker threads, the store's async
methods run its sync ones in a thread, the phases and the seats' steps run in the loop's
executor, and the seats' subgraphs are awaited). Every row plays 2N games (at least 16), N at a
time; the records of game i are compared across the two ways (scripted seats: the same seed
gives the same game). Each row runs 3 times (quick: once), the order of the ways turned around
each time, and keeps each way's fastest run.

Part 1: scripted crisis games (CPU only) with N = 1, 8, 32 on SQLite (one file) and PostgreSQL
(a fresh database on WARGRAPH_BENCH_PG_URL, as `scale`). Part 2: the same game against the fake
endpoint (`benchmarks/fake_endpoint.py`, 200 ms per call, its own process), N = 32, SQLite:
threads, asyncio with the loop's default executor (min(32, CPUs + 4) threads: every sync node
waits for one) and asyncio with an executor of 2N threads. Reported: games per minute, CPU
seconds per game (this process), the async/threads ratio. No target: the ratios are the finding.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.common import console, finish, load_average, result_payload, rich_table
from benchmarks.fake_endpoint import FakeEndpoint
from benchmarks.scale import fresh_database, postgres_missing

NAME = "sync_async"
GAME = "azuristan_crimsonia"
OVERRIDES = {"rounds": 2, "questions": []}
NS = (1, 8, 32)
QUICK_NS = (1, 8)
ENDPOINT_N = 32
LATENCY_S = 0.2
GAMES_PER_N, MIN_GAMES = 2, 16  # games per row: 2N, at least 16 (a second or more of work)


# --- one game, both ways ------------------------------------------------------------------------


@dataclasses.dataclass
class Game:
    """What both ways share: the scenario, its settings, its thread, config and input."""

    scenario: Any
    context: Any
    thread_id: str

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": 10_000}

    def start(self, saver: Any) -> Any:
        from wargraph.runs.runner import game_graph

        run = {"scenario": self.scenario.model_dump(), "context": dataclasses.asdict(self.context)}
        saver.register_run(self.thread_id, run)
        return game_graph(self.scenario, saver)

    @property
    def input(self) -> dict[str, Any]:
        return {"scenario": self.scenario.model_dump()}

    def record(self, values: dict[str, Any]) -> str:
        from wargraph.runs.records import build_record

        # one thread id for both ways: the records are compared byte for byte
        return json.dumps(build_record(values, thread_id="game"), sort_keys=True)


def play_sync(db: str, game: Game) -> str:
    from wargraph.store.lease import lease
    from wargraph.store.saver import open_saver

    with lease(db, game.thread_id, command="bench"), open_saver(db) as saver:
        graph = game.start(saver)
        graph.invoke(game.input, game.config, context=game.context, durability="sync")
        return game.record(graph.get_state(game.config).values)


async def play_async(db: str, game: Game) -> str:
    from wargraph.store.lease import lease
    from wargraph.store.saver import in_thread, open_async_saver

    async with (
        in_thread(lease(db, game.thread_id, command="bench")),
        open_async_saver(db) as saver,
    ):
        graph = game.start(saver)
        await graph.ainvoke(game.input, game.config, context=game.context, durability="sync")
        return game.record((await graph.aget_state(game.config)).values)


# --- a batch of games, both ways ---------------------------------------------------------------


def games(model: str, n: int, tag: str) -> list[Game]:
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import check_scenario

    sc = check_scenario(GAME, OVERRIDES)
    return [
        Game(sc, GameContext(model=model, seed=i), f"{tag}-{i}-{time.time_ns()}")
        for i in range(max(GAMES_PER_N * n, MIN_GAMES))
    ]


def in_threads(db: str, batch: list[Game], n: int) -> list[str]:
    with ThreadPoolExecutor(n, "bench-game") as pool:
        return list(pool.map(lambda g: play_sync(db, g), batch))


def in_asyncio(db: str, batch: list[Game], n: int, executor_threads: int | None) -> list[str]:
    async def main() -> list[str]:
        if executor_threads is not None:
            asyncio.get_running_loop().set_default_executor(
                ThreadPoolExecutor(executor_threads, "bench-node")
            )
        gate = asyncio.Semaphore(n)

        async def one(game: Game) -> str:
            async with gate:
                return await play_async(db, game)

        return list(await asyncio.gather(*(one(g) for g in batch)))

    return asyncio.run(main())


def measure(way: str, play: Callable[[], list[str]], games_n: int) -> dict[str, Any]:
    load, cpu, start = load_average(), time.process_time(), time.perf_counter()
    records = play()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "way": way,
        "games": games_n,
        "wall_s": wall,
        "games_per_min": 60 * games_n / wall,
        "cpu_s_per_game": cpu / games_n,
        "records": records,
        "load_average": load,
    }


def side_by_side(
    db: str, model: str, n: int, store: str, repeats: int, async_ways: dict[str, int | None]
) -> list[dict[str, Any]]:
    """Threads and each asyncio way on the same games (seeds), `repeats` times with the order
    turned around each time; each way's fastest run is kept (the least disturbed by other
    work on a shared machine), with all its rates."""
    batch = games(model, n, store)
    ways: dict[str, Callable[[list[Game]], list[str]]] = {"threads": lambda b: in_threads(db, b, n)}
    for label, executor in async_ways.items():
        ways[label] = lambda b, e=executor: in_asyncio(db, b, n, e)
    runs: dict[str, list[dict[str, Any]]] = {way: [] for way in ways}
    for i in range(repeats):
        order = list(ways) if i % 2 == 0 else list(reversed(ways))
        for way in order:
            copies = _fresh(batch, f"{way[:7]}{i}")
            runs[way].append(measure(way, lambda w=way, c=copies: ways[w](c), len(batch)))
    best = {way: max(found, key=lambda r: r["games_per_min"]) for way, found in runs.items()}
    base = best["threads"]
    return [
        {
            **{k: v for k, v in best[way].items() if k != "records"},
            "n": n,
            "store": store,
            "games_per_min_all": [r["games_per_min"] for r in runs[way]],
            "ratio_to_threads": best[way]["games_per_min"] / base["games_per_min"],
            "same_records_as_threads": all(r["records"] == base["records"] for r in runs[way]),
        }
        for way in ways
    ]


def _fresh(batch: list[Game], way: str) -> list[Game]:
    """The same games (seeds) on new thread ids: each way plays its own copies."""
    return [dataclasses.replace(g, thread_id=f"{g.thread_id}-{way}") for g in batch]


@contextlib.contextmanager
def store_url(store: str, workdir: Path) -> Iterator[str]:
    if store == "sqlite":
        yield str(workdir / f"games-{time.time_ns()}.sqlite")
        return
    with fresh_database() as url:
        try:
            yield url
        finally:
            from wargraph.store.connect import close

            close(url)


# --- the benchmark ------------------------------------------------------------------------------


def run(
    *, quick: bool = False, write: bool = True, show: bool = True, ns: tuple[int, ...] | None = None
) -> dict[str, Any]:
    from wargraph.models.chat import set_endpoint_concurrency

    started, load_at_start = time.perf_counter(), load_average()
    ns = ns or (QUICK_NS if quick else NS)
    repeats = 1 if quick else 3
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-sync-async-"))
    no_pg = "" if not quick else "quick mode: SQLite only"
    no_pg = no_pg or postgres_missing()
    stores = ["sqlite"] + ([] if no_pg else ["postgres"])
    default_executor = min(32, (os.cpu_count() or 1) + 4)
    rows: list[dict[str, Any]] = []
    try:
        with store_url("sqlite", workdir) as warm:  # imports, compiled graph cache
            side_by_side(warm, "scripted", 1, "sqlite", 1, {"asyncio": None})
        for store, n in ((s, n) for s in stores for n in ns):
            with store_url(store, workdir) as db:
                rows += side_by_side(db, "scripted", n, store, repeats, {"asyncio": None})
        endpoint_n = 8 if quick else ENDPOINT_N
        with FakeEndpoint(LATENCY_S, log_dir=workdir) as endpoint:
            previous = set_endpoint_concurrency(4 * endpoint_n)  # never the bound here
            try:
                with store_url("sqlite", workdir) as db:  # the model client's first calls
                    side_by_side(db, endpoint.model(), 1, "sqlite", 1, {"asyncio": None})
                with store_url("sqlite", workdir) as db:
                    ways = {
                        f"asyncio, default executor ({default_executor} threads)": None,
                        f"asyncio, executor of {2 * endpoint_n} threads": 2 * endpoint_n,
                    }
                    found = side_by_side(db, endpoint.model(), endpoint_n, "sqlite", repeats, ways)
                    for row in found:
                        rows.append({**row, "model": f"fake endpoint, {LATENCY_S * 1000:.0f} ms"})
            finally:
                set_endpoint_concurrency(previous)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for row in rows:
        row.setdefault("model", "scripted")
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        game=f"{GAME} {OVERRIDES}",
        rows=rows,
        skipped={"postgres": no_pg} if no_pg else {},
        targets=[],
        notes=[
            "each game: its lease, a saver on the shared store, its run registered, played with "
            "durability='sync', its state read back and its record built; 2N games (at least 16), "
            "N at a time; the fastest of the repeats per way",
            "asyncio: sync phases and seat steps run in the event loop's executor; the store's "
            "async methods run its sync ones in a worker thread",
            "same_records_as_threads: game i's record byte for byte under both ways",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    columns = ["model", "store", "N", "games", "way", "games/min", "x threads", "CPU s/game"]
    columns.append("same records")
    body = [
        [
            r["model"],
            r["store"],
            r["n"],
            r["games"],
            r["way"],
            r["games_per_min"],
            r["ratio_to_threads"],
            r["cpu_s_per_game"],
            r["same_records_as_threads"],
        ]
        for r in p["rows"]
    ]
    console.print(
        rich_table(
            f"invoke in threads vs ainvoke under asyncio.gather ({p['game']})",
            columns,
            body,
            caption="; ".join(f"{k} skipped: {v}" for k, v in p["skipped"].items()),
        )
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sync_async", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, action="append", help="games at a time (repeatable)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, write=not args.no_write, ns=tuple(args.n) if args.n else None)


if __name__ == "__main__":
    main()
