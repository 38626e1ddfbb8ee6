"""The ASGI middleware in front of every request of the server (pages, wargraph routes and the
LangGraph API alike): same-origin only, no tokens in URLs, a token for the API description, and
JSON bodies that are bounded and well-formed.

In Studio mode (`wargraph studio`) the guard first refuses any request whose `Host` is not a
loopback name with the port served (DNS rebinding: a foreign page re-pointed at 127.0.0.1), then
lets the hosted Studio page's origin through
(with the CORS answers langgraph-api gives it), opens the API description, and refuses any seat
token: that mode serves no seats.

Mounted as the custom app's middleware, which langgraph-api places outside its own (CORS, access
log, auth), so what is refused here never reaches the access log, and a token in a query string
is never written there.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wargraph.server.api import MAX_BODY, ApiError, json_response, parse_json
from wargraph.server.seats import FACILITATOR, TOKEN_WHERE, TokenError, bearer, check_token
from wargraph.server.settings import RUN_PATH, STATE_PATH, missing_checkpoint, settle
from wargraph.server.shared import THREAD_PATH, adopt_named

log = logging.getLogger(__name__)

MAX_API_BODY = 2_000_000  # bytes of one request body anywhere on the server
BODY_METHODS = {"POST", "PUT", "PATCH"}
# The LangGraph server's description of itself: the facilitator's, like the API it describes.
FACILITATOR_PATHS = {"/docs", "/openapi.json", "/info", "/metrics"}
TOKEN_PARAMS = {
    "token",
    "access_token",
    "api_key",
    "apikey",
    "x-api-key",
    "auth",
    "authorization",
    "bearer",
    "secret",
    "password",
}
TOKEN_SHAPE = re.compile(r"(f\.[0-9a-f]{32}|s\.[A-Za-z0-9_-]+\.[0-9a-f]{32})")


def _refuse(status: int, detail: str) -> JSONResponse:
    return json_response({"detail": detail}, status)


def token_in_query(query_string: bytes) -> bool:
    """Whether a query string carries a token (by parameter name, or by a wargraph token's shape)."""
    text = query_string.decode("latin-1")
    for name, value in parse_qsl(text, keep_blank_values=True):
        if name.strip().lower() in TOKEN_PARAMS or TOKEN_SHAPE.search(value):
            return True
    return bool(TOKEN_SHAPE.search(text))


def foreign_origin(scope: Scope, headers: Headers) -> str | None:
    """The request's Origin when it is not this server's own (None when same-origin or absent)."""
    origin = headers.get("origin")
    if origin is None:
        return None
    own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
    return None if origin.lower() == own.lower() else origin


def _meta_refusal(headers: Headers) -> JSONResponse | None:
    what = (
        "the API description (/openapi.json, /docs, /info, /metrics) needs the facilitator's "
        f"token: send Authorization: Bearer <token>: {TOKEN_WHERE}"
    )
    try:
        holder = check_token(bearer(dict(headers)))
    except TokenError as err:
        return _refuse(401, f"{err}; {what}")
    if holder.kind != FACILITATOR:
        return _refuse(403, what)
    return None


def _seat_token_refusal(headers: Headers) -> JSONResponse | None:
    """Studio mode serves no seats: a seat token (valid or not) goes no further."""
    for name in ("authorization", "x-api-key"):
        token = bearer({name: headers.get(name, "")}) or ""
        if token.startswith("s."):
            return _refuse(
                403,
                "a seat token opens only a player's page on the players' server (wargraph "
                "serve); this Studio-mode server serves no seats",
            )
    return None


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def loopback_host(scope: Scope, headers: Headers) -> bool:
    """Whether the request names this server by a loopback name and the port it serves. A page
    of another site whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name in
    `Host` (and a matching `Origin`), so it is same-origin to itself: only the name tells."""
    served = scope.get("server") or (None, None)
    port = served[1] if len(served) > 1 else None
    host = (headers.get("host") or "").strip().lower()
    if port is None or not host:
        return False
    return host in {f"{name}:{port}" for name in LOOPBACK_NAMES}


def refusal(
    scope: Scope, headers: Headers, studio_origins: frozenset[str] = frozenset()
) -> JSONResponse | None:
    """Why a request is refused before anything else sees it (None: it may go on).
    `studio_origins`: the Studio page's origins, served in Studio mode only."""
    if studio_origins and not loopback_host(scope, headers):
        # Before auth: Studio's own authentication lets `x-auth-scheme: langsmith` in.
        return _refuse(
            403,
            "Studio mode answers only requests addressed to it by a loopback name and its port "
            "(Host 127.0.0.1:PORT, localhost:PORT or [::1]:PORT); "
            f"refused Host {(headers.get('host') or '(none)')[:100]!r}",
        )
    if token_in_query(scope.get("query_string", b"")):
        log.warning(
            "refused %s %s: a token in the query string (not logged)",
            scope.get("method"),
            scope.get("path"),
        )
        return _refuse(
            400,
            "send the token in the Authorization header (Bearer …), never in the URL: "
            "URLs end up in logs and browser history",
        )
    origin = foreign_origin(scope, headers)
    if origin is not None and origin.lower() not in studio_origins:
        return _refuse(
            403,
            f"cross-origin requests are refused (from {origin[:100]}); open the pages from "
            "this server, or call the API from a program (no Origin header)",
        )
    if studio_origins:
        return _seat_token_refusal(headers)
    if scope.get("path") in FACILITATOR_PATHS:
        return _meta_refusal(headers)
    return None


def body_limit(path: str) -> int:
    """The wargraph routes take small answers and game requests; the LangGraph API more."""
    return MAX_BODY if path.startswith("/wargraph/") else MAX_API_BODY


async def read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole body (up to one chunk past the limit) and whether the client went away."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", True
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit or not message.get("more_body", False):
            return b"".join(chunks), False


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read here once, then waits on the real one."""
    sent = False

    async def inner() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return inner


def with_length(scope: Scope, length: int) -> Scope:
    """The scope of a request whose body was rewritten here: its Content-Length says so."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
    return {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}


def recording_on_success(send: Send, record: Callable[[], Awaitable[Any]]) -> Send:
    """`send`, running `record` once the answer says the request was taken (2xx)."""

    async def inner(message: Message) -> None:
        if message["type"] == "http.response.start" and 200 <= message.get("status", 0) < 300:
            try:
                await record()
            except Exception:  # the run goes on; the change is only not noted
                log.exception("could not record a game's new settings")
        await send(message)

    return inner


def without_cors(send: Send) -> Send:
    """Same-origin requests need no CORS headers: drop any (and with them the private-network
    grant `langgraph dev` adds to every preflight). Studio's requests keep theirs."""

    async def inner(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {
                **message,
                "headers": [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if not k.lower().startswith(b"access-control-")
                ],
            }
        await send(message)

    return inner


def studio_preflight(scope: Scope) -> Scope:
    """A Studio preflight without its Private Network Access question: Starlette's CORS refuses
    any preflight that asks it (langgraph-api's config cannot allow it), and langgraph dev's own
    middleware grants it on the answer."""
    if scope.get("method") != "OPTIONS":
        return scope
    asked = b"access-control-request-private-network"
    return {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != asked]}


class Guard:
    """The middleware; see the module's docstring. `studio_origins` (Studio mode only): the
    origins of the Studio page, let through with their CORS answers."""

    def __init__(self, app: ASGIApp, studio_origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.studio_origins = frozenset(o.lower() for o in studio_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = refusal(scope, headers, self.studio_origins)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope.get("method") in BODY_METHODS:
            limit = body_limit(scope.get("path", ""))
            body, gone = await read_body(receive, limit)
            if gone:
                return
            if len(body) > limit:
                await _refuse(413, f"request body over {limit} bytes; send less")(
                    scope, receive, send
                )
                return
            if body:
                try:
                    parsed = parse_json(body)
                except ApiError as err:
                    await _refuse(err.status, err.detail)(scope, receive, send)
                    return
                run_on = (
                    RUN_PATH.match(scope.get("path", "")) if scope["method"] == "POST" else None
                )
                if run_on:  # a run plays with its game's settings (wargraph.server.settings)
                    settled, record = await settle(run_on.group(1), parsed)
                    if settled is not None:
                        body = json.dumps(settled).encode()
                        scope = with_length(scope, len(body))
                    if record is not None:
                        send = recording_on_success(send, record)
                edit_of = (
                    STATE_PATH.match(scope.get("path", "")) if scope["method"] == "POST" else None
                )
                if edit_of:  # an edit at a checkpoint the game never had
                    why = await missing_checkpoint(edit_of.group(1), parsed)
                    if why:
                        await _refuse(404, why)(scope, receive, send)
                        return
            receive = replay(body, receive)
        path = scope.get("path", "")
        if THREAD_PATH.match(path) and _meta_refusal(headers) is None:  # the facilitator's API
            try:  # a game another server of the store started: known here before the API looks
                await adopt_named(path)
            except Exception:  # the request goes on; its answer says what is missing
                log.exception("wargraph: looking up a game of the store failed")
        if (headers.get("origin") or "").lower() in self.studio_origins:
            await self.app(studio_preflight(scope), receive, send)
            return
        await self.app(scope, receive, without_cors(send))
