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
import re
from typing import Any

import wargraph.server.stored as stored
from wargraph.kernel.context import CONTEXT_FIELDS
from wargraph.server.client import client
from wargraph.server.served import served_ids, stored_run

_specs: dict[str, dict[str, Any]] = {}  # thread -> its stored scenario (a game's never changes)


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
