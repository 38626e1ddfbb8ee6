"""Phase deadlines a facilitator sets for the people at the table.

A deadline belongs to the phase it was set in (the family's moment, such as Diplomacy's
S1901M, else the round): once the game moves on it is no longer shown. It is **advisory**: when
it passes nothing is answered for anyone; the seat page says time is up and that the
facilitator decides (extend it, or wait), and answers are taken as before. It lives in the
game thread's metadata (`wargraph_deadline`), so every server on the same store sees it.

  POST /wargraph/graphs/{thread_id}/deadline   {"minutes": 10} sets it 10 minutes from now;
                                               {"extend": 5} moves it 5 minutes later;
                                               {"minutes": 0} clears it
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from wargraph.server.api import (
    ApiError,
    body_of,
    facilitator_of,
    json_response,
    route,
    thread_id_of,
)
from wargraph.server.games import client, moment_of, read_game, stored_scenario

META_KEY = "wargraph_deadline"
MAX_MINUTES = 24 * 60
WHEN_IT_PASSES = (
    "The deadline is advisory: when it passes nothing is sent for you. The facilitator may "
    "extend it or move the game on; until then your answer is still taken."
)


def phase_key(moment: str, values: dict[str, Any]) -> str:
    """The phase a deadline belongs to: the family's moment, else the round."""
    return moment or f"round {values.get('round', 0)}"


def deadline_of(
    thread: dict[str, Any], key: str, now: float | None = None
) -> dict[str, Any] | None:
    """The deadline of the phase `key` as the pages show it, None when that phase has none."""
    meta = thread.get("metadata") or {}
    saved = meta.get(META_KEY)
    if not isinstance(saved, dict) or saved.get("phase") != key:
        return None
    at = saved.get("at")
    if not isinstance(at, int | float) or isinstance(at, bool):
        return None
    left = at - (time.time() if now is None else now)
    return {
        "phase": key,
        "at": datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds"),
        "seconds_left": max(0, round(left)),
        "passed": left <= 0,
        "when_it_passes": WHEN_IT_PASSES,
    }


def _minutes(body: dict[str, Any], field: str) -> float | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ApiError(400, f"{field}: a number of minutes from 0 to {MAX_MINUTES}")
    if not 0 <= value <= MAX_MINUTES:
        raise ApiError(400, f"{field}: a number of minutes from 0 to {MAX_MINUTES}")
    return float(value)


@route
async def set_deadline(request: Request) -> Response:
    facilitator_of(request)
    thread_id = thread_id_of(request.path_params["thread_id"])
    body = await body_of(request)
    minutes, extend = _minutes(body, "minutes"), _minutes(body, "extend")
    if (minutes is None) == (extend is None):
        raise ApiError(
            400, 'send {"minutes": N} to set the deadline N minutes from now, or {"extend": N}'
        )
    game = await read_game(thread_id)
    values = game["values"]
    if values.get("done"):
        raise ApiError(409, "the game is over: no deadline to set")
    sc = await asyncio.to_thread(stored_scenario, values)
    key = phase_key(await asyncio.to_thread(moment_of, sc, values), values)
    now = time.time()
    if extend is not None:
        current = deadline_of(game["thread"], key, now)
        if current is None:
            raise ApiError(409, f"no deadline is set for {key}: set one first")
        at: float | None = now + current["seconds_left"] + extend * 60
    else:
        at = now + minutes * 60 if minutes else None
    saved = {"phase": key, "at": round(at)} if at is not None else None
    await client().threads.update(thread_id, metadata={META_KEY: saved})
    thread = {"metadata": {META_KEY: saved}}
    return json_response({"thread_id": thread_id, "deadline": deadline_of(thread, key, now)})
