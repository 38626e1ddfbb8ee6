"""The custom app `langgraph dev` mounts (`http.app` in langgraph.json): the pages, the seat and
facilitator APIs, and the guard in front of every request of the server.

Where each part lives: `pages` (the HTML pages), `seat_api` (a player's view and answers),
`facilitator_api` (scenarios, games, seat links), `guard` (origin, tokens in URLs, JSON bodies),
`api` (what the routes share), `games` (reading a game).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from wargraph.server.endpoints import enforce
from wargraph.server.facilitator_api import create_game, game_detail, game_record, list_games
from wargraph.server.facilitator_api import scenarios as list_scenarios
from wargraph.server.guard import Guard
from wargraph.server.pages import facilitator_page, home, play_page, web_file
from wargraph.server.seat_api import seat_answer, seat_view
from wargraph.server.seats import SECRET_ENV, facilitator_token
from wargraph.server.steps import use_step_threads
from wargraph.server.view_api import view_data, view_page

log = logging.getLogger(__name__)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    enforce()  # models only from the operator's allow-list
    use_step_threads()  # sync steps of every run in flight: more than the default six
    if not os.environ.get(SECRET_ENV):
        # A bare `langgraph dev` (not `wargraph serve`): the key is new each start; say so.
        log.warning(
            "wargraph: %s is not set; seat links last until this server stops. "
            "Facilitator page: /facilitator#token=%s",
            SECRET_ENV,
            facilitator_token(),
        )
    yield


app = Starlette(
    routes=[
        Route("/play", play_page, methods=["GET"]),
        Route("/facilitator", facilitator_page, methods=["GET"]),
        Route("/wargraph", home, methods=["GET"]),
        Route("/web/{name}", web_file, methods=["GET"]),
        Route("/wargraph/seat", seat_view, methods=["GET"]),
        Route("/wargraph/seat/answer", seat_answer, methods=["POST"]),
        Route("/wargraph/scenarios", list_scenarios, methods=["GET"]),
        Route("/wargraph/games", list_games, methods=["GET"]),
        Route("/wargraph/games", create_game, methods=["POST"]),
        Route("/wargraph/games/{thread_id}", game_detail, methods=["GET"]),
        Route("/wargraph/games/{thread_id}/record", game_record, methods=["GET"]),
        Route("/view", view_page, methods=["GET"]),
        Route("/wargraph/games/{thread_id}/view-data", view_data, methods=["GET"]),
    ],
    middleware=[Middleware(Guard)],
    lifespan=lifespan,
)
