"""Work done ahead: while the seats of a step wait for a model's answers, the process is idle, so
what a later phase's questions will need that does not depend on the record (each power's legal
orders, its unit blocks, its answer model) is computed then, on one background thread, instead of
between two waves of calls where every millisecond delays the next wave (issue 43).

Only caches are warmed: the phase computes anything not yet there itself, as before, so a job
that runs late, fails or never runs changes nothing but the time a step takes."""

from __future__ import annotations

import contextvars
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from wargraph.kernel.parts.orders import Orders
from wargraph.kernel.state import GameState, merge_world
from wargraph.kernel.table import Table
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
_QUEUED: list[Future[None]] = []
_worker: tuple[int, ThreadPoolExecutor] | None = None


def _executor() -> ThreadPoolExecutor:
    """This process's worker: a process forked from one that had started it (experiments fork
    their workers) has the executor but not its thread, so each process makes its own."""
    global _worker
    if _worker is None or _worker[0] != os.getpid():
        _worker = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="wargraph-ahead"))
        _QUEUED.clear()
    return _worker[1]


def preparing_parts(world: World) -> list[Orders]:
    """The world's order parts that prepare something (each mount's, once)."""
    mounts = [world.orders] if isinstance(world.orders, Orders) else list(world.orders.values())
    found: list[Orders] = []
    for part in mounts:
        if type(part).prepare is not Orders.prepare and part not in found:
            found.append(part)
    return found


def prepare_while_asked(world: World, table: Table, update: dict[str, Any]) -> bool:
    """Queue the world's `prepare` for the state this step leaves when its asks go to a model
    (a script, a bot or a person answers at once or in its own time: nothing to overlap).
    True when queued."""
    parts = preparing_parts(world)
    if not parts or not any(model_seat(a) for a in update.get("asks") or []):
        return False
    state: GameState = {
        **table.state,
        "world": merge_world(table.state.get("world"), update.get("world")),
    }
    ahead = Table(table.scenario, table.context, state, world)  # its own cache
    with _LOCK:
        _QUEUED[:] = [f for f in _QUEUED if not f.done()]
        if len(_QUEUED) >= MAX_QUEUED:
            return False
        job = _executor().submit(contextvars.copy_context().run, _prepare, parts, ahead)
        _QUEUED.append(job)
    return True


def _prepare(parts: list[Orders], table: Table) -> None:
    time.sleep(START_AFTER_S)
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
