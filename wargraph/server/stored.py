"""`wargraph serve --db STORE`: the server keeps its games in a wargraph store (a SQLite file or
a PostgreSQL URL), the same store the CLI plays, lists and views games in.

langgraph-api loads the checkpointer `saver` names (langgraph.json `"checkpointer": {"path":
"wargraph.server.stored.saver"}`, written by `wargraph serve`) once per event loop; the store
comes from WARGRAPH_SERVE_DB. Its checkpoints are sealed and bound like the CLI's, and a game a
client starts gets its run (scenario and settings) with its first step, so `wargraph games`,
`view --thread` and `resume` find it.

One writer per game, as for the CLI: each run of a game holds the game's lease while it runs
(`run_lease`, command `serve`), and its writes are fenced by the lease's generation. A CLI
`resume` of a game while a run of it is in flight is refused ("in use by `serve`"), and a run
while a CLI command holds the game fails with the same words naming that command. Between runs
(a game waiting for people) nobody holds it: either side may continue the game, from its latest
checkpoint, so neither overwrites what the other wrote.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

DB_ENV = "WARGRAPH_SERVE_DB"
PATH = "wargraph.server.stored.saver"  # langgraph-api imports `module.attr` (a dot, not a colon)
ORIGIN = "serve"


def store() -> str | None:
    """The store this server keeps its games in (None: langgraph-api's own, in memory)."""
    return os.environ.get(DB_ENV, "").strip() or None


@contextlib.asynccontextmanager
async def saver() -> AsyncIterator[Any]:
    """The checkpointer of the server's games (langgraph-api enters it at startup)."""
    from wargraph.store import open_async_saver

    db = store()
    if db is None:
        raise RuntimeError(f"{DB_ENV} names no store: start the server with wargraph serve --db")
    async with open_async_saver(db, origin=ORIGIN) as found:
        yield found


@contextlib.asynccontextmanager
async def run_lease(config: dict[str, Any] | None) -> AsyncIterator[None]:
    """The game's lease for the duration of a run (langgraph-api enters a graph factory's
    context for each run and leaves it when the run ends); reads take none."""
    from wargraph.lease import lease
    from wargraph.store import in_thread

    conf = (config or {}).get("configurable") or {}
    db, thread = store(), conf.get("thread_id")
    if db is None or not thread or not conf.get("__is_for_execution__"):
        yield
        return
    async with in_thread(lease(db, str(thread), command=ORIGIN)):
        yield
