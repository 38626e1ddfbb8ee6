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

A worker that dies (an out-of-memory kill, a crash in native code) costs the game it was
playing and nothing else: each worker has its own pipe, so its death is that game's error
("its worker process died"), the other workers play on, and a worker cannot be forked again
once the driver has threads, so with every worker gone the last games play in threads here.

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
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.game import Keys, Stopped, plays_on_models, run_game
from wargraph.evals.experiment.plan import GamePlan
from wargraph.evals.experiment.spec import Experiment, Workers

NodeSink = Callable[[str, str], None]  # (thread id, node) as each step of a game ends

_PR_SET_PDEATHSIG = 1  # linux/prctl.h

# set in each worker by `_start_worker`
_stop: Any = None
_nodes: Any = None


def cpu_only(exp: Experiment, plans: list[GamePlan]) -> bool:
    """Whether every seat of every game, and the judge, is scripted or a bot (no model)."""
    from wargraph.models.chat import parse_model_ref

    if exp.questions and parse_model_ref(exp.judge_model).provider not in ("scripted", "bot"):
        return False
    seen: set[tuple[str, str]] = set()
    for plan in plans:
        key = (plan.condition.id, plan.condition.scenario)
        if key in seen:
            continue
        seen.add(key)
        if plays_on_models(plan):
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


class WorkerDied(RuntimeError):
    """The worker process playing a game ended under it (killed, or crashed in native code)."""


def _serve(conn: Any, stop: Any, nodes: Any, parent: int) -> None:
    """A worker: play each game the driver sends, send back its result or what it raised."""
    _start_worker(stop, nodes, parent)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            result: tuple[str, Any] = ("done", _play(*job))
        except BaseException as exc:  # noqa: BLE001 (the driver raises it in its thread)
            result = ("raised", exc)
        try:
            conn.send(result)
        except Exception as exc:  # noqa: BLE001 (an outcome or error that does not pickle)
            conn.send(("raised", RuntimeError(f"{type(exc).__name__}: {exc}")))


class _Worker:
    def __init__(self, ctx: Any, stop: Any, nodes: Any) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_serve, args=(child, stop, nodes, os.getpid()), name="wargraph-game"
        )
        self.proc.start()
        child.close()

    def died(self) -> str:
        self.proc.join(timeout=2)
        code = self.proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return f"its worker process (pid {self.proc.pid}) died ({how}); it resumes next run"


class GameProcesses:
    """`n` forked workers playing one game at a time each; `play` blocks a driver thread until
    its game is over and raises what the game raised (Stopped, GameHeld, any error; WorkerDied
    when its worker died under it)."""

    def __init__(self, n: int, on_node: NodeSink | None) -> None:
        ctx = mp.get_context("fork")
        self.stop = ctx.Event()
        self._nodes: Any = ctx.Queue() if on_node is not None else None
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._workers: list[_Worker] = []
        # forked here, before any thread starts, with Ctrl-C held back until each worker has
        # set it aside (no KeyboardInterrupt traceback from a worker just born). Frozen, the
        # objects loaded so far are never scanned by a worker's garbage collector, which would
        # copy their pages into each worker and spend its CPU on them.
        gc.freeze()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for _ in range(n):
                worker = _Worker(ctx, self.stop, self._nodes)
                self._workers.append(worker)
                self._idle.put(worker)
        except OSError:
            self.close(kill=True)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            gc.unfreeze()
        self._on_node = on_node
        self._relay = threading.Thread(target=self._relay_nodes, daemon=True, name="game-steps")
        if self._nodes is not None:
            self._relay.start()

    def _alive(self) -> bool:
        return any(w.proc.is_alive() for w in self._workers)

    def play(
        self, exp: Experiment, plan: GamePlan, out: Path, db: str | Path, keys: Keys
    ) -> tuple[dict[str, Any], str, int]:
        while True:
            try:
                worker = self._idle.get(timeout=0.5)
            except queue.Empty:
                if self._alive():
                    continue
                # every worker is gone and none can be forked now: the game plays here
                return (*run_game(exp, plan, out, db, keys, self._progress(plan)), os.getpid())
            try:
                worker.conn.send((exp, plan, out, db, keys))
            except (BrokenPipeError, ConnectionError, EOFError):
                continue  # died idle: the game never started there, another worker plays it
            try:
                kind, value = worker.conn.recv()
            except (EOFError, OSError):
                raise WorkerDied(worker.died()) from None
            self._idle.put(worker)
            if kind == "raised":
                raise value
            return tuple(value)

    def _progress(self, plan: GamePlan) -> Callable[[str, dict[str, Any]], None]:
        def progress(node: str, _values: dict[str, Any]) -> None:
            if self.stop.is_set():
                raise Stopped()
            if self._on_node is not None:
                self._on_node(plan.thread_id, node)

        return progress

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
        for worker in self._workers:
            if kill:
                with contextlib.suppress(Exception):
                    worker.proc.kill()
            else:
                with contextlib.suppress(Exception):
                    worker.conn.send(None)
        for worker in self._workers:
            worker.proc.join()
            worker.conn.close()
        if self._nodes is not None:
            self._nodes.put(None)
            if self._relay.is_alive():
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
