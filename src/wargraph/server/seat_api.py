"""The player's API: one seat's own view of its game and answers to that seat's open questions.

GET  /wargraph/seat          the seat's view and open questions   (its seat token or facilitator)
GET  /wargraph/seat/world    the seat's world: map, board, fronts  (`wargraph.server.seat_world`)
POST /wargraph/seat/answer   answer one open question of the seat (its seat token or facilitator)
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from wargraph.seats.deciders import DEADLINE_ANSWER
from wargraph.server.api import ApiError, body_of, holder_of, json_response, route, seat_target
from wargraph.server.deadlines import deadline_of, phase_key
from wargraph.server.games import (
    client,
    lock,
    moment_of,
    public_event,
    question,
    read_game,
    run_settings,
    status_of,
    stored_scenario,
    wait_idle,
)
from wargraph.server.seat_world import world_of

BUSY_WAIT_S = 20.0  # how long an answer waits for the game's current run to finish
ANSWER_SETTLE_S = 3.0  # how long an answer waits to report the next state (validation errors)
MESSAGES = {
    "your_turn": "Your move: answer the question below.",
    "waiting": "Waiting for the other seats to answer.",
    "running": "The game is moving on (the umpire and the other seats are at work).",
    "starting": "The game is being set up.",
    "over": "The game is over.",
    "error": "The game stopped with an error; tell the facilitator.",
    "held": "The game is being played elsewhere (the command line or another server of its "
    "store) by {holder}; it comes back here "
    "when that ends (answers wait until then).",
}


async def seat_payload(thread_id: str, seat: str) -> dict[str, Any]:
    from wargraph.kernel.views import visible_events

    game = await read_game(thread_id)
    values = game["values"]
    sc = await asyncio.to_thread(stored_scenario, values)
    moment = await asyncio.to_thread(moment_of, sc, values)
    if sc is not None and seat not in sc.roles:
        raise ApiError(404, f"this game has no seat {seat!r} (seats: {', '.join(sc.roles)})")
    groups = sc.groups_of(seat) if sc is not None else {seat}
    events = visible_events(values.get("events") or [], groups)
    mine = [
        {**question(i["value"]), "key": i["id"]}
        for i in game["interrupts"]
        if i["value"].get("seat") == seat
    ]
    others = [i for i in game["interrupts"] if i["value"].get("seat") != seat]
    status = status_of(game)
    if status == "waiting":
        status = "your_turn" if mine else "waiting"
    world = await asyncio.to_thread(world_of, thread_id, seat, sc, values)
    return {
        "thread_id": thread_id,
        "seat": seat,
        "title": sc.title if sc is not None else "",
        "round": values.get("round", 0),
        "rounds": sc.rounds if sc is not None else None,
        "phase": values.get("phase", ""),
        "moment": moment,
        "status": status,
        "message": MESSAGES[status].format(holder=game.get("held_by") or ""),
        "held_by": game.get("held_by") or "",
        "waiting_for_others": bool(others) or status == "running",
        "events": [public_event(e) for e in events],
        "questions": mine,
        # the key of the seat's world panels (GET /wargraph/seat/world), None without any
        "world": world[0] if world is not None else None,
        # the facilitator's deadline for this phase, None without one
        "deadline": None
        if status == "over"
        else deadline_of(game["deadline"], phase_key(moment, values)),
    }


@route
async def seat_view(request: Request) -> Response:
    holder = holder_of(request)
    thread_id, seat = seat_target(request, holder)
    return json_response(await seat_payload(thread_id, seat))


@route
async def seat_answer(request: Request) -> Response:
    holder = holder_of(request)
    body = await body_of(request)
    thread_id, seat = seat_target(request, holder, body)
    ask_id = body.get("ask_id")
    answer = body.get("answer")
    if not isinstance(ask_id, str) or not ask_id or len(ask_id) > 300:
        raise ApiError(400, "ask_id: the id of the question you answer (a string)")
    if not isinstance(answer, dict | str):
        raise ApiError(400, "answer: a JSON object with the question's fields, or plain text")
    if isinstance(answer, dict) and DEADLINE_ANSWER in answer:
        raise ApiError(400, f"answer: {DEADLINE_ANSWER} is the server's, sent at a deadline")
    async with lock(thread_id):
        if not await wait_idle(thread_id, BUSY_WAIT_S):
            raise ApiError(503, "the game is busy; try again in a moment")
        game = await read_game(thread_id)
        match = [i for i in game["interrupts"] if i["value"].get("ask_id") == ask_id]
        if match and all(i["value"].get("seat") != seat for i in match):
            raise ApiError(403, "that question belongs to another seat")
        mine = [i for i in match if i["value"].get("seat") == seat]
        if not mine:
            raise ApiError(
                409, "that question is no longer open (answered already?); reload the page"
            )
        if game.get("held_by"):  # a run now would be refused and leave the game in error
            raise ApiError(
                409,
                f"the game is being played elsewhere by {game['held_by']}; your "
                "answer was not sent: send it again when that ends",
            )
        assistant, context = await run_settings(thread_id, game["thread"])
        await client().runs.create(
            thread_id,
            assistant,
            command={"resume": {mine[0]["id"]: answer}},
            context=context,
            multitask_strategy="reject",
        )
    await wait_idle(thread_id, ANSWER_SETTLE_S)  # so a rejected answer comes back at once
    return json_response(await seat_payload(thread_id, seat))
