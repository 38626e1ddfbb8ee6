"""The players' and facilitator's pages: static files from `src/wargraph/web`, served under a strict
content policy. The token travels in the link's #fragment (never sent to the server in a URL)
and then as a Bearer header of the pages' API calls.

  GET /play  GET /facilitator  GET /web/{name}  GET /wargraph (to /facilitator)  GET /favicon.ico
"""

from __future__ import annotations

import importlib.resources
import logging

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

log = logging.getLogger(__name__)

_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    # Scripts and styles only from these files; no inline code, no framing, no referrer.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        # blob: the seat page shows a map (SVG, fetched with the token) as an image of a blob
        "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
NOT_FOUND = "no such page: open /facilitator or the /play link you were given"


def _load_web() -> dict[str, bytes]:
    """The pages, read once at import (the server imports this module before its loop runs)."""
    files: dict[str, bytes] = {}
    root = importlib.resources.files("wargraph") / "web"
    try:
        for entry in root.iterdir():
            if any(entry.name.endswith(ext) for ext in _STATIC_TYPES):
                files[entry.name] = entry.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        log.warning("wargraph: no web pages found in the package; reinstall wargraph")
    return files


WEB = _load_web()


def _page(name: str) -> Response:
    body = WEB.get(name)
    if body is None:
        return Response(NOT_FOUND, status_code=404, media_type="text/plain")
    ext = name[name.rfind(".") :]
    return Response(body, media_type=_STATIC_TYPES[ext], headers=SECURITY_HEADERS)


async def play_page(request: Request) -> Response:
    return _page("play.html")


async def facilitator_page(request: Request) -> Response:
    return _page("facilitator.html")


async def web_file(request: Request) -> Response:
    name = request.path_params["name"]
    if "/" in name or name.endswith(".html"):
        return Response(NOT_FOUND, status_code=404, media_type="text/plain")
    return _page(name)


async def favicon(request: Request) -> Response:
    """The icon browsers ask every page for: without it each page logs a 401 (the LangGraph API's
    auth answers paths no route of ours takes)."""
    return _page("favicon.svg")


async def home(request: Request) -> Response:
    return RedirectResponse("/facilitator", status_code=302)
