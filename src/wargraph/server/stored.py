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
"""

from __future__ import annotations

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
        _settings[thread] = _plain(execution.context)
        try:
            yield
        finally:
            _settings.pop(thread, None)


def _plain(context: Any) -> dict[str, Any]:
    """A run's context as sent (a mapping) or as the graph's schema made it (a dataclass)."""
    if dataclasses.is_dataclass(context) and not isinstance(context, type):
        return dataclasses.asdict(context)
    return dict(context) if isinstance(context, dict) else {}
