"""One writer per game: an exclusive lease on a thread id, held on something the kernel or the
database server releases by itself when its holder ends, however it ends.

    with lease(db, thread_id, command="play"):
        ...  # only this process writes the thread's checkpoints

- A SQLite store `games.sqlite`: an `flock` on `games.sqlite.leases/<digest of the id>.lock`
  (`wargraph.store.filelock`); the kernel drops it when the holder's process ends. One folder per
  store however it is named (a symlink, a relative path: `lease_folder`; a hard link is
  refused).
- PostgreSQL: `pg_try_advisory_lock` on a connection of the lease's own (never one of the
  pool), held for the lease's life; the server drops it when that session ends: at once when
  the process ends, and through TCP keepalive (about a minute) when its host vanishes.

No clock, pid or hostname decides anything: a holder killed with SIGKILL is replaced at once,
a paused holder keeps its lease (on PostgreSQL until its session is cut), and hosts' clocks
may disagree. Taking the lease increments the thread's generation (`wargraph.store.fence`), which
every checkpoint write of the thread checks in its own transaction: a holder whose lease was
freed and taken meanwhile has its next write refused (`LeaseLost`) and stops.

The table `wargraph_lease` also names the last taker (command, host, pid, since) for the
refusal message; it is never used to decide.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import wargraph.store.fence as fence
import wargraph.store.filelock as filelock
from wargraph.store.errors import Db, GameHeld, LeaseLost, StoreError, describe, is_url
from wargraph.store.fence import advisory_key, store_id
from wargraph.store.setup import own_sql
from wargraph.store.sql import Sql

__all__ = ["GameHeld", "Lease", "LeaseLost", "advisory_key", "holders", "lease", "store_id"]

NAME_WAIT_S = 1.0  # how long a refusal waits for a holder that just took the lock to name itself

# PostgreSQL server-side keepalive for the lease's session: a host that vanished (power cut,
# network gone) has its session ended, and the lease freed, after about idle + interval * count
# seconds. libpq's own keepalive settings make the holder notice a vanished server likewise.
KEEPALIVE = {"idle": 30, "interval": 10, "count": 3}


def lease_folder(db: Db) -> Path:
    """The one lease folder of a SQLite store, however it is named: beside its real path
    (symlinks, relative paths and `..` resolved). A second name that is a hard link is refused
    when the store is opened (`wargraph.store.saver.connect_sqlite`)."""
    return Path(f"{os.path.realpath(db)}.leases")


def lock_file(folder: Path, key: str) -> Path:
    """The lock file of a thread in a store's lease folder (thread ids may hold any character)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return folder / f"{digest}.lock"


class Lease:
    def __init__(self, db: Db, sql: Sql, key: str, command: str) -> None:
        self.db, self.sql, self.key, self.command = db, sql, key, command
        self.generation = 0
        self._fd: int | None = None
        self._session: Any = None
        self._fence_key = 0

    # -- the lock itself ---------------------------------------------------------------------

    def _lock(self) -> bool:
        if is_url(self.db):
            return self._lock_postgres()
        path = lock_file(lease_folder(self.db), self.key)
        try:
            path.parent.mkdir(exist_ok=True)
            self._fd = filelock.take(path)
        except OSError as exc:
            raise StoreError(
                f"{describe(self.db)}: cannot use the lease folder {path.parent} ({exc.strerror})"
            ) from None
        return self._fd is not None

    def _lock_postgres(self) -> bool:
        import psycopg

        sid = store_id(self.sql)
        lock_key = advisory_key(sid, self.key)
        self._fence_key = advisory_key(sid, self.key, "fence")
        try:
            session = psycopg.connect(
                str(self.db),
                autocommit=True,
                connect_timeout=int(float(os.environ.get("WARGRAPH_PG_TIMEOUT", "5"))),
                keepalives=1,
                keepalives_idle=KEEPALIVE["idle"],
                keepalives_interval=KEEPALIVE["interval"],
                keepalives_count=KEEPALIVE["count"],
            )
            # the server's side of keepalive, and no idle timeout for a session that is idle
            # by design (a timeout would only free the lease early; fencing would still hold)
            for name, value in (
                ("tcp_keepalives_idle", KEEPALIVE["idle"]),
                ("tcp_keepalives_interval", KEEPALIVE["interval"]),
                ("tcp_keepalives_count", KEEPALIVE["count"]),
                ("idle_session_timeout", 0),
            ):
                with contextlib.suppress(psycopg.Error):  # older servers lack some settings
                    session.execute(f"SET {name} = {int(value)}")
            row = session.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,)).fetchone()
            got = bool(row and row[0])
        except psycopg.Error as exc:
            raise StoreError(f"{describe(self.db)}: cannot take the game's lease ({exc})") from None
        if not got:
            session.close()
            return False
        self._session = session
        return True

    def _unlock(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the kernel drops the flock with the last descriptor
            self._fd = None
        if self._session is not None:
            with contextlib.suppress(Exception):
                # at once: a closed session's locks go only when its server process has ended
                self._session.execute("SELECT pg_advisory_unlock_all()")
            with contextlib.suppress(Exception):
                self._session.close()  # the server drops the advisory lock with the session
            self._session = None

    # -- taking and giving back --------------------------------------------------------------

    def acquire(self) -> None:
        if not self._lock():
            raise GameHeld(self._refusal())
        try:
            self.generation = self._next_generation()
        except BaseException:
            self._unlock()
            raise
        fence.hold(self.db, self.key, self.generation, self._fence_key)

    def _next_generation(self) -> int:
        """Increment the thread's generation, naming this holder. On PostgreSQL under the
        thread's fence lock, exclusive: writes in flight of an earlier holder commit first."""
        take = (
            "INSERT INTO wargraph_lease (thread_id, generation, command, host, pid, since)"
            " VALUES (?, 1, ?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET"
            " generation = wargraph_lease.generation + 1, command = excluded.command,"
            " host = excluded.host, pid = excluded.pid, since = excluded.since"
            " RETURNING generation"
        )
        me = (self.command, socket.gethostname(), os.getpid(), time.strftime("%Y-%m-%d %H:%M:%S"))
        if self._session is None:
            rows, _ = self.sql.run(take, (self.key, *me))
            return int(rows[0][0])
        import psycopg

        try:
            with self._session.transaction():
                self._session.execute("SELECT pg_advisory_xact_lock(%s)", (self._fence_key,))
                row = self._session.execute(take.replace("?", "%s"), (self.key, *me)).fetchone()
        except psycopg.Error as exc:
            raise StoreError(f"{describe(self.db)}: cannot take the game's lease ({exc})") from None
        return int(row[0])

    def _refusal(self) -> str:
        # a holder names itself just after it takes the lock: a refusal in between waits for
        # the name a moment (it named its holder in 3 races of 5 before)
        deadline = time.monotonic() + NAME_WAIT_S
        while True:
            with contextlib.suppress(StoreError):
                rows, _ = self.sql.run(
                    "SELECT command, host, pid, since FROM wargraph_lease WHERE thread_id = ?",
                    (self.key,),
                )
                if rows and rows[0][0]:
                    command, host, pid, since = rows[0]
                    return (
                        f"game {self.key!r} is in use by `{command}` (pid {pid} on {host}, "
                        f"since {since}); one writer per game: wait for it to end (a holder "
                        "that ended in any way, even killed, frees it at once)"
                    )
            if time.monotonic() > deadline:
                return f"game {self.key!r} is in use by another process; one writer per game"
            time.sleep(0.02)

    def check(self) -> None:
        """Raise LeaseLost once a write of this holder was refused (another took the game)."""
        if fence.lost(self.db, self.key):
            raise LeaseLost(fence.lost_message(self.key, self.generation, None))

    def release(self) -> None:
        fence.drop(self.db, self.key)
        with contextlib.suppress(StoreError):  # the name only: the lock decides
            self.sql.run(
                "UPDATE wargraph_lease SET command = NULL WHERE thread_id = ? AND generation = ?",
                (self.key, self.generation),
            )
        self._unlock()


@contextlib.contextmanager
def lease(db: Db, key: str, *, command: str = "wargraph", create: bool = True) -> Iterator[Lease]:
    """Hold `key` (a thread id, or any name such as `experiment:<folder>`) in the store `db`
    while the block runs; raises GameHeld, naming the holder, if another process holds it."""
    with own_sql(db, create=create) as sql:
        held = Lease(db, sql, key, command)
        held.acquire()
        try:
            yield held
        finally:
            held.release()


def holders(db: Db) -> dict[str, tuple]:
    """The games of a store held right now: key -> (command, host, pid, since), as the
    holder named itself. Asks the lock (file or server), never a clock."""
    with own_sql(db, create=False) as sql:
        rows, _ = sql.run("SELECT thread_id, command, host, pid, since FROM wargraph_lease")
        if not rows:
            return {}
        if is_url(db):
            return _held_postgres(sql, rows)
    return {r[0]: tuple(r[1:]) for r in rows if filelock.held(lock_file(lease_folder(db), r[0]))}


def _held_postgres(sql: Sql, rows: list[tuple]) -> dict[str, tuple]:
    sid = store_id(sql)
    locks, _ = sql.run(
        "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory'"
        " AND objsubid = 1 AND granted AND database ="
        " (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    taken = {(int(c) << 32) | int(o) for c, o in locks}
    out = {}
    for row in rows:
        unsigned = advisory_key(sid, row[0]) & 0xFFFFFFFFFFFFFFFF
        if unsigned in taken:
            out[row[0]] = tuple(row[1:])
    return out
