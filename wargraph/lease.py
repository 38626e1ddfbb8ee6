"""One writer per game: an exclusive lease on a thread id, held in the store itself
(table `wargraph_leases`, the same on SQLite and PostgreSQL).

    with lease(db, thread_id, command="play"):
        ...  # only this process writes the thread's checkpoints

A second taker is refused with `GameHeld`, one line naming the holder (host, pid, command,
since when). The holder renews a heartbeat every `ttl/3` seconds from a daemon thread and
deletes its row on exit. After a crash the row stays behind: on the same host a holder whose
pid is gone is replaced at once; a holder on another host once its heartbeat is older than
`ttl` (hosts' clocks are assumed roughly in step). A holder whose row was taken over meanwhile
(it stalled for longer than `ttl`) finds `lost` set and must stop writing; `check()` raises.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime

from wargraph.store import Db, Sql, StoreError, own_sql

TTL = float(os.environ.get("WARGRAPH_LEASE_TTL", "30"))


class GameHeld(StoreError):
    """Another process holds the game's lease."""


class Lease:
    def __init__(self, sql: Sql, key: str, command: str, ttl: float) -> None:
        self.sql, self.key, self.command, self.ttl = sql, key, command, ttl
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.holder = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def acquire(self) -> None:
        for _ in range(2):  # the second try follows the removal of a dead holder's row
            now = time.time()
            self.sql.run(
                "INSERT INTO wargraph_leases (thread_id, holder, host, pid, command, acquired,"
                " heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET"
                " holder = excluded.holder, host = excluded.host, pid = excluded.pid,"
                " command = excluded.command, acquired = excluded.acquired,"
                " heartbeat = excluded.heartbeat WHERE wargraph_leases.heartbeat < ?",
                (
                    self.key,
                    self.holder,
                    self.host,
                    self.pid,
                    self.command,
                    now,
                    now,
                    now - self.ttl,
                ),
            )
            row = self._row()
            if row is not None and row[0] == self.holder:
                self._beat = threading.Thread(target=self._heartbeat, daemon=True)
                self._beat.start()
                return
            if row is not None and self._gone(row):
                self.sql.run(
                    "DELETE FROM wargraph_leases WHERE thread_id = ? AND holder = ?",
                    (self.key, row[0]),
                )
                continue
            break
        raise GameHeld(self._refusal(row))

    def _row(self) -> tuple | None:
        rows, _ = self.sql.run(
            "SELECT holder, host, pid, command, acquired, heartbeat FROM wargraph_leases"
            " WHERE thread_id = ?",
            (self.key,),
        )
        return rows[0] if rows else None

    def _gone(self, row: tuple) -> bool:
        """A holder on this host whose process no longer exists (killed, crashed)."""
        _, host, pid, *_ = row
        if host != self.host:
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, another user's
            return False
        return False

    def _refusal(self, row: tuple | None) -> str:
        if row is None:  # released between our insert and our read: rare, say it plainly
            return f"game {self.key!r} was being taken by another process; try again"
        _, host, pid, command, acquired, heartbeat = row
        since = datetime.fromtimestamp(float(acquired)).strftime("%Y-%m-%d %H:%M:%S")
        expires = max(0, int(float(heartbeat) + self.ttl - time.time()))
        return (
            f"game {self.key!r} is in use by `{command}` (pid {pid} on {host}, since {since}); "
            f"one writer per game: wait for it to end (if it died, the lease expires in "
            f"{expires} s)"
        )

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                _, count = self.sql.run(
                    "UPDATE wargraph_leases SET heartbeat = ? WHERE thread_id = ? AND holder = ?",
                    (time.time(), self.key, self.holder),
                )
            except StoreError:
                continue  # the store is briefly unreachable: try again at the next beat
            if count == 0:
                self.lost.set()
                return

    def check(self) -> None:
        """Raise if the lease was taken over (this process stalled past the TTL)."""
        if self.lost.is_set():
            raise GameHeld(
                f"game {self.key!r}: this process lost its lease (it stalled for more than "
                f"{self.ttl:.0f} s and another process took the game); it stops writing"
            )

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
        with contextlib.suppress(StoreError):
            self.sql.run(
                "DELETE FROM wargraph_leases WHERE thread_id = ? AND holder = ?",
                (self.key, self.holder),
            )


@contextlib.contextmanager
def lease(
    db: Db, key: str, *, command: str = "wargraph", ttl: float | None = None, create: bool = True
) -> Iterator[Lease]:
    """Hold `key` (a thread id, or any name such as `experiment:<folder>`) in the store `db`
    while the block runs; raises GameHeld, naming the holder, if another process holds it."""
    with own_sql(db, create=create) as sql:
        held = Lease(sql, key, command, TTL if ttl is None else ttl)
        held.acquire()
        try:
            yield held
        finally:
            held.release()


def holders(db: Db) -> dict[str, tuple]:
    """Live leases of a store: key -> (holder, host, pid, command, acquired, heartbeat)."""
    with own_sql(db, create=False) as sql:
        rows, _ = sql.run(
            "SELECT thread_id, holder, host, pid, command, acquired, heartbeat FROM wargraph_leases"
            " WHERE heartbeat >= ?",
            (time.time() - TTL,),
        )
    return {r[0]: tuple(r[1:]) for r in rows}
