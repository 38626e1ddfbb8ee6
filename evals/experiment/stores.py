"""The checkpoint store an experiment's games share: a SQLite file (one machine) or a
PostgreSQL URL (any number of machines), and an exclusive lease per game on PostgreSQL.

`open_saver` and `game_lease` are the only places that know how a store is opened and
locked, so the project-wide store module can replace them without touching the drivers.
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

URL_SCHEMES = ("postgresql://", "postgres://")


class StoreError(RuntimeError):
    """A store that cannot be used; the message names it and says what to do."""


class LeaseHeld(StoreError):
    """Another process is playing this game right now."""


def is_url(db: str | Path | None) -> bool:
    return isinstance(db, str) and db.startswith(URL_SCHEMES)


def describe(db: str | Path) -> str:
    """The store as it may be printed: a URL without its password."""
    if not is_url(db):
        return str(db)
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(str(db))
    except Exception:  # a malformed URL is reported by `check_store`
        return str(db).split("@")[-1]
    host = parts.get("host", "localhost") + (f":{parts['port']}" if parts.get("port") else "")
    return f"postgresql://{parts.get('user', '')}@{host}/{parts.get('dbname', '')}"


def _connect(url: str, *, name: str = "wargraph"):
    """One autocommit connection (what the saver needs), or a one-line StoreError."""
    try:
        import psycopg
        from psycopg.rows import dict_row
    except ImportError:
        raise StoreError(
            "PostgreSQL stores need the `scale` extra: pip install 'wargraph[scale]'"
        ) from None
    try:
        return psycopg.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=10,
            application_name=name[:63],
        )
    except psycopg.ProgrammingError as err:  # a malformed URL
        raise StoreError(f"{describe(url)}: not a PostgreSQL URL ({first_line(err)})") from None
    except psycopg.OperationalError as err:
        raise StoreError(
            f"{describe(url)}: cannot reach the PostgreSQL store ({first_line(err)})"
        ) from None


def first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0].strip()


def last_line(err: Exception) -> str:
    """A remote task's error ends with its own message, after the remote traceback."""
    return (str(err).strip().splitlines() or [type(err).__name__])[-1].strip()


def check_store(db: str | Path) -> None:
    """Fail before any game: the server answers and the checkpoint tables exist (set up once,
    under a lock, since savers racing to create the same tables fail)."""
    if not is_url(db):
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    key = _key("wargraph-setup")
    with contextlib.closing(_connect(str(db))) as conn:
        # Poll rather than wait inside a statement: set-up builds an index CONCURRENTLY, which
        # waits for every open transaction, a blocked pg_advisory_lock call included.
        while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()["ok"]:
            time.sleep(0.05)
        try:
            PostgresSaver(conn).setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


@contextlib.contextmanager
def open_saver(db: str | Path) -> Iterator[Any]:
    """A checkpoint saver on the store: SQLite for a path, PostgreSQL for a URL (tables set
    up by `check_store` beforehand)."""
    if not is_url(db):
        from wargraph.runner import sqlite_saver

        with sqlite_saver(db) as saver:
            yield saver
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    with contextlib.closing(_connect(str(db))) as conn:
        yield PostgresSaver(conn)


def _key(thread_id: str) -> int:
    """A signed 64-bit advisory-lock key for a thread id."""
    return int.from_bytes(hashlib.sha256(thread_id.encode()).digest()[:8], "big", signed=True)


def holder_name() -> str:
    return f"wargraph pid {os.getpid()} on {socket.gethostname()}"


@contextlib.contextmanager
def game_lease(db: str | Path, thread_id: str) -> Iterator[None]:
    """Hold the game's thread alone while playing it, or raise LeaseHeld naming the holder.

    On PostgreSQL a session advisory lock: the server drops it as soon as the holder's
    connection closes, so a killed worker never leaves a stale lease. A SQLite store lives on
    one machine, where the experiment folder's lock already keeps a second driver out."""
    if not is_url(db):
        yield
        return
    conn = _connect(str(db), name=holder_name())
    try:
        key = _key(thread_id)
        row = conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()
        if not row["ok"]:
            holder = conn.execute(
                "SELECT a.application_name AS name FROM pg_locks l "
                "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
                "AND l.granted AND (l.classid::bigint << 32 | l.objid::bigint) = %s",
                (key,),
            ).fetchone()
            who = holder["name"] if holder else "another process"
            raise LeaseHeld(f"thread {thread_id!r} is being played by {who}")
        yield
    finally:
        conn.close()  # closing the session releases the lock
