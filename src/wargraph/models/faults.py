"""Transport faults: stop a game whose model cannot answer at all, and sum up faults and
fallbacks at the end of every game.

A call that fails every transport retry ends in the ask's fallback, so one flaky call never
stops a game. But a model that cannot load, or an endpoint that refuses every call, would turn
the whole game into fallbacks: after `max_faults` such calls in a row (per game thread) the
decider raises `ModelUnavailable` instead. The game's checkpoints stay; it resumes once the model
answers again.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from wargraph.runs.trace import read_trace

DEFAULT_MAX_FAULTS = 5
EXIT_MODEL_UNAVAILABLE = 4  # the CLI's exit status when a game stops for its model


class ModelUnavailable(RuntimeError):
    """The model cannot answer (it does not load, or `max_faults` calls in a row failed).

    A RuntimeError, so LangGraph's default RetryPolicy does not run the node again."""

    def __init__(self, message: str, *, thread_id: str = "", trace_path: str | None = None):
        super().__init__(message)
        self.thread_id = thread_id
        self.trace_path = trace_path


class _Streaks:
    """Consecutive failed calls per game thread (games in threads of one process count apart)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def failed(self, key: str) -> int:
        with self._lock:
            self._count[key] = self._count.get(key, 0) + 1
            return self._count[key]

    def answered(self, key: str) -> None:
        with self._lock:
            self._count.pop(key, None)


streaks = _Streaks()


def fault_text(exc: BaseException, ref: Any) -> str:
    """A failed call in one line, naming the endpoint's URL for a server model (openai's
    "Connection error." alone does not say which server refused)."""
    text = f"{type(exc).__name__}: {str(exc)[:300]}"
    cause = root_cause(exc)
    if cause is not exc and str(cause) and str(cause) not in text:
        # "Connection error." alone does not say why: a refused port, a certificate, a name
        text += f" ({type(cause).__name__}: {str(cause)[:200]})"
    if getattr(ref, "provider", "") in ("openai", "langchain"):
        from wargraph.models.chat import endpoint_of

        url = endpoint_of(ref)
        if url not in text:
            text += f" (at {url})"
    return text


def root_cause(exc: BaseException) -> BaseException:
    """The first error of an exception's chain of causes (`raise ... from`)."""
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def current_thread_id() -> str:
    """The LangGraph thread of the running game; "" outside a graph (post-hoc calls)."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("configurable", {}).get("thread_id") or "")
    except RuntimeError:  # not inside a runnable context
        return ""


def new_game() -> None:
    """A game starts on this thread (called by its setup node): no faults in a row yet."""
    streaks.answered(current_thread_id())


def stop_message(
    thread_id: str, reason: str, count: int, *, load: bool, refused: bool = False
) -> str:
    if refused:  # the operator's choice, not a fault: waiting for the model will not help
        what = f"the model is not allowed here ({reason})"
        if not thread_id:
            return what + "."
        return (
            f"{what}; the game is saved: continue it with `wargraph resume --thread {thread_id}` "
            "once the operator allows the model or the seat plays another"
        )
    what = (
        f"the model cannot be loaded ({reason})"
        if load
        else f"stopped after {count} model calls in a row failed (last: {reason})"
    )
    if not thread_id:
        return what + "."
    return (
        f"{what}; the game is saved: continue it with `wargraph resume --thread {thread_id}` "
        "once the model answers" + ("" if load else " (the limit is --max-faults)")
    )


def summarize(entries: list[dict[str, Any]], thread_id: str | None = None) -> dict[str, int]:
    """Counts of a game's model calls, transport faults, unusable answers and fallbacks."""
    mine = [e for e in entries if not thread_id or e.get("thread", thread_id) == thread_id]

    def count(event: str, **match: Any) -> int:
        return sum(
            1
            for e in mine
            if e.get("event") == event and all(e.get(k) == v for k, v in match.items())
        )

    return {
        "calls": count("call"),
        "faults": count("fault"),
        "unusable": count("rejected"),
        "fallbacks": count("fallback"),
        "fallbacks_after_faults": count("fallback", cause="transport"),
        "fallbacks_after_unusable": count("fallback", cause="unusable"),
        "stops": count("stop"),
    }


def summary_text(trace_path: str | Path | None, thread_id: str | None = None) -> str:
    """One line for the end of every game, read from its trace."""
    if not trace_path:
        return "Model calls: no trace kept for this game."
    s = summarize(read_trace(trace_path), thread_id)
    return (
        f"Model calls: {s['calls']} answered, {s['faults']} transport faults, "
        f"{s['unusable']} unusable answers re-asked; fallbacks: {s['fallbacks']} "
        f"({s['fallbacks_after_faults']} after transport faults, "
        f"{s['fallbacks_after_unusable']} after unusable answers)."
    )
