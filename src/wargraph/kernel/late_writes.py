"""Silences the one log line LangGraph leaves when a step fails while a sibling task is still
running: the sibling finishes after the step's executor has shut down, its done-callback cannot
schedule the write of its answer, and `concurrent.futures` logs the RuntimeError with a traceback.

The failure itself is reported as usual; the sibling's answer is not saved and is asked again when
the game resumes (the step it belongs to failed, so nothing after it was played on it)."""

from __future__ import annotations

import logging

_LOGGER = "concurrent.futures"
_SHUT = "cannot schedule new futures after shutdown"


class _LateSiblingWrite(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        late = (
            isinstance(exc, RuntimeError)
            and str(exc) == _SHUT
            and record.msg == "exception calling callback for %r"
        )
        return not late


def install() -> None:
    """Add the filter to the `concurrent.futures` logger, once per process."""
    logger = logging.getLogger(_LOGGER)
    if not any(isinstance(f, _LateSiblingWrite) for f in logger.filters):
        logger.addFilter(_LateSiblingWrite())
