"""Setting a store up: LangGraph's tables and wargraph's own, once per process (PostgreSQL\nprocesses take turns), the store's key read or made; and wargraph's own SQL over a store\n(`own_sql`), which the leases use."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

from wargraph.store.connect import connect_sqlite, pool_for, ready_stores, sqlite_is_fresh
from wargraph.store.crypto import (
    store_key,
)
from wargraph.store.errors import (
    Db,
    is_url,
)
from wargraph.store.sql import OWN_TABLES, Sql, taking_turns


def prepare_sqlite(db: Db, conn: sqlite3.Connection) -> tuple[Sql, bytes, int]:
    sql = Sql(db, conn)
    fresh = sqlite_is_fresh(conn)
    for ddl in OWN_TABLES:
        sql.run(ddl)
    key, strict = store_key(sql, fresh)
    return sql, key, strict


_setup_lock = threading.Lock()


SETUP_LOCK = 7412839  # advisory lock id for wargraph's set-up of a PostgreSQL database


def prepare_postgres(url: str, pool: Any) -> tuple[Sql, bytes, int]:
    """LangGraph's tables and ours, once per process. Processes starting together take turns
    through an advisory lock (`taking_turns`: the migrations build indexes CONCURRENTLY)."""
    sql = Sql(url, pool)
    key_of = (os.getpid(), url)
    from langgraph.checkpoint.postgres import PostgresSaver

    with _setup_lock:
        if key_of in ready_stores:
            return (sql, *store_key(sql, False))
        with pool.connection() as conn, taking_turns(conn, SETUP_LOCK, poll_s=0.05):
            fresh = conn.execute("SELECT to_regclass('checkpoints') IS NULL AS f").fetchone()["f"]
            PostgresSaver(conn).setup()  # LangGraph's tables (no wargraph saver needed)
            for ddl in OWN_TABLES:
                conn.execute(ddl)
        key, strict = store_key(sql, bool(fresh))
        ready_stores.add(key_of)
    return sql, key, strict


def own_sql(db: Db, *, create: bool = True) -> contextlib.AbstractContextManager[Sql]:
    """wargraph's own tables of a store, without a saver (leases, listings)."""
    return _own_sql(db, create)


@contextlib.contextmanager
def _own_sql(db: Db, create: bool) -> Iterator[Sql]:
    if is_url(db):
        pool = pool_for(str(db))
        sql, _, _ = prepare_postgres(str(db), pool)
        yield sql
        return
    conn = connect_sqlite(db, create=create)
    try:
        sql, _, _ = prepare_sqlite(db, conn)  # a wrong key is refused here, before any write
        yield sql
    finally:
        conn.close()
