"""`wargraph serve --db STORE`: the server keeps its games in a wargraph store (a SQLite file or
a PostgreSQL URL), the same store the CLI plays, lists and views games in.

langgraph-api loads the checkpointer `saver` names (langgraph.json `"checkpointer": {"path":
"wargraph.server.stored.saver"}`, written by `wargraph serve`) once per event loop; the store
comes from WARGRAPH_SERVE_DB. Its checkpoints are sealed and bound like the CLI's, and a game a
client starts gets its run (scenario and settings) with its first step, so `wargraph games`,
`view --thread` and `resume` find it.

One writer per game, as for the CLI: each run of a game, and each state edit through the
LangGraph API outside a run (`threads.update_state`), holds the game's lease while it writes
(`run_lease`, command `serve`), and a run's writes are fenced by the lease's generation. A CLI
`resume` of a game while a run or an edit of it is in flight is refused ("in use by `serve`"),
and a run or an edit while a CLI command holds the game fails with the same words naming that
command (an edit answers 409). Between runs (a game waiting for people) nobody holds it: either
side may continue the game, from its latest checkpoint, so neither overwrites what the other
wrote. The store's deletions (a thread, a run's checkpoints, a prune) take each game's lease
themselves (`wargraph.store.pruning`), and so does a copy of a thread (`wargraph.store.copying`: the
source's while it is read, the copy's while it is written).

A run `langgraph dev` queues again at a restart (it saves its runs every 10 s and plays again
those it last saw pending or running) that already wrote to its game is refused before it
writes anything (`RunPlayedBefore`): played again, it would start the game over or give its
answers twice, also on a game another server of the store has moved on since.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph_sdk.runtime import ServerRuntime

    from wargraph.store.saver import Saver

DB_ENV = "WARGRAPH_SERVE_DB"
PATH = "wargraph.server.stored.saver"  # langgraph-api imports `module.attr` (a dot, not a colon)
ORIGIN = "serve"  # the command a run's lease names

# The run settings (context) of each game a run is playing now, for its run metadata.
_settings: dict[str, dict[str, Any]] = {}


def store() -> str | None:
    """The store this server keeps its games in (None: langgraph-api's own, in memory)."""
    return os.environ.get(DB_ENV, "").strip() or None


@contextlib.asynccontextmanager
async def saver() -> AsyncIterator[Saver]:
    """The checkpointer of the server's games (langgraph-api enters it at startup)."""
    from wargraph.store.saver import open_async_saver

    db = store()
    if db is None:
        raise RuntimeError(f"{DB_ENV} names no store: start the server with wargraph serve --db")
    async with open_async_saver(db, served=_settings.get) as found:
        yield found


# Why langgraph-api enters a graph factory (`ServerRuntime.access_context`) when the graph then
# writes the game's checkpoints: a run, and a state edit outside a run (`threads.update_state`,
# `bulk_update_state`). Reads ("threads.read", "assistants.read") take no lease.
WRITING = frozenset({"threads.create_run", "threads.update"})


@contextlib.asynccontextmanager
async def run_lease(
    config: RunnableConfig | None, runtime: ServerRuntime | None
) -> AsyncIterator[None]:
    """For a use of a game's graph that writes it (langgraph-api enters a graph factory's
    context for each run and each state edit, and leaves it when that ends): the game's lease,
    and for a run its settings, noted for the game's run metadata. Reads take none."""
    from wargraph.store.lease import lease
    from wargraph.store.saver import in_thread

    execution = getattr(runtime, "execution_runtime", None)
    writes = execution is not None or getattr(runtime, "access_context", None) in WRITING
    db, thread = store(), ((config or {}).get("configurable") or {}).get("thread_id")
    if db is None or not thread or not writes:
        yield
        return
    thread = str(thread)
    async with in_thread(lease(db, thread, command=ORIGIN)):
        if execution is None:  # a state edit: the game's run metadata is already stored
            yield
            return
        run_id = _run_id(config)
        played = await asyncio.to_thread(begin_run, db, thread, run_id) if run_id else False
        if played:
            raise RunPlayedBefore(
                f"run {run_id} of game {thread} already played before this server restarted "
                "(its end was not yet saved in the server's state folder); it is not played "
                "again: the game goes on from its latest checkpoint in the store"
            )
        _settings[thread] = _plain(execution.context)
        try:
            yield
        finally:
            _settings.pop(thread, None)


class RunPlayedBefore(RuntimeError):
    """A run the LangGraph server queued again after a restart that had already written to its
    game: played again, it would apply its input (a new game) or its answers a second time."""


def _run_id(config: RunnableConfig | None) -> str:
    conf = (config or {}).get("configurable") or {}
    meta = (config or {}).get("metadata") or {}
    return str(conf.get("run_id") or meta.get("run_id") or "")


def begin_run(db: str, thread_id: str, run_id: str) -> bool:
    """Before a run plays: note the game as one of the store's served games (so the other
    servers of the store list it: `wargraph.server.shared`), and say whether this run already
    played (`played_before`). Sync."""
    from wargraph.server.shared import note_game

    note_game(db, thread_id)
    return played_before(db, thread_id, run_id)


def played_before(db: str, thread_id: str, run_id: str) -> bool:
    """Whether the run `run_id` already wrote to the game (the store notes each write of a
    langgraph-api run with its run id: `wargraph_run_writes`). Sync: run it in a thread.

    `langgraph dev` keeps its runs in its state folder, saved every 10 s; a run the folder last
    saw pending or running is queued again at the next start (the runtime takes it for one cut
    off by a crash), even when it had finished. Asked under the game's lease, so no run of it
    writes meanwhile."""
    from wargraph.store.setup import own_sql

    with own_sql(db, create=False) as sql:
        rows, _ = sql.run(
            "SELECT 1 FROM wargraph_run_writes WHERE thread_id = ? AND run_id = ? LIMIT 1",
            (thread_id, run_id),
        )
    return bool(rows)


def _plain(context: Any) -> dict[str, Any]:
    """A run's context as sent (a mapping) or as the graph's schema made it (a dataclass)."""
    if dataclasses.is_dataclass(context) and not isinstance(context, type):
        return dataclasses.asdict(context)
    return dict(context) if isinstance(context, dict) else {}
