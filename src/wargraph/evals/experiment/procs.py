"""Games in worker processes: what lets CPU-bound games (scripted seats, bots) use every core.

A game's CPU is Python under one interpreter lock, so games in threads of one process share
one core however many the machine has (benchmarks/tournament.py). Games whose seats call no
model (scripted seats and bots, no judge) run instead in worker processes forked from this
one, one game at a time each: a fork inherits the loaded code and the compiled game graphs,
so a worker starts in milliseconds. Everything a game guarantees holds as in a thread: each
game takes its lease in the store (a lock of the kernel's, per process), writes its files
into its own folder, and its outcome comes back to the driver, which alone writes the
experiment's own files.

A worker dies with the driver (the kernel sends it SIGKILL when its parent ends, however it
ends), so a killed run leaves no process behind still holding a game; the next run resumes.
Ctrl-C reaches the driver only: the workers ignore it and stop after their current step when
the driver says so, as games in threads do.

Processes are used only where they are safe and worth it: Linux (fork), a driver with no
other thread when the workers are forked (a fork copies no other thread, so a lock another
thread held would stay held), more than one game at once, and no seat or judge on a model
(the per-endpoint call limit and an embedded model are per process). `workers: threads`
keeps every game in this process."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.game import Keys, Stopped, run_game
from wargraph.evals.experiment.plan import GamePlan
from wargraph.evals.experiment.spec import Experiment, Workers

NodeSink = Callable[[str, str], None]  # (thread id, node) as each step of a game ends

_PR_SET_PDEATHSIG = 1  # linux/prctl.h

# set in each worker by `_start_worker`
_stop: Any = None
_nodes: Any = None


def cpu_only(exp: Experiment, plans: list[GamePlan]) -> bool:
    """Whether every seat of every game, and the judge, is scripted or a bot (no model)."""
    from wargraph.kernel.context import GameContext
    from wargraph.models.chat import parse_model_ref
    from wargraph.models.preflight import seat_models
    from wargraph.runs.runner import check_scenario

    def local(ref: str) -> bool:
        return parse_model_ref(ref).provider in ("scripted", "bot")

    if exp.questions and not local(exp.judge_model):
        return False
    seen: set[tuple[str, str]] = set()
    for plan in plans:
        c = plan.condition
        key = (c.id, c.scenario)
        if key in seen:
            continue
        seen.add(key)
        ctx: GameContext = plan.game_context()
        scenario = check_scenario(c.scenario, c.overrides)  # compiled once per process
        if not all(local(ref) for ref in seat_models(scenario, ctx)):
            return False
    return True


def can_fork() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1


def choose(workers: Workers, exp: Experiment, plans: list[GamePlan], at_once: int) -> int:
    """How many worker processes to play `plans` in (0: threads of this process). `processes`
    where forking is unsafe here falls back to threads too."""
    if workers == "threads" or at_once < 2 or len(plans) < 2 or not can_fork():
        return 0
    if workers == "auto" and ((os.cpu_count() or 1) < 2 or not cpu_only(exp, plans)):
        return 0
    return min(at_once, len(plans))


def _start_worker(stop: Any, nodes: Any, parent: int) -> None:
    """In each worker, first: die with the driver, leave Ctrl-C to it."""
    global _stop, _nodes
    _stop, _nodes = stop, nodes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the driver ended before the line above took effect
        os._exit(1)


def _play(
    exp: Experiment, plan: GamePlan, out: Path, db: str | Path, keys: Keys
) -> tuple[dict[str, Any], str, int]:
    """One game in a worker (as `run_game` in a thread), its steps reported to the driver; its
    outcome, how it was reached and the worker's pid."""

    def progress(node: str, _values: dict[str, Any]) -> None:
        if _stop.is_set():
            raise Stopped()
        if _nodes is not None:
            _nodes.put((plan.thread_id, node))

    return (*run_game(exp, plan, out, db, keys, progress), os.getpid())


class GameProcesses:
    """`n` forked workers playing one game at a time each; `play` blocks a driver thread until
    its game is over and raises what the game raised (Stopped, GameHeld, any error)."""

    def __init__(self, n: int, on_node: NodeSink | None) -> None:
        ctx = mp.get_context("fork")
        self.stop = ctx.Event()
        self._nodes: Any = ctx.Queue() if on_node is not None else None
        self.pool = ProcessPoolExecutor(
            n,
            mp_context=ctx,
            initializer=_start_worker,
            initargs=(self.stop, self._nodes, os.getpid()),
        )
        # a fork pool forks every worker at its first submit: here, before any thread starts.
        # Frozen, the objects loaded so far are never scanned by a worker's garbage collector,
        # which would copy their pages into each worker and spend its CPU on them.
        gc.freeze()
        try:
            self.pool.submit(os.getpid).result()
        finally:
            gc.unfreeze()
        self._on_node = on_node
        self._relay = threading.Thread(target=self._relay_nodes, daemon=True, name="game-steps")
        if self._nodes is not None:
            self._relay.start()

    def play(
        self, exp: Experiment, plan: GamePlan, out: Path, db: str | Path, keys: Keys
    ) -> tuple[dict[str, Any], str, int]:
        return self.pool.submit(_play, exp, plan, out, db, keys).result()

    def _relay_nodes(self) -> None:
        while True:
            try:
                item = self._nodes.get()
            except (EOFError, OSError):  # the queue was closed: the run is over
                return
            if item is None or self._on_node is None:
                return
            self._on_node(*item)

    def close(self, *, kill: bool = False) -> None:
        """Wait for the workers (or, with `kill`, end them where they are: their games keep
        the checkpoints they committed and resume next time), then stop relaying."""
        pool = self.pool
        if kill:
            for proc in list(getattr(pool, "_processes", {}).values()):
                with contextlib.suppress(Exception):
                    proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)
        if self._nodes is not None:
            self._nodes.put(None)
            self._relay.join(timeout=5)
            self._nodes.close()


@contextlib.contextmanager
def game_processes(n: int, on_node: NodeSink | None) -> Iterator[GameProcesses | None]:
    """`n` workers for the block (None when `n` is 0: games run in threads); `on_node` hears
    each step of their games (None: no step is sent)."""
    try:
        procs = GameProcesses(n, on_node) if n > 0 else None
    except OSError:  # no fork here now (memory, a process limit): the games play in threads
        procs = None
    if procs is None:
        yield None
        return
    try:
        yield procs
    except BaseException:
        procs.close(kill=True)
        raise
    procs.close()
