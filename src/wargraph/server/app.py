"""The custom app `langgraph dev` mounts (`http.app` in langgraph.json): the pages, the seat and
facilitator APIs, and the guard in front of every request of the server.

Where each part lives: `pages` (the HTML pages), `seat_api` (a player's view and answers),
`facilitator_api` (scenarios, games, seat links), `guard` (origin, tokens in URLs, JSON bodies),
`api` (what the routes share), `games` (reading a game), `custom_app` (the startup, the guard
and the answer to a game another process holds, shared with Studio mode's app).
"""

from __future__ import annotations

from starlette.routing import Route

from wargraph.server.custom_app import custom_app
from wargraph.server.deadlines import set_deadline
from wargraph.server.facilitator_api import create_game, game_detail, game_record, list_games
from wargraph.server.facilitator_api import scenarios as list_scenarios
from wargraph.server.pages import facilitator_page, favicon, home, play_page, web_file
from wargraph.server.seat_api import seat_answer, seat_view
from wargraph.server.seat_world import seat_world
from wargraph.server.view_api import view_data, view_page

app = custom_app(
    [
        Route("/play", play_page, methods=["GET"]),
        Route("/facilitator", facilitator_page, methods=["GET"]),
        Route("/wargraph", home, methods=["GET"]),
        Route("/web/{name}", web_file, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Route("/wargraph/seat", seat_view, methods=["GET"]),
        Route("/wargraph/seat/answer", seat_answer, methods=["POST"]),
        Route("/wargraph/seat/world", seat_world, methods=["GET"]),
        Route("/wargraph/scenarios", list_scenarios, methods=["GET"]),
        Route("/wargraph/graphs", list_games, methods=["GET"]),
        Route("/wargraph/graphs", create_game, methods=["POST"]),
        Route("/wargraph/graphs/{thread_id}", game_detail, methods=["GET"]),
        Route("/wargraph/graphs/{thread_id}/record", game_record, methods=["GET"]),
        Route("/wargraph/graphs/{thread_id}/deadline", set_deadline, methods=["POST"]),
        Route("/view", view_page, methods=["GET"]),
        Route("/wargraph/graphs/{thread_id}/view-data", view_data, methods=["GET"]),
    ],
    seat_links=True,
)
