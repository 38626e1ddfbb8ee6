"""The threads a served game's sync steps run in.

Every run on the server is an `ainvoke`: LangGraph runs the sync nodes (phases, the seats'
decisions and their model calls) and the store's calls in the event loop's default executor,
min(32, CPUs + 4) threads, six on two cores, shared by every run in flight: six model calls at
once across all games, whatever the endpoints allow. benchmarks/sync_async.py measured it: 64
crisis games whose seats call a 200 ms endpoint, 32 at a time, ran at 0.28x the games per minute
of threads with that executor, and at 0.90-0.98x with 64 threads. The server's loop gets
WARGRAPH_SERVER_THREADS threads (default 64); each waits on I/O, not on the GIL.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor

THREADS_ENV = "WARGRAPH_SERVER_THREADS"
DEFAULT_THREADS = 64

log = logging.getLogger(__name__)


def step_threads() -> int:
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    if raw.isdigit() and 1 <= int(raw) <= 1024:
        return int(raw)
    log.warning(
        "%s=%r: expected a whole number from 1 to 1024; using %d", THREADS_ENV, raw, DEFAULT_THREADS
    )
    return DEFAULT_THREADS


def use_step_threads() -> int:
    """Give the running loop (the server's) an executor of `step_threads()` threads."""
    n = step_threads()
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(n, "wargraph-step"))
    return n
