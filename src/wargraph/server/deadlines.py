"""Phase deadlines a facilitator sets for the people at the table, and what happens at them.

A deadline belongs to the phase it was set in (the family's moment, such as Diplomacy's
S1901M, else the round): once the game moves on it is no longer shown. **When it passes**, the
server answers every question still open in that phase with the seat's documented fallback, as
soon as it is asked, until the phase ends: Diplomacy orders hold every unit (retreats disband,
builds are waived), a plan is "no new action", messages are none, a diary or digest notes
nothing new; a person's review of a draft accepts the draft. Each answer so given is recorded
with the source `deadline` (in the event's data and the round's sources), so the record says
the seat's fallback answered, not the person. The facilitator may extend or clear the deadline
until it passes.

It lives in the store's table of served games when the server keeps its games in a store
(`serve --db`: every server of the store sees it, and one of them answers, under a lease of
its own per game), else in the game thread's metadata (`wargraph_deadline`).

  POST /wargraph/graphs/{thread_id}/deadline   {"minutes": 10} sets it 10 minutes from now;
                                               {"extend": 5} moves it 5 minutes later;
                                               {"minutes": 0} clears it
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

import wargraph.server.stored as stored
from wargraph.seats.deciders import DEADLINE_ANSWER
from wargraph.server.api import (
    ApiError,
    body_of,
    facilitator_of,
    json_response,
    route,
    thread_id_of,
)
from wargraph.server.client import client
from wargraph.server.games import (
    DEADLINE_KEY,
    lock,
    moment_of,
    read_game,
    run_settings,
    stored_scenario,
)
from wargraph.server.served import deadlines, write_deadline

log = logging.getLogger(__name__)

META_KEY = DEADLINE_KEY
MAX_MINUTES = 24 * 60
WATCH_ENV = "WARGRAPH_DEADLINE_WATCH_S"
WATCH_S = 1.0  # how often the server looks for deadlines that passed
WHEN_IT_PASSES = (
    "When it passes, each question still open for you in this phase is answered with your "
    "seat's fallback (orders: every unit holds; a plan: no new action; messages: none), and "
    "the record marks that answer as the deadline's. Until then the facilitator may extend it."
)


def phase_key(moment: str, values: dict[str, Any]) -> str:
    """The phase a deadline belongs to: the family's moment, else the round."""
    return moment or f"round {values.get('round', 0)}"


def deadline_of(
    saved: dict[str, Any] | None, key: str, now: float | None = None
) -> dict[str, Any] | None:
    """The deadline of the phase `key` as the pages show it (from the saved one: `read_game`'s
    `deadline`), None when that phase has none."""
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


async def _save(thread_id: str, saved: dict[str, Any] | None) -> None:
    db = stored.store()
    if db is not None:
        await asyncio.to_thread(write_deadline, db, thread_id, saved)
    else:
        await client().threads.update(thread_id, metadata={META_KEY: saved})


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
        current = deadline_of(game["deadline"], key, now)
        if current is None:
            raise ApiError(409, f"no deadline is set for {key}: set one first")
        at: float | None = now + current["seconds_left"] + extend * 60
    else:
        at = now + minutes * 60 if minutes else None
    saved = {"phase": key, "at": round(at, 3)} if at is not None else None
    await _save(thread_id, saved)
    return json_response({"thread_id": thread_id, "deadline": deadline_of(saved, key, now)})


# --- at the deadline --------------------------------------------------------------------------


async def watch() -> None:
    """For the server's life (its startup starts it): every `WATCH_S` seconds, the games whose
    deadline passed have their open questions of that phase answered by the fallbacks."""
    every = float(os.environ.get(WATCH_ENV) or WATCH_S)
    busy: dict[str, asyncio.Task[int]] = {}
    while True:
        await asyncio.sleep(every)
        try:
            passed = await _passed()
        except Exception:  # a store that is down now: try again at the next tick
            log.exception("wargraph: reading the deadlines failed")
            continue
        for thread_id, saved in passed.items():
            if thread_id not in busy or busy[thread_id].done():
                busy[thread_id] = asyncio.create_task(_enforce_logged(thread_id, saved))


async def _passed() -> dict[str, dict[str, Any]]:
    db, now = stored.store(), time.time()
    found: dict[str, Any]
    if db is not None:
        found = await asyncio.to_thread(deadlines, db)
    else:
        threads = await client().threads.search(status="interrupted", limit=1000)
        found = {str(t["thread_id"]): (t.get("metadata") or {}).get(META_KEY) for t in threads}
    return {
        t: saved
        for t, saved in found.items()
        if isinstance(saved, dict)
        and isinstance(saved.get("at"), int | float)
        and saved["at"] <= now
    }


async def _enforce_logged(thread_id: str, saved: dict[str, Any]) -> int:
    try:
        return await enforce(thread_id, saved)
    except Exception:  # one game's failure leaves the others' deadlines working
        log.exception("wargraph: the deadline of game %s could not be applied", thread_id)
        return 0


def fallback_answer(question: dict[str, Any], saved: dict[str, Any]) -> dict[str, Any]:
    """The answer the deadline gives an open question: a review accepts its draft; any other
    question gets the marker the person's seat answers with its fallback (`HumanDecider`)."""
    if question.get("task") == "review":
        return {"accept": True, "text": ""}
    return {DEADLINE_ANSWER: {"phase": saved.get("phase"), "at": saved.get("at")}}


async def _drop_spent(thread_id: str, game: dict[str, Any], saved: dict[str, Any]) -> None:
    """A passed deadline whose phase has ended (or whose game is over) is removed, unless the
    facilitator has set another since: the watcher would otherwise read the game again at every
    tick for as long as the server runs."""
    if game.get("deadline") == saved:
        await _save(thread_id, None)


async def enforce(thread_id: str, saved: dict[str, Any]) -> int:
    """Answer the game's open questions of the deadline's phase with their fallbacks (one run)
    and wait for that run; how many were answered. Nothing when the game has moved to another
    phase, is over, or is being played (here, on another server, or by the CLI)."""
    from wargraph.store.errors import GameHeld
    from wargraph.store.lease import lease
    from wargraph.store.saver import in_thread

    db = stored.store()
    async with contextlib.AsyncExitStack() as held:
        if db is not None:  # one server of the store applies a game's deadline at a time
            try:
                await held.enter_async_context(
                    in_thread(lease(db, f"deadline:{thread_id}", command="serve deadline"))
                )
            except GameHeld:
                return 0
        async with lock(thread_id):
            try:
                game = await read_game(thread_id)
            except ApiError:
                return 0
            values = game["values"]
            if values.get("done"):
                await _drop_spent(thread_id, game, saved)
                return 0
            if game.get("held_by") or game["thread"].get("status") == "busy":
                return 0
            if not game["interrupts"]:
                return 0
            sc = await asyncio.to_thread(stored_scenario, values)
            key = phase_key(await asyncio.to_thread(moment_of, sc, values), values)
            if saved.get("phase") != key:
                await _drop_spent(thread_id, game, saved)
                return 0
            resume = {i["id"]: fallback_answer(i["value"], saved) for i in game["interrupts"]}
            assistant, context = await run_settings(thread_id, game["thread"])
            run = await client().runs.create(
                thread_id,
                assistant,
                command={"resume": resume},
                context=context,
                multitask_strategy="reject",
            )
            log.warning(
                "wargraph: the deadline for %s of game %s passed: %d open question(s) answered "
                "with their fallbacks",
                key,
                thread_id,
                len(resume),
            )
        # under the deadline's lease until the run ends: another server reads the game after it
        await client().runs.join(thread_id, run["run_id"])
    return len(resume)
