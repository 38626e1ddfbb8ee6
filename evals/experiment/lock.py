"""One run of an experiment per output folder at a time.

Two runs on one folder would both play the unfinished games and add each other's faults,
fallbacks, calls and tokens to the records; the second is refused before it writes anything.
The lock is an advisory `flock` on `<out>/.lock`: the system drops it when its process ends,
however it ends, so a crashed run never blocks the next one."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from wargraph.evals.experiment.spec import ExperimentError

LOCK_NAME = ".lock"


@contextlib.contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold `out` for this run, or raise ExperimentError naming the run that holds it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise ExperimentError(f"{out}: cannot use this output folder ({err.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise ExperimentError(
                f"{out}: another run of this experiment is using this folder ({holder}); "
                "wait for it to end, or give another --out"
            ) from None
        note = f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%H:%M:%S')}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
