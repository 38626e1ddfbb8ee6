"""Connections to a store: a SQLite file (WAL, timeouts) or a PostgreSQL pool per URL and process,
and wargraph's tables set up on first use."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from wargraph.store.errors import Db, StoreError, describe
from wargraph.store.sql import reason_of

# --- SQLite ----------------------------------------------------------------------------------


def connect_sqlite(db: Db, *, create: bool = True) -> sqlite3.Connection:
    """Open the SQLite file, or fail with a message that says which file and why."""
    path = Path(db)
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{db}: cannot create its folder ({exc.strerror})") from None
    elif not path.exists():
        raise StoreError(f"{db}: no such checkpoint database")
    if path.is_dir():
        raise StoreError(f"{db}: is a folder, not a checkpoint database")
    _one_name(path)
    try:
        # Games in threads share one file (experiments, servers): WAL lets readers and one writer
        # work at once, and the busy timeout makes a writer wait its turn instead of failing
        # with "database is locked".
        conn = sqlite3.connect(str(db), check_same_thread=False, timeout=60)
        conn.execute("PRAGMA user_version")  # fails here, clearly, if it is not a database
        _use_wal(conn, timeout=60)
        # WAL + NORMAL survives a killed process (only a power cut may lose the last commit)
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot use the checkpoint database ({exc})") from None
    return conn


def _one_name(path: Path) -> None:
    """Refuse a store file with hard links: SQLite keeps its write-ahead log beside the name it
    was opened by, so one file under two names is two stores that diverge (a write through one
    name unseen through the other), and their games' leases could not meet. A symlink is fine
    (SQLite and the leases follow it to the file)."""
    try:
        links = os.stat(path).st_nlink
    except OSError:
        return  # not there yet (created on open), or refused on open with its reason
    if links > 1:
        raise StoreError(
            f"{path}: this store file has {links} names (hard links); a SQLite store must have "
            "one: remove the other names (ls -i shows them), or use a symlink instead"
        )


def _use_wal(conn: sqlite3.Connection, *, timeout: float) -> None:
    """Switch the file to WAL (it stays WAL once set). SQLite refuses the switch at once with
    "database is locked", skipping the busy timeout, while another connection holds a write
    lock, as when games starting together open a new file at the same moment: wait for the
    turn here as the busy timeout would."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def sqlite_is_fresh(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
    ).fetchone()
    return not row[0]


# --- PostgreSQL ------------------------------------------------------------------------------

_pools: dict[tuple[int, str], Any] = {}
_pools_lock = threading.Lock()
POOL_SIZE = int(os.environ.get("WARGRAPH_PG_POOL", "10"))


def pool_for(url: str) -> Any:
    """One pool per URL and process (a forked child opens its own), set up on first use."""
    with _pools_lock:
        pool = _pools.get((os.getpid(), url))
        if pool is None:
            pool = _open_pool(url)
            _pools[(os.getpid(), url)] = pool
    return pool


def connect_problem(url: str, reason: str) -> str:
    """One line for a refused connection: a server that answered (no such database, a login
    refused) is not one that cannot be reached."""
    if "database" in reason and "does not exist" in reason:
        return (
            f"{describe(url)}: the PostgreSQL server has no such database ({reason}); create it "
            "(createdb NAME) or name one that exists"
        )
    if "authentication failed" in reason or ("role" in reason and "does not exist" in reason):
        return f"{describe(url)}: the PostgreSQL server refused the login ({reason})"
    return f"{describe(url)}: cannot reach the PostgreSQL server ({reason})"


def _open_pool(url: str) -> Any:
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - dependencies of wargraph
        raise StoreError(f"PostgreSQL support is not installed ({exc})") from None
    try:
        conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreError(f"--db: not a valid PostgreSQL URL ({reason_of(exc)})") from None
    # one plain connection first: its error is the server's own words, and the pool does not
    # log a retry per failed attempt
    timeout = int(float(os.environ.get("WARGRAPH_PG_TIMEOUT", "5")))
    try:
        psycopg.connect(url, connect_timeout=timeout).close()
    except psycopg.Error as exc:
        raise StoreError(connect_problem(url, reason_of(exc))) from None
    return ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_SIZE,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )


def close(db: Db) -> None:
    """Close this process's pool for a PostgreSQL store (tests that drop a schema; pools
    otherwise live as long as the process)."""
    with _pools_lock:
        pool = _pools.pop((os.getpid(), str(db)), None)
        ready_stores.discard((os.getpid(), str(db)))
    if pool is not None:
        pool.close()


ready_stores: set[tuple[int, str]] = set()
