"""The custom app of Studio mode (`http.app` of the config `wargraph studio` writes): no pages and
no seat routes, only the guard in front of the LangGraph API, letting the Studio page's origin in.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from wargraph.server.endpoints import enforce
from wargraph.server.guard import Guard

STUDIO_ORIGIN = "https://smith.langchain.com"


@asynccontextmanager
async def lifespan(app: Starlette):
    enforce()  # models only from the operator's allow-list
    yield


app = Starlette(
    routes=[],
    middleware=[Middleware(Guard, studio_origins=(STUDIO_ORIGIN,))],
    lifespan=lifespan,
)
