"""Custom routes mounted in the LangGraph server (`http.app` in langgraph.json).

Pages:  GET /play (a player's seat), GET /facilitator (games, seats, transcript); the token travels
in the link's #fragment (never sent to the server in the URL) and then as a Bearer header.

API for the pages (every call checks the token; the LangGraph API itself is facilitator-only):
  GET  /wargraph/seat                the seat's own view and open questions   (seat or facilitator)
  POST /wargraph/seat/answer         answer one open question of that seat    (seat or facilitator)
  GET  /wargraph/scenarios           shipped scenarios and their seats        (facilitator)
  GET  /wargraph/games               games on this server                     (facilitator)
  POST /wargraph/games               start a game, get the seat links         (facilitator)
  GET  /wargraph/games/{thread_id}   seats, who is to answer, the transcript  (facilitator)
  GET  /wargraph/games/{thread_id}/record   record.json of the game           (facilitator)

The routes talk to the server in-process (`get_client(url=None)`), which bypasses the auth: the
seat checks here are what keeps one player out of another's seat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.resources
import json
import logging
import time
import uuid
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from wargraph.context import GameContext
from wargraph.server.seats import FACILITATOR, SECRET_ENV, Holder, TokenError, bearer, check_token
from wargraph.server.seats import facilitator_token as make_facilitator_token
from wargraph.server.seats import seat_token as make_seat_token

log = logging.getLogger(__name__)

MAX_BODY = 64_000  # bytes of one answer or game request
BUSY_WAIT_S = 20.0  # how long an answer waits for the game's current run to finish
ANSWER_SETTLE_S = 3.0  # how long an answer waits to report the next state (validation errors)
_NS = uuid.UUID("5b0c3e7e-8f5c-4c55-9f4e-6f0e8c2f4a11")
_CONTEXT_FIELDS = {f.name for f in dataclasses.fields(GameContext)}
# What a run's context may set from the facilitator page; the rest keeps its default.
_PAGE_CONTEXT = ("model", "role_models", "seed", "humans", "temperature", "max_tokens")
_SETTING_TYPES = (
    ("model", str, "a model reference such as embedded or openai:gpt-4o-mini"),
    ("role_models", dict, "a mapping of seat to model reference"),
    ("seed", int, "a whole number"),
    ("temperature", (int, float), "a number"),
    ("max_tokens", int, "a whole number"),
)


class ApiError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


# --- plumbing ------------------------------------------------------------------------------------

_client = None
_locks: dict[str, asyncio.Lock] = {}


def client():
    """The in-process LangGraph client (created on first use, inside the server's loop)."""
    global _client
    if _client is None:
        from langgraph_sdk import get_client

        _client = get_client(url=None, api_key=None)
    return _client


def _lock(thread_id: str) -> asyncio.Lock:
    return _locks.setdefault(thread_id, asyncio.Lock())


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})


def _route(fn):
    """Every route answers JSON errors with a clear message, never a traceback."""

    async def wrapped(request: Request) -> Response:
        try:
            return await fn(request)
        except ApiError as err:
            return _json({"detail": err.detail}, err.status)
        except TokenError as err:
            return _json({"detail": str(err)}, 401)
        except Exception as exc:  # SDK and unexpected errors: logged here, summarised there
            from langgraph_sdk.errors import APIStatusError

            if isinstance(exc, APIStatusError):
                status = exc.status_code if exc.status_code in (404, 409, 422) else 502
                detail = {404: "no such game", 409: "the game is busy; try again"}.get(
                    status, f"the game server refused the request ({exc.status_code})"
                )
                return _json({"detail": detail}, status)
            log.exception("wargraph route %s failed", request.url.path)
            return _json({"detail": f"internal error ({type(exc).__name__})"}, 500)

    wrapped.__name__ = fn.__name__
    return wrapped


def holder_of(request: Request) -> Holder:
    return check_token(bearer(dict(request.headers)))


def facilitator_of(request: Request) -> Holder:
    holder = holder_of(request)
    if holder.kind != FACILITATOR:
        raise ApiError(403, "facilitator only: a seat token opens only its own seat")
    return holder


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"request too large (more than {MAX_BODY} bytes)")
    try:
        data = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(400, "the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return data


def _thread_id(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError):
        raise ApiError(404, "no such game") from None


# --- reading a game ------------------------------------------------------------------------------


async def _game(thread_id: str) -> dict[str, Any]:
    """Thread, state and interrupts of a game; 404 when the thread is not a game."""
    from langgraph_sdk.errors import NotFoundError

    c = client()
    try:
        thread = await c.threads.get(thread_id)
        state = await c.threads.get_state(thread_id)
    except NotFoundError:
        raise ApiError(404, "no such game") from None
    values = state.get("values") or {}
    if not isinstance(values, dict):
        values = {}
    return {
        "thread": thread,
        "values": values,
        "interrupts": [
            {"id": i.get("id"), "value": i.get("value")}
            for i in state.get("interrupts") or []
            if isinstance(i.get("value"), dict)
        ],
    }


def _scenario(values: dict[str, Any]):
    from wargraph.scenario import ScenarioError, validate_data

    spec = values.get("spec")
    if not spec:
        return None
    try:
        return validate_data(spec, "<game state>")
    except ScenarioError:
        return None


def _status(game: dict[str, Any]) -> str:
    values, thread = game["values"], game["thread"]
    if values.get("error") or thread.get("status") == "error":
        return "error"
    if thread.get("status") == "busy":
        return "running"
    if game["interrupts"]:
        return "waiting"
    if values.get("done"):
        return "over"
    return "starting" if not values.get("spec") else "running"


def _public_event(e: dict[str, Any]) -> dict[str, Any]:
    return {k: e.get(k) for k in ("id", "round", "phase", "kind", "author", "audience", "text")}


def _question(value: dict[str, Any]) -> dict[str, Any]:
    """What a person needs to answer an interrupt (its view is shown from the events instead)."""
    keys = (
        "seat",
        "ask_id",
        "round",
        "phase",
        "task",
        "instructions",
        "question",
        "schema",
        "error",
        "draft",
        "memory",
    )
    return {k: value[k] for k in keys if k in value}


def _people(sc, named: list[str]) -> list[str]:
    """Seats a person answers at: human seats, and seats whose drafts a person reviews."""
    return [r for r, role in sc.roles.items() if role.kind == "human" or r in named or role.review]


async def _run_settings(thread_id: str, thread: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The assistant and context the game was started with, to continue it the same way."""
    meta = thread.get("metadata") or {}
    wg = meta.get("wargraph") if isinstance(meta.get("wargraph"), dict) else {}
    assistant = wg.get("assistant_id") or meta.get("assistant_id") or meta.get("graph_id")
    context = wg.get("context")
    if context is None:
        runs = await client().runs.list(thread_id, limit=20)
        runs.sort(key=lambda r: str(r.get("created_at")))
        context = (((runs[0] if runs else {}).get("kwargs") or {}).get("context")) or {}
    if not assistant:
        raise ApiError(409, "this thread was never run as a game")
    return str(assistant), {k: v for k, v in context.items() if k in _CONTEXT_FIELDS}


async def _wait_idle(thread_id: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        thread = await client().threads.get(thread_id)
        if thread.get("status") != "busy":
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)


# --- seats: one player's view and answers ---------------------------------------------------------


def _seat_target(request: Request, holder: Holder, body: dict[str, Any] | None = None):
    """The (thread, seat) a request may act on: a seat token's own, never another."""
    body = body or {}
    asked_thread = request.query_params.get("thread_id") or body.get("thread_id")
    asked_seat = request.query_params.get("seat") or body.get("seat")
    if holder.kind == FACILITATOR:
        if not asked_thread or not asked_seat:
            raise ApiError(400, "the facilitator names the game and seat: thread_id and seat")
        return _thread_id(asked_thread), str(asked_seat)
    if (asked_thread and str(asked_thread) != holder.thread_id) or (
        asked_seat and str(asked_seat) != holder.seat
    ):
        raise ApiError(403, "this token opens only its own seat")
    return _thread_id(holder.thread_id), holder.seat


async def _seat_payload(thread_id: str, seat: str) -> dict[str, Any]:
    from wargraph.views import visible_events

    game = await _game(thread_id)
    values = game["values"]
    sc = await asyncio.to_thread(_scenario, values)
    if sc is not None and seat not in sc.roles:
        raise ApiError(404, f"this game has no seat {seat!r}")
    groups = sc.groups_of(seat) if sc is not None else {seat}
    events = visible_events(values.get("events") or [], groups)
    mine = [
        {**_question(i["value"]), "key": i["id"]}
        for i in game["interrupts"]
        if i["value"].get("seat") == seat
    ]
    others = [i for i in game["interrupts"] if i["value"].get("seat") != seat]
    status = _status(game)
    if status == "waiting":
        status = "your_turn" if mine else "waiting"
    messages = {
        "your_turn": "Your move: answer the question below.",
        "waiting": "Waiting for the other seats to answer.",
        "running": "The game is moving on (the umpire and the other seats are at work).",
        "starting": "The game is being set up.",
        "over": "The game is over.",
        "error": "The game stopped with an error; tell the facilitator.",
    }
    return {
        "thread_id": thread_id,
        "seat": seat,
        "title": sc.title if sc is not None else "",
        "round": values.get("round", 0),
        "rounds": sc.rounds if sc is not None else None,
        "phase": values.get("phase", ""),
        "status": status,
        "message": messages[status],
        "waiting_for_others": bool(others) or status == "running",
        "events": [_public_event(e) for e in events],
        "questions": mine,
    }


@_route
async def seat_view(request: Request) -> Response:
    holder = holder_of(request)
    thread_id, seat = _seat_target(request, holder)
    return _json(await _seat_payload(thread_id, seat))


@_route
async def seat_answer(request: Request) -> Response:
    holder = holder_of(request)
    body = await _body(request)
    thread_id, seat = _seat_target(request, holder, body)
    ask_id = body.get("ask_id")
    answer = body.get("answer")
    if not isinstance(ask_id, str) or not ask_id or len(ask_id) > 300:
        raise ApiError(400, "ask_id: the id of the question you answer (a string)")
    if not isinstance(answer, dict | str):
        raise ApiError(400, "answer: a JSON object with the question's fields, or plain text")
    async with _lock(thread_id):
        # One resume at a time per game: a run in flight changes which interrupts are open.
        if not await _wait_idle(thread_id, BUSY_WAIT_S):
            raise ApiError(503, "the game is busy; try again in a moment")
        game = await _game(thread_id)
        match = [i for i in game["interrupts"] if i["value"].get("ask_id") == ask_id]
        if match and all(i["value"].get("seat") != seat for i in match):
            raise ApiError(403, "that question belongs to another seat")
        mine = [i for i in match if i["value"].get("seat") == seat]
        if not mine:
            raise ApiError(409, "that question is no longer open (answered already?)")
        assistant, context = await _run_settings(thread_id, game["thread"])
        await client().runs.create(
            thread_id,
            assistant,
            command={"resume": {mine[0]["id"]: answer}},
            context=context,
            multitask_strategy="reject",
        )
    await _wait_idle(thread_id, ANSWER_SETTLE_S)  # so a rejected answer comes back at once
    return _json(await _seat_payload(thread_id, seat))


# --- facilitator ----------------------------------------------------------------------------------


def _shipped() -> list[dict[str, Any]]:
    """Shipped scenarios with their seats (sync: reads files; run in a worker thread)."""
    from wargraph.scenario import ScenarioError, load_scenario, shipped_scenarios
    from wargraph.server.graphs import available

    served = {f for f, err in available().items() if err is None}
    out = []
    for name in sorted(shipped_scenarios()):
        try:
            sc = load_scenario(name)
        except ScenarioError as err:
            out.append({"name": name, "error": str(err)})
            continue
        out.append(
            {
                "name": name,
                "title": sc.title,
                "family": sc.family,
                "served": sc.family in served,
                "rounds": sc.rounds,
                "seats": [
                    {"seat": r, "kind": role.kind, "review": role.review}
                    for r, role in sc.roles.items()
                ],
                "control": sc.control.name,
            }
        )
    return out


@_route
async def scenarios(request: Request) -> Response:
    facilitator_of(request)
    return _json({"scenarios": await asyncio.to_thread(_shipped)})


def _prepare_game(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a game request (sync: loads the scenario)."""
    from wargraph.models import ModelRefError, parse_model_ref
    from wargraph.scenario import ScenarioError, load_scenario
    from wargraph.server.graphs import available

    scenario = body.get("scenario")
    if not isinstance(scenario, str | dict) or not scenario:
        raise ApiError(400, "scenario: a shipped scenario name or an inline scenario mapping")
    if isinstance(scenario, str) and ("/" in scenario or scenario.endswith((".yaml", ".yml"))):
        raise ApiError(400, "scenario: name a shipped scenario or send it inline (no file paths)")
    overrides = body.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ApiError(400, "overrides: a mapping of dotted keys, e.g. {'rounds': 3}")
    overrides = dict(overrides)
    rounds = body.get("rounds")
    if rounds not in (None, ""):
        if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 200:
            raise ApiError(400, "rounds: a whole number from 1 to 200")
        overrides["rounds"] = rounds
    if body.get("review"):
        overrides["control.review"] = True
    try:
        sc = load_scenario(scenario, overrides or None)
    except ScenarioError as err:
        raise ApiError(400, str(err)) from None
    errors = available()
    if sc.family not in errors:
        raise ApiError(400, f"no graph serves the {sc.family!r} family")
    if errors[sc.family]:
        raise ApiError(400, errors[sc.family])
    humans = body.get("humans") or []
    if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
        raise ApiError(400, "humans: a list of seat names")
    unknown = sorted(set(humans) - set(sc.roles))
    if unknown:
        raise ApiError(400, f"humans: no seat {unknown} in this scenario (seats: {list(sc.roles)})")
    context: dict[str, Any] = {"humans": list(dict.fromkeys(humans))}
    for key in _PAGE_CONTEXT:
        if key in body and key != "humans" and body[key] not in (None, ""):
            context[key] = body[key]
    for key, kinds, what in _SETTING_TYPES:
        value = context.get(key)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise ApiError(400, f"{key}: expected {what}")
    if not 0 <= float(context.get("temperature", 0.7)) <= 2:
        raise ApiError(400, "temperature: from 0 to 2")
    if not 1 <= int(context.get("max_tokens", 200)) <= 8192:
        raise ApiError(400, "max_tokens: from 1 to 8192")
    bad_roles = sorted(set(context.get("role_models") or {}) - set(sc.roles))
    if bad_roles:
        raise ApiError(400, f"role_models: no seat {bad_roles} in this scenario")
    try:
        ctx = GameContext(**context)
        parse_model_ref(ctx.model)
        for ref in ctx.role_models.values():
            if not isinstance(ref, str):
                raise ValueError("role_models: each value is a model reference string")
            parse_model_ref(ref)
    except (ValueError, ModelRefError) as err:
        raise ApiError(400, str(err)) from None
    return {
        "scenario": scenario,
        "overrides": overrides,
        "family": sc.family,
        "title": sc.title,
        "seats": list(sc.roles),
        "humans": _people(sc, humans),
        "context": context,
    }


def _links(request: Request, thread_id: str, humans: list[str]) -> dict[str, str]:
    base = str(request.base_url).rstrip("/")
    return {h: f"{base}/play#token={make_seat_token(thread_id, h)}" for h in humans}


@_route
async def create_game(request: Request) -> Response:
    facilitator_of(request)
    game = await asyncio.to_thread(_prepare_game, await _body(request))
    c = client()
    selection = {"scenario": game["scenario"], "overrides": game["overrides"]}
    key = json.dumps([game["family"], selection], sort_keys=True)
    assistant_id = str(uuid.uuid5(_NS, key))
    # One assistant per (family, scenario, overrides): the graph factory builds its seats, and
    # thread reads find the same graph through the assistant's config.
    await c.assistants.create(
        game["family"],
        config={"configurable": selection},
        assistant_id=assistant_id,
        if_exists="do_nothing",
        name=f"{game['family']}: {game['title']}"[:120],
    )
    meta = {
        "wargraph": {
            "title": game["title"],
            "family": game["family"],
            "scenario": game["scenario"] if isinstance(game["scenario"], str) else "(inline)",
            "assistant_id": assistant_id,
            "context": game["context"],
        }
    }
    thread = await c.threads.create(metadata=meta)
    thread_id = thread["thread_id"]
    await c.runs.create(
        thread_id,
        assistant_id,
        input=selection,
        context=game["context"],
        multitask_strategy="reject",
    )
    return _json(
        {
            "thread_id": thread_id,
            "title": game["title"],
            "family": game["family"],
            "seats": game["seats"],
            "humans": game["humans"],
            "links": _links(request, thread_id, game["humans"]),
        },
        201,
    )


@_route
async def list_games(request: Request) -> Response:
    facilitator_of(request)
    threads = await client().threads.search(limit=100, sort_by="created_at", sort_order="desc")
    games = []
    for t in threads:
        meta = t.get("metadata") or {}
        wg = meta.get("wargraph") if isinstance(meta.get("wargraph"), dict) else {}
        values = t.get("values") if isinstance(t.get("values"), dict) else {}
        spec = values.get("spec") or {}
        games.append(
            {
                "thread_id": t["thread_id"],
                "title": wg.get("title") or spec.get("title") or "(not started)",
                "family": wg.get("family") or meta.get("graph_id", ""),
                "status": t.get("status"),
                "round": values.get("round", 0),
                "done": bool(values.get("done")),
                "created_at": str(t.get("created_at", "")),
            }
        )
    return _json({"games": games})


@_route
async def game_detail(request: Request) -> Response:
    facilitator_of(request)
    thread_id = _thread_id(request.path_params["thread_id"])
    game = await _game(thread_id)
    values = game["values"]
    sc = await asyncio.to_thread(_scenario, values)
    meta = game["thread"].get("metadata") or {}
    wg = meta.get("wargraph") if isinstance(meta.get("wargraph"), dict) else {}
    context = wg.get("context")
    if context is None:
        try:
            _, context = await _run_settings(thread_id, game["thread"])
        except ApiError:
            context = {}
    named = list(context.get("humans") or [])
    humans = named if sc is None else _people(sc, named)
    links = _links(request, thread_id, humans)
    waiting: dict[str, dict[str, Any]] = {}
    for i in game["interrupts"]:
        waiting.setdefault(i["value"].get("seat", "?"), _question(i["value"]))
    seats = []
    for seat in list(sc.roles) if sc is not None else sorted(set(humans) | set(waiting)):
        q = waiting.get(seat)
        seats.append(
            {
                "seat": seat,
                "human": seat in named or (sc is not None and sc.roles[seat].kind == "human"),
                "review": bool(sc is not None and sc.roles[seat].review),
                "waiting": q is not None,
                "task": q.get("task") if q else None,
                "ask_id": q.get("ask_id") if q else None,
                "link": links.get(seat),
            }
        )
    return _json(
        {
            "thread_id": thread_id,
            "title": sc.title if sc is not None else wg.get("title", ""),
            "family": sc.family if sc is not None else wg.get("family", ""),
            "status": _status(game),
            "round": values.get("round", 0),
            "rounds": sc.rounds if sc is not None else None,
            "phase": values.get("phase", ""),
            "done": bool(values.get("done")),
            "error": values.get("error", ""),
            "seats": seats,
            "waiting_for": [s["seat"] for s in seats if s["waiting"]],
            "events": [_public_event(e) for e in values.get("events") or []],
        }
    )


@_route
async def game_record(request: Request) -> Response:
    from wargraph.records import build_record

    facilitator_of(request)
    thread_id = _thread_id(request.path_params["thread_id"])
    game = await _game(thread_id)
    record = build_record(game["values"], thread_id=thread_id)
    return _json(record)


# --- pages ----------------------------------------------------------------------------------------

_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
_SECURITY_HEADERS = {
    # Scripts and styles only from these files; no inline code, no framing, no referrer.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def _load_web() -> dict[str, bytes]:
    """The pages, read once at import (the server imports this module before its loop runs)."""
    files: dict[str, bytes] = {}
    root = importlib.resources.files("wargraph") / "web"
    try:
        for entry in root.iterdir():
            if any(entry.name.endswith(ext) for ext in _STATIC_TYPES):
                files[entry.name] = entry.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        log.warning("wargraph: no web pages found in the package")
    return files


WEB = _load_web()


def _page(name: str) -> Response:
    body = WEB.get(name)
    if body is None:
        return Response("not found", status_code=404, media_type="text/plain")
    ext = name[name.rfind(".") :]
    return Response(body, media_type=_STATIC_TYPES[ext], headers=_SECURITY_HEADERS)


async def play_page(request: Request) -> Response:
    return _page("play.html")


async def facilitator_page(request: Request) -> Response:
    return _page("facilitator.html")


async def web_file(request: Request) -> Response:
    name = request.path_params["name"]
    if "/" in name or name.endswith(".html"):
        return Response("not found", status_code=404, media_type="text/plain")
    return _page(name)


async def home(request: Request) -> Response:
    return RedirectResponse("/facilitator", status_code=302)


@asynccontextmanager
async def lifespan(app: Starlette):
    import os

    if not os.environ.get(SECRET_ENV):
        # A bare `langgraph dev` (not `wargraph serve`): the key is new each start; say so.
        log.warning(
            "wargraph: %s is not set; seat links last until this server stops. "
            "Facilitator page: /facilitator#token=%s",
            SECRET_ENV,
            make_facilitator_token(),
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
        Route("/wargraph/scenarios", scenarios, methods=["GET"]),
        Route("/wargraph/games", list_games, methods=["GET"]),
        Route("/wargraph/games", create_game, methods=["POST"]),
        Route("/wargraph/games/{thread_id}", game_detail, methods=["GET"]),
        Route("/wargraph/games/{thread_id}/record", game_record, methods=["GET"]),
    ],
    lifespan=lifespan,
)
