"""The store's table of served games, `wargraph_served` (one row per game a server of the store
plays, with its phase deadline), and a game's stored run: what servers on one store share
(`wargraph.server.shared` adopts the games). Sync: run these in a thread."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.store.sql import Sql

log = logging.getLogger(__name__)

TABLE = (
    "CREATE TABLE IF NOT EXISTS wargraph_served (thread_id TEXT PRIMARY KEY, noted TEXT NOT NULL,"
    " deadline TEXT)"
)
LISTED = 100  # games a list shows (the newest)

_ready: set[str] = set()
_ready_lock = threading.Lock()


@contextlib.contextmanager
def _sql(db: str) -> Iterator[Sql]:
    from wargraph.store.setup import own_sql

    with own_sql(db) as sql:
        if db not in _ready:
            with _ready_lock:
                if db not in _ready:
                    sql.create(TABLE)
                    _ready.add(db)
        yield sql


# --- the table (sync: run these in a thread) ----------------------------------------------------


def note_game(db: str, thread_id: str) -> None:
    """This game is played on a server of the store (once per game; later calls do nothing)."""
    with _sql(db) as sql:
        sql.run(
            "INSERT INTO wargraph_served (thread_id, noted) VALUES (?, ?)"
            " ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, _now()),
        )


def served_ids(db: str) -> list[str]:
    """The games servers of the store played, newest first."""
    with _sql(db) as sql:
        rows, _ = sql.run(
            "SELECT thread_id FROM wargraph_served ORDER BY noted DESC LIMIT ?", (LISTED,)
        )
    return [str(r[0]) for r in rows]


def read_deadline(db: str, thread_id: str) -> dict[str, Any] | None:
    with _sql(db) as sql:
        rows, _ = sql.run("SELECT deadline FROM wargraph_served WHERE thread_id = ?", (thread_id,))
    return _parsed(rows[0][0]) if rows else None


def write_deadline(db: str, thread_id: str, saved: dict[str, Any] | None) -> None:
    text = json.dumps(saved, sort_keys=True) if saved is not None else None
    with _sql(db) as sql:
        sql.run(
            "INSERT INTO wargraph_served (thread_id, noted, deadline) VALUES (?, ?, ?) ON CONFLICT"
            " (thread_id) DO UPDATE SET deadline = excluded.deadline",
            (thread_id, _now(), text),
        )


def deadlines(db: str) -> dict[str, dict[str, Any]]:
    """Every game of the store with a deadline set: thread -> the saved deadline."""
    with _sql(db) as sql:
        rows, _ = sql.run(
            "SELECT thread_id, deadline FROM wargraph_served WHERE deadline IS NOT NULL"
        )
    out = {}
    for thread_id, text in rows:
        saved = _parsed(text)
        if saved is not None:
            out[str(thread_id)] = saved
    return out


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _parsed(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- the game's stored run --------------------------------------------------------------------


def stored_run(db: str, thread_id: str) -> dict[str, Any] | None:
    """The run a game was started with (scenario, context, origin), from the store; None for a
    thread that holds no game. Sync."""
    from wargraph.store.errors import StoreError
    from wargraph.store.saver import open_saver

    try:
        with open_saver(db, create=False) as saver:
            return saver.run_of(thread_id)
    except StoreError as err:
        log.warning("wargraph: game %s: %s", thread_id, err)
        return None
