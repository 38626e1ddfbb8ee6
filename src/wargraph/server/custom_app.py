"""What the two custom apps langgraph-api mounts share (`app`: pages, seat and facilitator
APIs; `studio_app`: Studio mode, none of those): one startup (`lifespan`), the guard in front of
every request of the server, and one answer to a game another process holds.

langgraph-api makes the custom app the server's base app, merging its own exception handlers
after the app's: so a store's refusal raised anywhere in the server is answered 409 with its
words instead of a bare 500: `GameHeld` (a state edit through the LangGraph API while a CLI
command holds the game, a deletion or a copy of a game another process holds), naming the
holder, and `HistoryInUse` (deleting a run that later runs continued from); a state edit that
does not fit the graph (`BadStateEdit`, e.g. `POST /threads/ID/state` with only `values`) is
answered 422.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from wargraph.kernel.graphkit import BadStateEdit
from wargraph.server.api import json_response
from wargraph.server.endpoints import enforce
from wargraph.server.guard import Guard
from wargraph.server.seats import SECRET_ENV, TOKEN_LINE, facilitator_token
from wargraph.server.steps import use_step_threads
from wargraph.store.errors import GameHeld, HistoryInUse

log = logging.getLogger(__name__)

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]


def lifespan(*, seat_links: bool) -> Lifespan:
    """The server's startup: models only from the operator's allow-list, and threads for the
    sync steps of every run in flight. `seat_links`: the app hands out seat links, which last
    only until the server stops when no key is set (a bare `langgraph dev`): say so."""

    @asynccontextmanager
    async def start(app: Starlette) -> AsyncIterator[None]:
        enforce()  # models only from the operator's allow-list
        use_step_threads()  # sync steps of every run in flight: more than the default six
        if seat_links and not os.environ.get(SECRET_ENV):
            # A bare `langgraph dev` (not `wargraph serve`): the key is new each start. The
            # token goes on a plain line of the server's output (a structured log line hides
            # it), which the API's 401 names.
            base = os.environ.get("LANGGRAPH_API_URL", "").rstrip("/")
            print(
                f"{TOKEN_LINE} {facilitator_token()} (Authorization: Bearer <token>; new at each "
                f"start: set {SECRET_ENV} to keep it and the seat links). Facilitator page: "
                f"{base}/facilitator#token={facilitator_token()}",
                file=sys.stderr,
                flush=True,
            )
            log.warning(
                "wargraph: %s is not set; seat links last until this server stops. "
                "Facilitator page: /facilitator#token=%s",
                SECRET_ENV,
                facilitator_token(),
            )
        if not seat_links:  # Studio mode: no facilitator, no deadlines
            yield
            return
        from wargraph.server.deadlines import watch

        watcher = asyncio.create_task(watch())  # what happens at a phase's deadline
        try:
            yield
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    return start


async def refused(request: Request, exc: Exception) -> Response:
    """409 with the store's refusal (`game … is in use by resume (pid …)`): nothing was
    written."""
    return json_response({"detail": str(exc)}, 409)


async def bad_edit(request: Request, exc: Exception) -> Response:
    """422 with why a state edit does not fit the game's graph: nothing was written."""
    return json_response({"detail": str(exc)}, 422)


def custom_app(
    routes: Sequence[BaseRoute], *, seat_links: bool, studio_origins: tuple[str, ...] = ()
) -> Starlette:
    """A custom app: its routes behind the guard (`studio_origins`: Studio mode's page)."""
    return Starlette(
        routes=list(routes),
        middleware=[Middleware(Guard, studio_origins=studio_origins)],
        lifespan=lifespan(seat_links=seat_links),
        exception_handlers={GameHeld: refused, HistoryInUse: refused, BadStateEdit: bad_edit},
    )
