"""A game as the routes read it through the in-process LangGraph client: state, status, open
questions and the settings it was started with.

The client talks to the server in-process (`get_client(url=None)`), which bypasses the auth: the
seat checks of the routes are what keep one player out of another's seat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wargraph.kernel.context import GameContext
from wargraph.server.api import NO_GAME, ApiError

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from wargraph.kernel.scenario import Scenario

CONTEXT_FIELDS = {f.name for f in dataclasses.fields(GameContext)}
_QUESTION_KEYS = (
    "seat",
    "ask_id",
    "round",
    "phase",
    "task",
    "instructions",
    "question",
    "schema",
    "error",
    "draft",
    "memory",
)

DEADLINE_KEY = "wargraph_deadline"  # the thread metadata key of a deadline without a store

_client: LangGraphClient | None = None
_locks: dict[str, asyncio.Lock] = {}


def client() -> LangGraphClient:
    """The in-process LangGraph client (created on first use, inside the server's loop)."""
    global _client
    if _client is None:
        from langgraph_sdk import get_client

        _client = get_client(url=None, api_key=None)
    return _client


def lock(thread_id: str) -> asyncio.Lock:
    """One writer per game inside this server: a run in flight changes which questions are open."""
    return _locks.setdefault(thread_id, asyncio.Lock())


async def read_game(thread_id: str) -> dict[str, Any]:
    """Thread, state and interrupts of a game; 404 when the thread is not a game."""

    from wargraph.server.shared import adopt

    thread, state = await _thread_and_state(thread_id)
    # not a game of this server, or a thread of its id made here without it: a game another
    # server of the store started? (adopted, it reads as one of this server's)
    if (thread is None or not (thread.get("metadata") or {}).get("graph_id")) and await adopt(
        thread_id
    ):
        thread, state = await _thread_and_state(thread_id)
    if thread is None:
        raise ApiError(404, NO_GAME)
    values = state.get("values") or {}
    if not isinstance(values, dict):
        values = {}
    return {
        "held_by": await asyncio.to_thread(holder_of, thread_id),
        "thread": thread,
        "deadline": await saved_deadline(thread_id, thread),
        "values": values,
        "interrupts": [
            {"id": i.get("id"), "value": i.get("value")}
            for i in state.get("interrupts") or []
            if isinstance(i.get("value"), dict)
        ],
    }


async def _thread_and_state(thread_id: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    from langgraph_sdk.errors import NotFoundError

    c = client()
    try:
        thread = await c.threads.get(thread_id)
        state = await c.threads.get_state(thread_id)
    except NotFoundError:
        return None, {}
    return dict(thread), dict(state)


async def saved_deadline(thread_id: str, thread: Mapping[str, Any]) -> dict[str, Any] | None:
    """The phase deadline the facilitator set for the game (`wargraph.server.deadlines`): in
    the store's table of served games when the server keeps its games in a store (every server
    of the store sees it), else in the thread's metadata."""
    import wargraph.server.stored as stored
    from wargraph.server.shared import read_deadline

    db = stored.store()
    if db is not None:
        return await asyncio.to_thread(read_deadline, db, thread_id)
    saved = (thread.get("metadata") or {}).get(DEADLINE_KEY)
    return saved if isinstance(saved, dict) else None


def holder_of(thread_id: str) -> str | None:
    """Who else holds the game's lease now (a CLI command playing it from the same store, with
    `serve --db`), in words; None when no one, or this server itself, does. Sync: run it in a
    thread."""
    import os
    import socket

    import wargraph.server.stored as stored
    import wargraph.store.filelock as filelock
    from wargraph.store.errors import StoreError, is_url
    from wargraph.store.lease import holders, lease_folder, lock_file

    db = stored.store()
    if db is None:
        return None
    if not is_url(db) and not filelock.held(lock_file(lease_folder(db), thread_id)):
        return None  # the usual case, answered without opening the store (pages poll this)
    try:
        held = holders(db).get(thread_id)
    except StoreError:
        return None
    if held is None:
        return None
    command, host, pid, since = held
    if host == socket.gethostname() and int(pid or 0) == os.getpid():
        return None  # this server's own run
    return f"`{command}` (pid {pid} on {host}, since {since})"


def stored_scenario(values: dict[str, Any]) -> Scenario | None:
    """The game's scenario from its state (None before it is set up). Sync: run in a thread."""
    from wargraph.kernel.scenario import ScenarioError, validate_data

    spec = values.get("spec")
    if not spec:
        return None
    try:
        return validate_data(spec, "<game state>")
    except ScenarioError:
        return None


def moment_of(sc: Scenario | None, values: dict[str, Any]) -> str:
    """Where the game stands in its family's own terms (Diplomacy: the engine phase, S1901M),
    from the family's `checkpoint_label`; "" for families that count rounds. Sync."""
    return family_moment(sc.family, values) if sc is not None else ""


def family_moment(family: str, values: dict[str, Any]) -> str:
    """`moment_of` for a family named without its scenario (the games list). Sync."""
    from wargraph.kernel.families import FamilyError, attribute

    try:
        label = attribute(family, "checkpoint_label")
        return str(label(values) or "") if label else ""
    except (FamilyError, KeyError, TypeError, ValueError):
        return ""  # a state the hook cannot read: the round is still shown


def status_of(game: dict[str, Any]) -> str:
    values, thread = game["values"], game["thread"]
    if game.get("held_by"):
        return "held"
    if values.get("error"):
        return "error"
    if thread.get("status") == "error" and not (game["interrupts"] or values.get("done")):
        # A failed run that left open questions (or a finished game) wrote no error into the
        # game: refused because a CLI command held the game, or cut off before its first
        # write. The game goes on from its checkpoint, which a CLI may have moved on since.
        return "error"
    if thread.get("status") == "busy":
        return "running"
    if game["interrupts"]:
        return "waiting"
    if values.get("done"):
        return "over"
    return "starting" if not values.get("spec") else "running"


def public_event(e: Mapping[str, Any]) -> dict[str, Any]:
    """An event's fields a page shows (events read back from a game's state, or raw dicts)."""
    return {k: e.get(k) for k in ("id", "round", "phase", "kind", "author", "audience", "text")}


def question(value: dict[str, Any]) -> dict[str, Any]:
    """What a person needs to answer an interrupt (its view is shown from the events instead)."""
    return {k: value[k] for k in _QUESTION_KEYS if k in value}


def people(sc: Scenario, named: list[str]) -> list[str]:
    """Seats a person answers at: human seats, and seats whose drafts a person reviews."""
    return [r for r, role in sc.roles.items() if role.kind == "human" or r in named or role.review]


def wargraph_meta(thread: Mapping[str, Any]) -> dict[str, Any]:
    meta = thread.get("metadata") or {}
    return meta["wargraph"] if isinstance(meta.get("wargraph"), dict) else {}


async def run_settings(thread_id: str, thread: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The assistant and context the game was started with, to continue it the same way."""
    meta = thread.get("metadata") or {}
    wg = wargraph_meta(thread)
    assistant = wg.get("assistant_id") or meta.get("assistant_id") or meta.get("graph_id")
    context = wg.get("context")
    if context is None:
        runs = await client().runs.list(thread_id, limit=20)
        runs.sort(key=lambda r: str(r.get("created_at")))
        # the server's runs carry their kwargs, which the SDK's Run type does not list
        first: Mapping[str, Any] = runs[0] if runs else {}
        context = ((first.get("kwargs") or {}).get("context")) or {}
    if not assistant:
        raise ApiError(409, "this thread was never run as a game; start games from /facilitator")
    return str(assistant), {k: v for k, v in context.items() if k in CONTEXT_FIELDS}


async def wait_idle(thread_id: str, timeout: float) -> bool:
    """Wait until no run of the game is in flight; False when it still is after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        thread = await client().threads.get(thread_id)
        if thread.get("status") != "busy":
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)
