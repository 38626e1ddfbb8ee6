"""How long an endpoint asked us to wait: HTTP 429 (and 503) with `Retry-After`.

A provider with a rate limit answers 429 with a `Retry-After` header (seconds, or an HTTP
date); OpenAI also sends `retry-after-ms`. The decider waits that long before its next try
instead of its own back-off, which would hit the limit again at once."""

from __future__ import annotations

import email.utils
import time
from typing import Any

MAX_WAIT_S = 60.0  # a longer wait is the provider's quota, not a pause: the call fails then
WAIT_STATUSES = (429, 503)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status is None and response is not None:
        status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def retry_after_s(exc: BaseException, *, now: float | None = None) -> float | None:
    """Seconds the endpoint asked for before the next try (at most MAX_WAIT_S), or None when
    the error is not a 429/503 or says nothing usable."""
    if _status(exc) not in WAIT_STATUSES:
        return None
    headers: Any = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return _bounded(float(ms) / 1000)
        raw = headers.get("retry-after")
    except (TypeError, ValueError, AttributeError):
        return None
    if raw is None:
        return None
    raw = str(raw).strip()
    try:
        return _bounded(float(raw))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(raw).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _bounded(when - (time.time() if now is None else now))


def _bounded(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_WAIT_S)
