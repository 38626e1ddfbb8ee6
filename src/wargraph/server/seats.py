"""Seat tokens: who may see and answer what.

Tokens are derived from one server secret with HMAC, so nothing is stored per seat (no file I/O in
the server's event loop) and links stay valid across server restarts as long as the secret does.

- The facilitator token sees and does everything (LangGraph API and the facilitator page).
- A seat token names one game (thread) and one seat; it works only on the player's routes, which
  show that seat's view and take answers for that seat's open questions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

SECRET_ENV = "WARGRAPH_SECRET"
FACILITATOR = "facilitator"
_MAC_CHARS = 32  # 128 bits of HMAC-SHA256, hex
_MAX_TOKEN = 2048

_generated: str | None = None
TOKEN_LINE = "wargraph: facilitator token:"  # a bare `langgraph dev` prints it at startup
TOKEN_WHERE = (
    "`wargraph serve` prints it (API: and the facilitator link's #token=); a bare "
    f"`langgraph dev` prints it at startup on its line starting {TOKEN_LINE!r}"
)
MALFORMED = "malformed token: copy the whole link you were given, or ask the facilitator for it"
INVALID = (
    "invalid token: it was not made by this server (or its secret changed); "
    "ask the facilitator for a new link"
)


class TokenError(ValueError):
    """A token that is missing, malformed or not signed by this server."""


def server_secret() -> str:
    """The HMAC key: `WARGRAPH_SECRET`, or (with no such variable) one random key per process.

    `wargraph serve` always sets the variable (kept in its state folder); a bare `langgraph dev`
    gets a fresh key, which the app logs as a facilitator link at startup."""
    global _generated
    value = os.environ.get(SECRET_ENV, "").strip()
    if value:
        return value
    if _generated is None:
        _generated = secrets.token_hex(32)
    return _generated


def new_secret() -> str:
    return secrets.token_hex(32)


def _mac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:_MAC_CHARS]


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise TokenError(MALFORMED) from None


def facilitator_token(secret: str | None = None) -> str:
    return "f." + _mac(secret or server_secret(), "facilitator")


def seat_token(thread_id: str, seat: str, secret: str | None = None) -> str:
    """A player's key to one seat of one game."""
    if not thread_id or not seat or "\n" in thread_id or "\n" in seat:
        raise TokenError("a seat token needs a thread id and a seat name (one line each)")
    body = _b64(f"{thread_id}\n{seat}")
    return f"s.{body}.{_mac(secret or server_secret(), 'seat|' + thread_id + '|' + seat)}"


@dataclass(frozen=True)
class Holder:
    """Who holds a valid token."""

    kind: str  # facilitator | seat
    thread_id: str = ""
    seat: str = ""

    @property
    def identity(self) -> str:
        return FACILITATOR if self.kind == FACILITATOR else f"seat:{self.thread_id}:{self.seat}"


def check_token(token: str | None, secret: str | None = None) -> Holder:
    """Verify a token (constant-time comparison); raise TokenError saying what is wrong."""
    if not token:
        raise TokenError("no token: open the link you were given (it carries your token)")
    token = token.strip()
    if len(token) > _MAX_TOKEN:
        raise TokenError(MALFORMED)
    key = secret or server_secret()
    if token.startswith("f."):
        if hmac.compare_digest(token, facilitator_token(key)):
            return Holder(FACILITATOR)
        raise TokenError(INVALID)
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "s":
        raise TokenError(MALFORMED)
    thread_id, sep, seat = _unb64(parts[1]).partition("\n")
    if not sep or not thread_id or not seat:
        raise TokenError(MALFORMED)
    expected = _mac(key, "seat|" + thread_id + "|" + seat)
    if not hmac.compare_digest(parts[2], expected):
        raise TokenError(INVALID)
    return Holder("seat", thread_id, seat)


def bearer(headers: Mapping[str, str] | Mapping[bytes, bytes] | None) -> str | None:
    """The token of a request: `Authorization: Bearer …` or the SDK's `x-api-key` header.

    Accepts str or bytes header names (the server's auth hook passes bytes)."""
    if not headers:
        return None
    flat: dict[str, str] = {}
    for k, v in headers.items():
        key = k.decode("latin-1") if isinstance(k, bytes) else str(k)
        flat[key.lower()] = v.decode("latin-1") if isinstance(v, bytes) else str(v)
    auth = flat.get("authorization", "").strip()
    if auth:
        scheme, _, value = auth.partition(" ")
        return value.strip() or None if scheme.lower() == "bearer" else None
    key = flat.get("x-api-key", "").strip()
    return key or None
