"""Preflight: every distinct model of a game is asked once before the game exists (issue 29,
item 5), so a dead endpoint, a refused key, a model the server does not serve or a GGUF file
that is not there is one line naming the seats and the URL, and no game is created.

What is asked, per kind of model: an OpenAI-compatible server, `GET <base_url>/models` (with the
key `OPENAI_API_KEY` when set): no connection or no answer within the timeout is "unreachable",
401/403 "unauthorised", a list of models without the one asked "unknown model"; a server that
does not list its models (404, 405, 501) passes, since it answers chat requests all the same.
OpenAI's own API without `OPENAI_API_KEY` is "unauthorised" before any request. A GGUF path
must be a file that starts with the GGUF magic bytes; the embedded model's file must be there.
Scripted seats and bots need nothing.

The key never leaves the origin it was configured for: a redirect to another scheme, host or
port is not followed (it is named, so `base_url` can be set to where the server really is), and
the whole exchange — connection, headers and body — has one deadline, so an endpoint that
trickles its answer a byte at a time cannot hold the game.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario
from wargraph.models.chat import (
    ModelRef,
    embedded_model_path,
    endpoint_of,
    parse_model_ref,
    provider_problem,
)

OPENAI_API = "https://api.openai.com/v1"
PREFLIGHT_TIMEOUT_S = 5.0
LISTLESS = {404, 405, 501}  # servers that answer chat but do not list their models


class PreflightError(RuntimeError):
    """A model of the game cannot answer: one line naming the seats, the model and its URL."""


def seat_models(scenario: Scenario, ctx: GameContext) -> dict[str, list[str]]:
    """Each distinct model reference the game's AI seats play, with the seats playing it (the
    context's default model too: secretaries and other seats outside the scenario play it)."""
    out: dict[str, list[str]] = {}
    for name, role in scenario.roles.items():
        if role.kind == "human" or name in ctx.humans:
            continue
        ref = ctx.role_models.get(name) or role.model or ctx.model
        out.setdefault(ref, []).append(name)
    out.setdefault(ctx.model, []).append("default")
    return out


def where(ref: ModelRef) -> str:
    """The URL or path a model is reached at."""
    if ref.provider == "openai":
        return ref.base_url or OPENAI_API
    if ref.provider == "gguf":
        return ref.name
    if ref.provider == "embedded":
        return str(embedded_model_path())
    if ref.provider == "langchain":
        return endpoint_of(ref)
    return ref.provider


def problem(ref: ModelRef, timeout: float = PREFLIGHT_TIMEOUT_S) -> str | None:
    """Why `ref` cannot answer, or None when it can (as far as one cheap request tells)."""
    if ref.provider in ("scripted", "bot"):
        return None
    if ref.provider in ("embedded", "gguf"):
        return _gguf_problem(Path(where(ref)))
    if ref.provider == "langchain":  # its integration and key, checked without a request
        return provider_problem(ref)
    key = os.environ.get("OPENAI_API_KEY")
    if ref.base_url is None and not key:
        return "unauthorised: OPENAI_API_KEY is not set"
    return _server_problem(ref, where(ref).rstrip("/") + "/models", key, timeout)


def _gguf_problem(path: Path) -> str | None:
    if not path.exists():
        return "no such GGUF file"
    if not path.is_file():
        return "not a file"
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None if magic == b"GGUF" else "not a GGUF file"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


class CrossOrigin(urllib.error.HTTPError):
    """A redirect to another origin, refused before the key is sent there."""


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only within the origin the key was meant for (urllib would copy the
    Authorization header to any host a server names)."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        if _origin(newurl) != _origin(req.full_url):
            raise CrossOrigin(newurl, code, msg, headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _fetch(request: urllib.request.Request, timeout: float) -> bytes:
    """The body of `request`, the whole exchange within `timeout` seconds (TimeoutError else):
    urllib's own timeout is per socket read, so it runs in a thread that is given up on."""
    opener = urllib.request.build_opener(_SameOrigin)
    result: dict[str, Any] = {}

    def exchange() -> None:
        try:
            with opener.open(request, timeout=timeout) as resp:
                result["body"] = resp.read(1_000_000)
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=exchange, name="wargraph-preflight", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():  # still trickling: the daemon thread ends with its socket's timeout
        raise TimeoutError(f"no whole answer within {timeout:g} s")
    if "error" in result:
        raise result["error"]
    return bytes(result["body"])


def _server_problem(ref: ModelRef, url: str, key: str | None, timeout: float) -> str | None:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        body = _fetch(request, timeout)
    except CrossOrigin as exc:
        return (
            f"redirected (HTTP {exc.code}) to another origin, {exc.filename}; not followed, so "
            "the key stays with its server: set base_url to the server's own address"
        )
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return f"unauthorised (HTTP {exc.code}; check OPENAI_API_KEY)"
        if exc.code in LISTLESS:
            return None
        return f"answered HTTP {exc.code} to {url}"
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"unreachable ({reason})"
    except ValueError as exc:  # a URL urllib cannot use
        return f"not a usable URL ({exc})"
    try:
        data = json.loads(body)
        served = [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        return None  # not the OpenAI shape: the chat requests will tell
    if served and ref.name not in served:
        return f"unknown model {ref.name!r} (it serves: {', '.join(served[:8])})"
    return None


def preflight(
    scenario: Scenario,
    ctx: GameContext,
    timeout: float = PREFLIGHT_TIMEOUT_S,
    *,
    after: str = "no game was created",
) -> None:
    """Ask each distinct model of the game once; the first that cannot answer is a
    PreflightError naming its seats and URL (and `after`, what was not done)."""
    for text, roles in seat_models(scenario, ctx).items():
        ref = parse_model_ref(text)
        why = problem(ref, timeout)
        if why:
            seats = ", ".join(roles)
            raise PreflightError(
                f"model {text} for {'seat' if len(roles) == 1 else 'seats'} {seats} at "
                f"{where(ref)}: {why}; {after}"
            )
