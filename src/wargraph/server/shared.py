"""Servers on one store (`wargraph serve --db STORE` twice, on one machine or several): each
lists and continues the games the others started.

`langgraph dev` keeps its threads, runs and assistants in its own state folder; only the games
themselves (their checkpoints) are in the store. So each server notes the games it plays in the
store's table `wargraph_served` (one row per game, with the game's phase deadline), and a game
its own runtime has not seen is **adopted** when it is listed or named: the runtime gets a
thread of the same id whose metadata names the family's graph, and its settings come from the
game's stored run (its scenario and context, sealed in the store). Reads and runs then find the
graph of the game's stored scenario (`scenario_of`, used by `factory`). One writer at a time
still: every run takes the game's lease in the store, so a game being played on one server is
refused to the others ("in use by `serve`") until that run ends.

Without `--db` a server keeps its games to itself (langgraph-api's own store), as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import wargraph.server.stored as stored

if TYPE_CHECKING:
    from wargraph.store.sql import Sql

log = logging.getLogger(__name__)

TABLE = (
    "CREATE TABLE IF NOT EXISTS wargraph_served (thread_id TEXT PRIMARY KEY, noted TEXT NOT NULL,"
    " deadline TEXT)"
)
LISTED = 100  # games a list shows (the newest)

_ready: set[str] = set()
_specs: dict[str, dict[str, Any]] = {}  # thread -> its stored scenario (a game's never changes)


@contextlib.contextmanager
def _sql(db: str) -> Iterator[Sql]:
    from wargraph.store.setup import own_sql

    with own_sql(db) as sql:
        if db not in _ready:
            sql.run(TABLE)
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


async def scenario_of(thread_id: str) -> dict[str, Any] | None:
    """The stored scenario of a game kept in this server's store (None without a store or a
    game): the graph a read or a run of it needs when its config names no scenario (a game
    adopted from another server, or started through the API with its scenario as input)."""
    db = stored.store()
    if db is None or not thread_id:
        return None
    if thread_id not in _specs:
        run = await asyncio.to_thread(stored_run, db, thread_id)
        spec = (run or {}).get("scenario")
        if not isinstance(spec, dict):
            return None
        _specs[thread_id] = spec
    return _specs[thread_id]


# --- adopting another server's game -------------------------------------------------------------


async def adopt(thread_id: str) -> bool:
    """Make a game of the store that this server's runtime does not know (started on another
    server of the store) one of its own threads: True when the thread is now a game here."""
    from langgraph_sdk.errors import NotFoundError

    from wargraph.server.games import CONTEXT_FIELDS, client
    from wargraph.store.errors import SERVED

    db = stored.store()
    if db is None:
        return False
    run = await asyncio.to_thread(stored_run, db, thread_id)
    spec = (run or {}).get("scenario")
    if run is None or run.get("origin") != SERVED or not isinstance(spec, dict):
        return False
    family = str(spec.get("family") or "")
    context = {k: v for k, v in (run.get("context") or {}).items() if k in CONTEXT_FIELDS}
    meta = {
        "graph_id": family,
        "wargraph": {
            "title": spec.get("title") or "",
            "family": family,
            "scenario": spec.get("name") or "(stored)",
            "assistant_id": family,  # the family's own assistant: its graph is the stored one
            "context": context,
            "adopted": True,  # first played on another server of the store
        },
    }
    c = client()
    try:
        thread = await c.threads.get(thread_id)
    except NotFoundError:
        await c.threads.create(thread_id=thread_id, metadata=meta, if_exists="do_nothing")
        return True
    if not (thread.get("metadata") or {}).get("graph_id"):
        # a thread of that id made here without the game (`POST /threads` with its id): its
        # reads showed an empty state that hid the game's open questions
        await c.threads.update(thread_id, metadata=meta)
    return True


async def adopt_listed(known: set[str]) -> list[str]:
    """Adopt the store's served games this runtime does not list yet; their ids."""
    db = stored.store()
    if db is None:
        return []
    adopted = []
    for thread_id in await asyncio.to_thread(served_ids, db):
        if thread_id not in known and await adopt(thread_id):
            adopted.append(thread_id)
    return adopted


THREAD_PATH = re.compile(r"^/threads/([0-9a-fA-F-]{36})(?:/|$)")
_games: set[str] = set()  # threads this runtime knows as games (no need to look again)


async def adopt_named(path: str) -> None:
    """Before a LangGraph API request on `/threads/{id}/...`: a game of the store this runtime
    does not know is adopted first, so the API finds it (not a 404, nor an empty state)."""
    from langgraph_sdk.errors import NotFoundError

    from wargraph.server.games import client

    found = THREAD_PATH.match(path)
    if found is None or stored.store() is None or found.group(1) in _games:
        return
    thread_id = found.group(1)
    try:
        thread = await client().threads.get(thread_id)
    except NotFoundError:
        thread = None
    if (
        thread is not None
        and (thread.get("metadata") or {}).get("graph_id")
        or await adopt(thread_id)
    ):
        _games.add(thread_id)
