"""The game view (`wargraph view`) served for the server's games, live or finished, behind the
facilitator's token: one game thread holds every seat's secrets, so no seat token opens it.

  GET /view                                   the page (no data in it; it reads #token=…&thread=…)
  GET /wargraph/graphs/{thread_id}/view-data   the page's data (facilitator only)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from wargraph.server.api import facilitator_of, json_response, route, thread_id_of
from wargraph.server.games import read_game, wargraph_meta
from wargraph.server.pages import SECURITY_HEADERS


async def view_page(request: Request) -> Response:
    from wargraph.view.page import content_policy, page

    # the same page as a written file, without its data; its own inline code allowed by hash
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": content_policy()}
    return Response(page("game", "", encoding="served"), media_type="text/html", headers=headers)


def _trace_path(context: dict[str, Any], thread_id: str) -> str | None:
    """The game's trace: its run's own file, else the one the server keeps per game."""
    from wargraph.runs.trace import served_path

    path = context.get("trace_path")
    if not (isinstance(path, str) and path):
        path = served_path(thread_id)
    return path if isinstance(path, str) and Path(path).is_file() else None


def _packed(values: dict[str, Any], thread_id: str, context: dict[str, Any]) -> str:
    from wargraph.runs.records import build_record
    from wargraph.runs.trace import read_trace
    from wargraph.view import build_view
    from wargraph.view.pack import pack

    path = _trace_path(context, thread_id)
    record = build_record(values, thread_id=thread_id, trace_path=path)  # its usage, from it
    trace = read_trace(path) if path else []
    # no replay command: the server's games are in its own state folder, not a --db store
    return pack(build_view(record, trace, replay=False))


@route
async def view_data(request: Request) -> Response:
    facilitator_of(request)
    thread_id = thread_id_of(request.path_params["thread_id"])
    game = await read_game(thread_id)
    context = wargraph_meta(game["thread"]).get("context") or {}
    # maps are drawn here (a second or more for a long Diplomacy game): off the event loop
    data = await asyncio.to_thread(_packed, game["values"], thread_id, context)
    return json_response(
        {"thread_id": thread_id, "done": bool(game["values"].get("done")), "data": data}
    )
