"""The LangGraph savers a store's `Saver` runs on, and what they share: SQLite with every write\nfenced by the game's lease, PostgreSQL with a checkpoint and its blobs in one transaction, the\nwrites of a run noted with its id; `StoreInfo`, what a saver knows of its store."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import wargraph.store.fence as fence
from wargraph.store.crypto import (
    RUN_WRITES,
    RunWrites,
    checkpoint_at,
)
from wargraph.store.errors import (
    Db,
    LeaseLost,
)
from wargraph.store.sql import Sql

if TYPE_CHECKING:
    import psycopg
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.postgres import PostgresSaver as _PostgresBase
    from langgraph.checkpoint.sqlite import SqliteSaver as _SqliteBase
    from psycopg.rows import DictRow

else:
    # The mixins below are checked against the LangGraph savers `saver._saver_class` puts them
    # before; at run time they are plain classes (those savers are imported on first use).
    _SqliteBase = _PostgresBase = object


# How long closing a store waits for calls still running in worker threads (SQLite waits at most
# its busy timeout, 60 s, for a lock)
DRAIN_S = 90.0


@dataclass
class StoreInfo:
    db: Db
    sql: Sql
    key: bytes
    lock: threading.Lock
    pending: dict[str, dict[str, Any]]
    # the server's: a thread's run settings, for games its clients start (`_served_run`)
    served: Callable[[str], dict[str, Any] | None] | None = None
    marked: set[str] = field(default_factory=set)  # threads whose run is known to be stored
    # calls running in worker threads (async methods): the connection outlives the last one
    idle: threading.Condition = field(default_factory=threading.Condition)
    calls: int = 0

    def in_thread(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` counted as a call in progress until it returns, in its own thread: a task
        cancelled while awaiting it leaves the call running, and closing the connection under
        a running call crashes the process."""
        with self.idle:
            self.calls += 1
        try:
            return fn()
        finally:
            with self.idle:
                self.calls -= 1
                self.idle.notify_all()

    def drained(self, timeout: float = DRAIN_S) -> bool:
        """Wait until no call runs in a worker thread; False if one still runs after `timeout`."""
        with self.idle:
            return self.idle.wait_for(lambda: self.calls == 0, timeout)

    def legacy_run(self, thread_id: str) -> dict[str, Any] | None:
        """Stores written before run metadata moved into the first checkpoint."""
        if not self._has_legacy():
            return None
        rows, _ = self.sql.run(
            "SELECT scenario, context FROM wargraph_runs WHERE thread_id = ?", (thread_id,)
        )
        if not rows:
            return None
        return {"scenario": json.loads(rows[0][0]), "context": json.loads(rows[0][1])}

    def legacy_threads(self) -> list[str]:
        if not self._has_legacy():
            return []
        rows, _ = self.sql.run("SELECT thread_id FROM wargraph_runs")
        return [r[0] for r in rows]

    def _has_legacy(self) -> bool:
        if self.sql.postgres:
            return False  # PostgreSQL stores are new: never had the old table
        rows, _ = self.sql.run(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'wargraph_runs'"
        )
        return bool(rows)


def run_writes_of(
    config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str
) -> RunWrites:
    """The rows wargraph_run_writes gets for these writes of a run (none outside a run)."""
    run = (config.get("metadata") or {}).get("run_id")
    if not run:
        return (), False
    from langgraph.checkpoint.base import WRITES_IDX_MAP

    thread, ns, checkpoint = checkpoint_at(config)
    rows = tuple(
        (thread, ns, checkpoint, str(task_id), WRITES_IDX_MAP.get(channel, i), str(run))
        for i, (channel, _) in enumerate(writes)
    )
    return rows, all(channel in WRITES_IDX_MAP for channel, _ in writes)


def note_run_writes(cur: Any, postgres: bool) -> None:
    """Inside `put_writes`'s transaction: which run stores these writes."""
    rows, replace = RUN_WRITES.get()
    if not rows:
        return
    keys = "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
    if postgres:
        then = "UPDATE SET run_id = excluded.run_id" if replace else "NOTHING"
        cur.executemany(
            f"INSERT INTO wargraph_run_writes ({keys}, run_id) VALUES (%s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT ({keys}) DO {then}",
            rows,
        )
    else:
        verb = "REPLACE" if replace else "IGNORE"
        cur.executemany(
            f"INSERT OR {verb} INTO wargraph_run_writes ({keys}, run_id) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )


def _fence(
    db: Db,
    cur: sqlite3.Cursor | psycopg.Cursor[DictRow],
    sql: str,
    first: str,
    by_key: bool = False,
) -> None:
    """Inside a write's own transaction: refuse it if this process holds the thread's lease
    under a generation the store no longer has (`wargraph.store.fence`). `first` excludes a taking
    of the lease until the write commits (its parameter: the thread, or the fence key if
    `by_key`); `sql` then reads the stored generation."""
    thread = fence.WRITING.get()
    held = fence.held(db, thread)
    if thread is None or held is None:
        return
    mine, key = held
    cur.execute(first, (key if by_key else thread,))
    row = cur.execute(sql, (thread,)).fetchone()
    found = None if row is None else int(row["generation"] if isinstance(row, dict) else row[0])
    if found != mine:
        raise LeaseLost(fence.refuse(db, thread, mine, found))


@contextlib.contextmanager
def fenced_writes(config: RunnableConfig) -> Iterator[None]:
    token = fence.WRITING.set(str(config.get("configurable", {}).get("thread_id")))
    try:
        yield
    finally:
        fence.WRITING.reset(token)


class FencedSqlite(_SqliteBase):
    """SqliteSaver writes each checkpoint in one transaction of its `cursor()`: the fencing
    check opens it (an UPDATE takes SQLite's write lock at once), the write follows."""

    wargraph: StoreInfo

    @contextlib.contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with super().cursor(transaction) as cur:
            if transaction:
                _fence(
                    self.wargraph.db,
                    cur,
                    "SELECT generation FROM wargraph_lease WHERE thread_id = ?",
                    # an UPDATE opens the transaction with SQLite's write lock taken
                    "UPDATE wargraph_lease SET generation = generation WHERE thread_id = ?",
                )
                note_run_writes(cur, postgres=False)
            yield cur


class OneTransaction(_PostgresBase):
    """PostgresSaver sends a write's statements (blobs, then the checkpoint) in an autocommit
    pipeline; here they run in one transaction, so a writer killed half-way leaves all or
    nothing, as on SQLite. The transaction starts with the fencing check."""

    wargraph: StoreInfo

    @contextlib.contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[DictRow]]:
        if not pipeline:
            with super()._cursor() as cur:
                yield cur
            return
        from langgraph.checkpoint.postgres._internal import get_connection
        from psycopg.rows import dict_row

        with (
            self.lock,
            get_connection(self.conn) as conn,  # (a pool's connection, as the saver's own)
            conn.transaction(),
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            _fence(
                self.wargraph.db,
                cur,
                "SELECT generation FROM wargraph_lease WHERE thread_id = %s",
                # shared with other writes, exclusive for a taking; its own statement, so the
                # read after it sees a taking that committed while it waited
                "SELECT pg_advisory_xact_lock_shared(%s)",
                by_key=True,
            )
            note_run_writes(cur, postgres=True)
            yield cur
