"""Exclusive advisory locks on files (`flock`), which the kernel drops when their holder ends,
however it ends (exit, crash, SIGKILL): no pid, host or clock is read to guess whether a
holder lives. Used for one run per experiment folder and one writer per game of a SQLite store.

A lock belongs to the open file description: two opens in one process exclude each other too,
and a child forked while the lock is held shares it: an experiment's game workers
(`wargraph.evals.experiment.procs`) are forked under the folder's lock and hold it with their
driver, which is why they die with it (the kernel ends them when it ends, however it ends).
Local file systems only: a lock over NFS is as good as that NFS server's locking.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

# A `held()` probe holds the lock for microseconds; a taker tries again this long before it
# reports the lock as held, so a listing never makes a real taker fail.
PROBE_GRACE = 0.25


def take(path: Path, *, grace: float = PROBE_GRACE) -> int | None:
    """Open (creating) `path` and lock it exclusively: the descriptor (close it to release), or
    None if another open file holds it. OSError if the file cannot be opened."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + grace
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.01)
        except BaseException:
            os.close(fd)
            raise


def held(path: Path) -> bool:
    """Whether another open file holds `path` locked (a missing file is not held)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also drops the shared lock at once
    return False
