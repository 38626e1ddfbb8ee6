"""What this process is waiting on right now: each model call in flight (which seat asks, in
which phase and round, on which model, since when, and for the embedded model the tokens
written so far), for progress displays such as the CLI's spinner.

A call registers itself for its duration (`waiting`); a display reads `now_waiting()` from
another thread. Tokens are counted only while a display watches (`watch`): counting costs one
Python call per token in llama.cpp's sampling loop, which nothing else should pay.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

_lock = threading.Lock()
_waits: dict[int, Wait] = {}
_local = threading.local()
_watchers = 0


@dataclass
class Wait:
    seat: str
    phase: str
    round: int
    model: str
    started: float = field(default_factory=time.monotonic)
    # "asking" (sent), "queued" (the embedded model is busy with another seat), "writing" (the
    # embedded model reads the prompt, then writes this answer: `tokens` so far)
    state: str = "asking"
    tokens: int = 0

    def text(self, now: float | None = None) -> str:
        elapsed = (now if now is not None else time.monotonic()) - self.started
        where = f"{self.phase}, round {self.round}" if self.round else self.phase
        line = f"{self.seat} ({where}) on {self.model}: {elapsed:.0f} s"
        if self.state == "queued":
            return line + ", queued behind another seat"
        if self.state == "writing" and not self.tokens and watched():
            return line + ", reading its prompt"  # no token yet: the prompt is being read
        if self.state == "writing":
            return line + f", {self.tokens} tokens written so far"
        return line


@contextmanager
def waiting(seat: str, phase: str, round: int, model: str) -> Iterator[Wait]:
    """Register one model call for as long as it runs (in the calling thread)."""
    wait = Wait(seat=seat, phase=phase, round=round, model=model)
    with _lock:
        _waits[id(wait)] = wait
    outer = getattr(_local, "wait", None)
    _local.wait = wait
    try:
        yield wait
    finally:
        _local.wait = outer
        with _lock:
            _waits.pop(id(wait), None)


def current() -> Wait | None:
    """The call this thread is in, if any."""
    return getattr(_local, "wait", None)


def now_waiting() -> list[Wait]:
    """The calls in flight, oldest first."""
    with _lock:
        return sorted(_waits.values(), key=lambda w: w.started)


def watched() -> bool:
    return _watchers > 0


@contextmanager
def watch() -> Iterator[None]:
    """A display reads the waits meanwhile: the embedded model counts its tokens."""
    global _watchers
    with _lock:
        _watchers += 1
    try:
        yield
    finally:
        with _lock:
            _watchers -= 1


class CountTokens:
    """A llama.cpp logits processor that changes nothing and counts the tokens of the call it
    runs in (`Wait.tokens`)."""

    def __init__(self, wait: Wait) -> None:
        self.wait = wait

    def __call__(self, input_ids: object, logits: object) -> object:
        self.wait.tokens += 1
        return logits


def summary(waits: list[Wait], now: float | None = None) -> str:
    """One line for a display: the oldest call in full, and how many others wait."""
    if not waits:
        return ""
    line = "waiting on " + waits[0].text(now)
    if len(waits) > 1:
        line += f" (and {len(waits) - 1} other seat(s))"
    return line
