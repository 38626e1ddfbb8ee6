"""A table of wargraph's own made on first use by many sessions at once (a server's threads,
two servers on one store): on PostgreSQL two `CREATE TABLE IF NOT EXISTS` at once race in the
catalogue and one fails ('duplicate key value violates unique constraint
"pg_type_typname_nsp_index"', seen once in a served game); `Sql.create` takes its turn."""

from __future__ import annotations

import threading

import pytest

from tests.stores import params, store
from wargraph.store.sql import Sql

DDL = "CREATE TABLE IF NOT EXISTS wargraph_race (thread_id TEXT PRIMARY KEY)"


def _sql(db: str) -> Sql:
    if db.startswith("postgresql"):
        from wargraph.store.connect import pool_for

        return Sql(db, pool_for(db))
    from wargraph.store.connect import connect_sqlite

    return Sql(db, connect_sqlite(db))


@pytest.mark.parametrize("kind", params())
def test_sixteen_sessions_make_one_table_at_once(kind, tmp_path):
    with store(kind, tmp_path) as db:
        errors: list[str] = []

        def make() -> None:
            try:
                _sql(db).create(DDL)
            except Exception as exc:  # every failure is counted, whatever its kind
                errors.append(str(exc))

        sessions = [threading.Thread(target=make) for _ in range(16)]
        for s in sessions:
            s.start()
        for s in sessions:
            s.join()
        assert errors == []
        rows, _ = _sql(db).run("SELECT count(*) FROM wargraph_race")
        assert rows == [(0,)]
