"""Work done ahead: while the seats of a step wait for a model's answers, the process is idle, so
what a later phase will need that does not depend on the record (each power's legal orders, unit
blocks and answer model; the engine loaded for the adjudication) is computed then, on one
background thread, instead of between two waves of calls where every millisecond delays the next
wave (issue 43).

Only caches are warmed: the phase computes anything not yet there itself, as before, so a job
that runs late, fails or never runs changes nothing but the time a step takes."""

from __future__ import annotations

import collections
import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from wargraph.kernel.parts.orders import Orders
from wargraph.kernel.parts.resolution import Resolution
from wargraph.kernel.table import Table
from wargraph.models.faults import current_thread_id
from wargraph.seats.agents import model_seat

if TYPE_CHECKING:
    from wargraph.kernel.world import World

log = logging.getLogger(__name__)

# The seats' requests leave first: their CPU before a request holds the whole wave, so the jobs
# start once they are in flight (a call to a model takes far longer than this).
START_AFTER_S = 0.05

# Jobs waiting at most: a worker that falls behind (many games in threads) skips the rest, which
# the phases then do themselves, rather than holding their states in a growing queue.
MAX_QUEUED = 8

_LOCK = threading.Lock()
# (done, job, game, when to start): a job of a game that has queued a newer one by the time it
# would start is skipped (its state is older)
_JOBS: collections.deque[tuple[Future[None], Callable[[], None], str, float]] = collections.deque()
_QUEUED: list[Future[None]] = []
_worker: threading.Thread | None = None


def _forked() -> None:
    """A forked child has none of the parent's worker: its jobs (and the lock, which the parent's
    worker may have held at the fork) are the parent's, never run here."""
    global _LOCK, _worker
    _LOCK = threading.Lock()
    _JOBS.clear()
    _QUEUED.clear()
    _worker = None


os.register_at_fork(after_in_child=_forked)


Part = Orders | Resolution


def preparing_parts(world: World) -> list[Part]:
    """The world's parts that prepare something: its order parts (each mount's, once) and its
    resolution."""
    mounts = [world.orders] if isinstance(world.orders, Orders) else list(world.orders.values())
    found: list[Part] = []
    for part in mounts:
        if type(part).prepare is not Orders.prepare and part not in found:
            found.append(part)
    if type(world.resolution).prepare is not Resolution.prepare:
        found.append(world.resolution)
    return found


def prepare_while_asked(world: World, table: Table, update: dict[str, Any]) -> bool:
    """Queue the world's `prepare` for the state this step leaves when its asks go to a model
    (a script, a bot or a person answers at once or in its own time: nothing to overlap).
    True when queued."""
    parts = preparing_parts(world)
    if not parts or not any(model_seat(a) for a in update.get("asks") or []):
        return False
    # the world as this step leaves it (the record is not read: nothing prepared depends on it)
    ahead = table.after({"world": update.get("world") or {}})
    run = contextvars.copy_context().run
    return _submit(lambda: run(_prepare, parts, ahead), current_thread_id())


def _submit(job: Callable[[], None], game: str = "") -> bool:
    """Queue `job` for the worker, started when none runs. The worker ends when it finds no job
    (a process with no game waiting keeps no thread of ours: `view.ensure_views` forks only a
    process without other threads), and a forked child, where the parent's worker does not
    exist, starts its own (`_forked`). A job of `game` is skipped when a newer one of the same
    game is queued behind it by the time it would start (a fast model answered first: the newer
    state is the one the game goes on from); "" names no game and is never skipped."""
    global _worker
    with _LOCK:
        _QUEUED[:] = [f for f in _QUEUED if not f.done()]
        if len(_QUEUED) >= MAX_QUEUED:
            return False
        done: Future[None] = Future()
        _JOBS.append((done, job, game, time.monotonic() + START_AFTER_S))
        _QUEUED.append(done)
        if _worker is None:
            # a daemon: it only warms caches, so a process may end without waiting for it
            _worker = threading.Thread(target=_work, name="wargraph-ahead", daemon=True)
            _worker.start()
    return True


def _work() -> None:
    global _worker
    while True:
        with _LOCK:
            if not _JOBS:
                _worker = None
                return
            done, job, game, start = _JOBS.popleft()
        done.set_running_or_notify_cancel()
        time.sleep(max(0.0, start - time.monotonic()))
        with _LOCK:
            newer = bool(game) and any(g == game for _, _, g, _ in _JOBS)
        try:
            if not newer:
                job()
        except Exception:  # the worker goes on to the next job (the phase does this one)
            log.debug("a job done ahead failed", exc_info=True)
        done.set_result(None)


def _prepare(parts: list[Part], table: Table) -> None:
    for part in parts:
        try:
            part.prepare(table)
        except Exception:  # the phase meets the same problem in its own step and reports it
            log.debug("preparing %s ahead failed", type(part).__name__, exc_info=True)


def settled(timeout: float | None = None) -> None:
    """Wait for the jobs queued so far (tests, benchmarks)."""
    with _LOCK:
        jobs = list(_QUEUED)
    for job in jobs:
        job.result(timeout=timeout)
