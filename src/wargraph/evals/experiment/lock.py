"""One run of an experiment per output folder at a time.

Two runs on one folder would both play the unfinished games and add each other's faults,
fallbacks, calls and tokens to the records; the second is refused before it writes anything.
The lock is an advisory `flock` on `<out>/.lock`: the system drops it when its process ends,
however it ends, so a crashed run never blocks the next one."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from wargraph.evals.experiment.spec import ExperimentError
from wargraph.store.filelock import take

LOCK_NAME = ".lock"


@contextlib.contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold `out` for this run, or raise ExperimentError naming the run that holds it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = take(out / LOCK_NAME)
    except OSError as err:
        raise ExperimentError(f"{out}: cannot use this output folder ({err.strerror})") from None
    if fd is None:
        try:
            holder = (out / LOCK_NAME).read_text(errors="replace").strip()[:200]
        except OSError:
            holder = ""
        raise ExperimentError(
            f"{out}: another run of this experiment is using this folder "
            f"({holder or 'another process'}); wait for it to end, or give another --out"
        )
    try:
        note = f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%H:%M:%S')}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
