"""Many games at once in one process: a bounded pool of game threads sharing the model
endpoints (at most `endpoint_concurrency` calls at once per endpoint); each game keeps its own
thread id, lease and records, and a game that fails is that game's error, not the batch's.

    from wargraph.runs.batch import GameSpec, play_many
    from wargraph.kernel.context import GameContext

    model = "openai:my-model@http://127.0.0.1:8000/v1"
    games = [GameSpec("azuristan_crimsonia", context=GameContext(model=model, seed=s))
             for s in range(64)]
    runs = play_many(games, db="runs/batch.sqlite", out="runs/batch",
                     concurrency=32, endpoint_concurrency=64)
    failed = [(r.thread_id, r.error) for r in runs if r.status == "error"]

Why threads and not asyncio: a game's nodes are sync functions (the deciders call the model's
sync `invoke`), so `graph.ainvoke` runs them in the event loop's thread pool anyway, and the
store's async methods run its sync ones in a thread. benchmarks/sync_async.py plays the same
games both ways: 0.79-1.40x the games per minute under `asyncio.gather` (SQLite and
PostgreSQL, up to 32 at once, two runs on a shared machine), the same CPU per game; against a 200 ms endpoint the loop's
default executor (six threads on two cores) holds asyncio to 0.28x unless it is given as many
threads as calls in flight. The waiting on the endpoint releases the GIL either way; what does
not scale is the CPU each game spends in Python (benchmarks/concurrency.py measures it).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario
from wargraph.models.chat import set_endpoint_concurrency
from wargraph.runs.runner import PlayResult, check_scenario, play

DEFAULT_CONCURRENCY = 8


@dataclass
class GameSpec:
    """One game to play: a scenario (name, file, data or a loaded Scenario) with overrides,
    its settings, and optionally its thread id and records folder."""

    scenario: str | dict[str, Any] | Scenario
    overrides: list[str] | dict[str, Any] | None = None
    context: GameContext = field(default_factory=GameContext)
    thread_id: str | None = None
    out_dir: str | Path | None = None


@dataclass
class GameRun:
    """How one game of a batch ended: finished, waiting for people, stopped, or an error."""

    thread_id: str
    status: str  # "finished" | "waiting" (human seats) | "stopped" (Ctrl-C) | "error"
    wall_s: float
    out_dir: Path | None = None
    error: str = ""
    result: PlayResult | None = None

    @property
    def finished(self) -> bool:
        return self.status == "finished"


class _Stopped(Exception):
    """Raised inside a game after its current step when the batch is stopping."""


Done = Callable[[GameRun], None]


def play_many(
    games: Iterable[GameSpec],
    *,
    db: str | Path | None,
    out: str | Path | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    endpoint_concurrency: int | None = None,
    on_done: Done | None = None,
) -> list[GameRun]:
    """Play `games`, `concurrency` at a time, and return how each ended, in the given order.

    `db`: the checkpoint store all games share (None: in memory, nothing kept); `out`: each
    game's records go to `out/<thread id>/` unless its spec names a folder. With
    `endpoint_concurrency`, calls to each OpenAI-compatible endpoint are capped at that many at
    once while the batch runs (else WARGRAPH_ENDPOINT_CONCURRENCY, default max(8, seats), or what
    `wargraph.models.chat.set_endpoint_concurrency` set): a game's seats may call at once, so give
    it `concurrency` x 2 when the endpoint can take them. `on_done` runs in the calling
    thread as each game ends. On Ctrl-C, running games stop after their current step (their
    checkpoints stay: `wargraph resume --thread ID`), games not started are not, and
    KeyboardInterrupt is raised again."""
    if concurrency < 1:
        raise ValueError(f"concurrency {concurrency}: expected 1 or more")
    loaded: dict[str, Scenario] = {}
    specs = [_prepared(spec, out, loaded) for spec in games]
    if endpoint_concurrency is None:
        return _play_all(specs, db, concurrency, on_done)
    previous = set_endpoint_concurrency(endpoint_concurrency)
    try:
        return _play_all(specs, db, concurrency, on_done)
    finally:
        set_endpoint_concurrency(previous)


def _play_all(
    specs: list[GameSpec], db: str | Path | None, concurrency: int, on_done: Done | None
) -> list[GameRun]:
    stop = threading.Event()
    runs: dict[int, GameRun] = {}
    with ThreadPoolExecutor(max(1, min(concurrency, len(specs))), "wargraph-game") as pool:
        futures: dict[Future, int] = {
            pool.submit(_play_one, spec, db, stop): i for i, spec in enumerate(specs)
        }
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    runs[futures[fut]] = fut.result()
                    if on_done:
                        on_done(runs[futures[fut]])
        except BaseException:
            stop.set()  # games in progress stop after their step; the rest never start
            for fut in pending:
                fut.cancel()
            raise
    return [runs[i] for i in range(len(specs))]


def _prepared(spec: GameSpec, out: str | Path | None, loaded: dict[str, Scenario]) -> GameSpec:
    """The spec with a thread id, a records folder and its scenario validated once per
    distinct (scenario, overrides): a bad file fails before any game starts, and a batch of
    one scenario reads and checks it once, not once per game."""
    scenario = spec.scenario
    if not isinstance(scenario, Scenario) or spec.overrides:
        source = id(scenario) if isinstance(scenario, Scenario) else scenario
        key = repr((source, spec.overrides))
        if key not in loaded:
            loaded[key] = check_scenario(scenario, spec.overrides)
        scenario = loaded[key]
    thread_id = spec.thread_id or uuid.uuid4().hex[:12]
    out_dir = spec.out_dir
    if out_dir is None and out is not None:
        out_dir = Path(out) / thread_id
    return GameSpec(scenario, None, spec.context, thread_id, out_dir)


def _play_one(spec: GameSpec, db: str | Path | None, stop: threading.Event) -> GameRun:
    assert spec.thread_id is not None  # set by _prepared
    out_dir = Path(spec.out_dir) if spec.out_dir is not None else None
    start = time.perf_counter()

    def progress(_node: str, _values: dict[str, Any]) -> None:
        if stop.is_set():
            raise _Stopped()

    def ended(status: str, error: str = "", result: PlayResult | None = None) -> GameRun:
        wall = time.perf_counter() - start
        return GameRun(spec.thread_id or "", status, wall, out_dir, error, result)

    if stop.is_set():
        return ended("stopped")
    try:
        result = play(
            spec.scenario,
            context=spec.context,
            db=db,
            thread_id=spec.thread_id,
            out_dir=out_dir,
            progress=progress,
        )
    except _Stopped:
        return ended("stopped")
    except Exception as exc:  # one game's failure is its own: the others play on
        return ended("error", f"{type(exc).__name__}: {exc}")
    error = str(result.values.get("error") or "")
    if error:
        return ended("error", error, result)
    return ended("finished" if result.finished else "waiting", "", result)
