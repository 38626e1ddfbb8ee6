"""What every wargraph route shares: JSON answers and errors, bounded JSON bodies, token checks."""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from wargraph.server.seats import FACILITATOR, Holder, TokenError, bearer, check_token

log = logging.getLogger(__name__)

MAX_BODY = 64_000  # bytes of one answer or game request
MAX_DEPTH = 32  # nesting of a JSON body; a scenario needs about six levels
# Whole numbers the LangGraph server can store (it encodes JSON with 64-bit integers).
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
NO_GAME = "no such game: check the link, or start the game again from /facilitator"


class ApiError(Exception):
    """A refused request: the status and a message that says what to do instead."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def json_response(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})


def _sdk_error(exc: Exception) -> Response | None:
    """The LangGraph server's own refusals, said in the players' and facilitator's terms."""
    from langgraph_sdk.errors import APIStatusError

    if not isinstance(exc, APIStatusError):
        return None
    if exc.status_code == 404:
        return json_response({"detail": NO_GAME}, 404)
    if exc.status_code == 409:
        return json_response({"detail": "the game is busy; try again in a moment"}, 409)
    body = exc.body if isinstance(exc.body, dict) else {}
    said = body.get("detail") if isinstance(body.get("detail"), str) else ""
    if exc.status_code == 422 and said:
        return json_response({"detail": said}, 422)  # e.g. a scenario its graph cannot build
    return json_response(
        {
            "detail": f"the game server refused the request ({exc.status_code}"
            + (f": {said[:300]}" if said else "")
            + "); the terminal running wargraph serve shows more"
        },
        502,
    )


Handler = Callable[[Request], Awaitable[Response]]


def route(fn: Handler) -> Handler:
    """Every route answers JSON errors with a clear message, never a traceback."""

    async def wrapped(request: Request) -> Response:
        try:
            return await fn(request)
        except ApiError as err:
            return json_response({"detail": err.detail}, err.status)
        except TokenError as err:
            return json_response({"detail": str(err)}, 401)
        except Exception as exc:  # logged here with its traceback, summarised to the caller
            known = _sdk_error(exc)
            if known is not None:
                return known
            log.exception("wargraph route %s failed", request.url.path)
            return json_response(
                {
                    "detail": f"the server failed on this request ({type(exc).__name__}); "
                    "the server log has the details; try again or restart the game"
                },
                500,
            )

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


def holder_of(request: Request) -> Holder:
    return check_token(bearer(dict(request.headers)))


def facilitator_of(request: Request) -> Holder:
    holder = holder_of(request)
    if holder.kind != FACILITATOR:
        raise ApiError(
            403, "facilitator only: a seat token opens only its own seat (use the /play link)"
        )
    return holder


def nesting(value: Any) -> int:
    """How deeply lists and objects nest in parsed JSON (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return deepest


def too_deep() -> ApiError:
    return ApiError(
        400, f"the request body nests more than {MAX_DEPTH} levels deep; send a flatter JSON object"
    )


class _OutOfRange(ValueError):
    """A number no part of the server can store (its JSON is encoded with 64-bit integers)."""


def _whole_number(text: str) -> int:
    # Checked on the digits first: converting a 100,000-digit string is itself refused (and slow).
    if len(text.lstrip("-")) > 19 or not MIN_INT <= int(text) <= MAX_INT:
        raise _OutOfRange(
            f"the number {text[:24]}{'…' if len(text) > 24 else ''} is out of range: whole "
            f"numbers must lie between {MIN_INT} and {MAX_INT}"
        )
    return int(text)


def _decimal(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _OutOfRange(f"the number {text[:24]} is too large for a 64-bit float")
    return value


def _constant(name: str) -> float:
    raise _OutOfRange(f"{name} is not JSON: send a finite number")


def parse_json(raw: bytes) -> Any:
    """Parsed JSON of a request body, or ApiError(400) saying what is wrong with it."""
    try:
        data = json.loads(
            raw, parse_int=_whole_number, parse_float=_decimal, parse_constant=_constant
        )
    except _OutOfRange as err:
        raise ApiError(400, str(err)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        where = (
            f" (line {err.lineno}, column {err.colno})"
            if isinstance(err, json.JSONDecodeError)
            else ""
        )
        raise ApiError(400, f"the request body is not valid JSON{where}") from None
    except RecursionError:
        raise too_deep() from None
    if nesting(data) > MAX_DEPTH:
        raise too_deep()
    return data


def parse_json_object(raw: bytes) -> dict[str, Any]:
    data = parse_json(raw or b"{}")
    if not isinstance(data, dict):
        raise ApiError(400, 'the request body must be a JSON object, e.g. {"ask_id": ...}')
    return data


async def body_of(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"request too large (more than {MAX_BODY} bytes); send less text")
    return parse_json_object(raw)


def thread_id_of(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError):
        raise ApiError(404, NO_GAME) from None


def seat_target(
    request: Request, holder: Holder, body: dict[str, Any] | None = None
) -> tuple[str, str]:
    """The (thread, seat) a request may act on: a seat token's own, never another."""
    body = body or {}
    asked_thread = request.query_params.get("thread_id") or body.get("thread_id")
    asked_seat = request.query_params.get("seat") or body.get("seat")
    if holder.kind == FACILITATOR:
        if not asked_thread or not asked_seat:
            raise ApiError(400, "the facilitator names the game and seat: thread_id and seat")
        return thread_id_of(asked_thread), str(asked_seat)
    if (asked_thread and str(asked_thread) != holder.thread_id) or (
        asked_seat and str(asked_seat) != holder.seat
    ):
        raise ApiError(403, "this token opens only its own seat; open the link of that seat")
    return thread_id_of(holder.thread_id), holder.seat
