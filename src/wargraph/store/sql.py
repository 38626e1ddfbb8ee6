"""wargraph's own tables in a store (both backends): the SQL dialect (`Sql`) and the table list."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import wargraph.store.fence as fence
from wargraph.store.errors import Db, StoreError, describe, is_url

# --- SQL for wargraph's own tables (both backends) -----------------------------------------


class Sql:
    """Our own small tables, in the same database as the checkpoints. Statements are written
    with `?` placeholders and run on either backend; each call is its own transaction."""

    def __init__(self, db: Db, conn: Any) -> None:
        self.db, self.conn = db, conn
        self.postgres = is_url(db)
        self.lock = threading.Lock()

    def run(self, sql: str, params: tuple = ()) -> tuple[list[tuple], int]:
        """Rows and rowcount; a backend failure becomes a StoreError naming the store."""
        try:
            if self.postgres:
                with self.conn.connection() as c, c.transaction():
                    cur = c.execute(sql.replace("?", "%s"), params)
                    rows = [tuple(r.values()) for r in cur.fetchall()] if cur.description else []
                    return rows, cur.rowcount
            with self.lock, self.conn:  # commits, or rolls back on an error
                cur = self.conn.execute(sql, params)
                return cur.fetchall(), cur.rowcount
        except (sqlite3.Error, pg_error()) as exc:
            raise StoreError(f"{describe(self.db)}: {reason_of(exc)}") from None

    def create(self, ddl: str) -> None:
        """Make a table of our own on first use (`CREATE TABLE IF NOT EXISTS ...`). On
        PostgreSQL two sessions making one table at once race in the catalogue and one fails
        ('duplicate key value violates unique constraint "pg_type_typname_nsp_index"', seen with
        two threads of one server), so each takes its turn (`taking_turns`)."""
        if not self.postgres:
            self.run(ddl)
            return
        try:
            with self.conn.connection() as c, taking_turns(c, CREATE_LOCK):
                c.execute(ddl)
        except pg_error() as exc:
            raise StoreError(f"{describe(self.db)}: {reason_of(exc)}") from None


CREATE_LOCK = 7412840  # advisory lock id for making one of our tables on first use (PostgreSQL)


@contextlib.contextmanager
def taking_turns(conn: Any, key: int, poll_s: float = 0.02) -> Iterator[None]:
    """A PostgreSQL session-level advisory lock on `conn` (an autocommit connection of the
    store's pool), polled rather than waited on: a session blocked on the lock would hold up a
    migration building an index CONCURRENTLY in another (a deadlock)."""
    while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()["ok"]:
        time.sleep(poll_s)
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


def pg_error() -> type[Exception]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency
        return sqlite3.Error
    return psycopg.Error


def reason_of(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


OWN_TABLES = (
    "CREATE TABLE IF NOT EXISTS wargraph_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    fence.TABLE,  # (stores of earlier versions also keep an unused table wargraph_leases)
    # Which run stored each write of a run that names itself (langgraph-api's runs do, in their
    # metadata), noted in the write's own transaction: a run resumed from a checkpoint stores
    # its first writes under that checkpoint, which `delete_for_runs` keeps.
    "CREATE TABLE IF NOT EXISTS wargraph_run_writes (thread_id TEXT NOT NULL,"
    " checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,"
    " idx BIGINT NOT NULL, run_id TEXT NOT NULL,"
    " PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))",
    "CREATE INDEX IF NOT EXISTS wargraph_run_writes_run ON wargraph_run_writes (run_id)",
)
