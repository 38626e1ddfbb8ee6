"""The custom app of Studio mode (`http.app` of the config `wargraph studio` writes): no pages and
no seat routes, only the guard in front of the LangGraph API, letting the Studio page's origin in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from wargraph.server.endpoints import enforce
from wargraph.server.guard import Guard
from wargraph.server.steps import use_step_threads

STUDIO_ORIGIN = "https://smith.langchain.com"


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    enforce()  # models only from the operator's allow-list
    use_step_threads()  # sync steps of every run in flight: more than the default six
    yield


app = Starlette(
    routes=[],
    middleware=[Middleware(Guard, studio_origins=(STUDIO_ORIGIN,))],
    lifespan=lifespan,
)
