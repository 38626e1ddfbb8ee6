"""trace.jsonl: one line per model call, with the full prompt, output, tokens and latency."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

TRACE_DIR_ENV = "WARGRAPH_TRACE_DIR"
"""A folder where a game that names no trace file keeps one per thread (`wargraph serve` sets it
to its state folder's `traces/`: a request may not name a file of the server)."""

CACHED = "cached"
"""The event of an answer taken from the model cache (wargraph.models.cache) instead of a call:
never a `call`, so no count of calls or tokens takes it for a fresh one; it carries
`cached: true` and the tokens the original call used (`saved_prompt_tokens`, ...)."""

_lock = threading.Lock()
_failed: dict[str, str] = {}  # trace path -> why a write failed (the record says so)


def record_call(path: str | None, entry: dict[str, Any]) -> None:
    """Append one call; a failed write never stops a game (the trace is a log, not the record)."""
    entry = {"ts": round(time.time(), 3), **entry}
    target = path or os.environ.get("WARGRAPH_TRACE")
    if not target:
        return
    try:
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with _lock:
            try:
                _append(target, line)
            except FileNotFoundError:  # its folder is new, or was removed since
                Path(target).parent.mkdir(parents=True, exist_ok=True)
                _append(target, line)
    except (OSError, ValueError) as exc:
        _failed.setdefault(str(target), getattr(exc, "strerror", None) or str(exc))


def _append(target: str, line: str) -> None:
    # backslashreplace: a lone surrogate from a server's JSON ("\ud800") stays a valid JSON
    # escape instead of failing the write (and being mistaken for an endpoint fault)
    with open(target, "a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(line)


def served_path(thread_id: str | None) -> str | None:
    """The trace of game `thread_id` in the `WARGRAPH_TRACE_DIR` folder (None when unset or
    outside a game): `<folder>/<thread id>.jsonl`, the id reduced to safe file-name characters."""
    folder = os.environ.get(TRACE_DIR_ENV, "").strip()
    if not folder or not thread_id:
        return None
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", thread_id)[:120].lstrip(".") or "_"
    return str(Path(folder) / f"{name}.jsonl")


def failure(path: str | Path | None) -> str | None:
    """Why writing this trace failed during this process, if it did (it is then incomplete)."""
    return _failed.get(str(path)) if path else None


def start(path: str | Path | None) -> None:
    """A new game's trace: forget an earlier failure at the same path."""
    if path:
        _failed.pop(str(path), None)


MAX_TRACE_BYTES = 256 << 20  # read whole: /dev/zero or a FIFO named trace.jsonl must not be


class TraceError(ValueError):
    """A trace that cannot be read: not a regular file, or too large; the message says which."""


def read_trace(path: str | Path, *, strict: bool = False) -> list[dict[str, Any]]:
    """The trace's lines, read only from a regular file of at most MAX_TRACE_BYTES (a device or
    a pipe is never opened for reading: /dev/zero never ends, a FIFO waits for a writer). A
    missing trace is empty; one that cannot be read raises TraceError if `strict`, else is
    empty too (the record's `trace_error`, or the view, says so)."""
    from wargraph.runs.userfiles import UserFileError, read_regular

    out: list[dict[str, Any]] = []
    p = Path(path)
    if not os.path.lexists(p):
        return out
    try:
        text = read_regular(p, MAX_TRACE_BYTES).decode("utf-8", errors="replace")
    except UserFileError as err:
        if strict:
            raise TraceError(f"trace: {err}") from None
        return out
    # by "\n" only: splitlines() also splits on U+2028, U+0085 ... that a JSON string holds raw
    for line in text.split("\n"):
        line = line.strip()
        if line:
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue  # a line cut by a kill (or nested past reading); the rest still counts
            if isinstance(entry, dict):
                out.append(entry)
    return out
