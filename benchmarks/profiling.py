"""A small sampling profiler over every thread (standard library only).

cProfile sees one thread, and LangGraph runs nodes and checkpoint writes on a thread pool; so
the benchmarks sample `sys._current_frames()` instead and count, for each function, the samples
in which it was on a busy thread's stack (inclusive) or at its top (self), each sample weighted
by the time since the previous one. Threads waiting for work are left out, so the shares are of
busy thread time."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Categories = Sequence[tuple[str, Callable[[str, str], bool]]]

# (file name, function) at the top of a stack that means "waiting", not working.
_IDLE_TOPS = {
    ("threading.py", "wait"),
    ("threading.py", "_wait_for_tstate_lock"),
    ("queue.py", "get"),
    ("thread.py", "_worker"),
    ("selectors.py", "select"),
}


def _where(code) -> tuple[str, str]:
    path = Path(code.co_filename)
    return f"{path.parent.name}/{path.name}", code.co_name


class Sampler:
    def __init__(self, interval: float = 0.0005, categories: Categories = ()) -> None:
        self.interval = interval
        self.categories = categories
        self.by_category: Counter[str] = Counter()  # values: seconds
        self.inclusive: Counter[tuple[str, str]] = Counter()
        self.self_: Counter[tuple[str, str]] = Counter()
        self.samples = 0
        self.busy = 0.0  # busy thread-seconds (time-weighted samples)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="bench-sampler")
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def _loop(self) -> None:
        me = threading.get_ident()
        last = time.perf_counter()
        while not self._stop.is_set():
            # Weight each sample by the time since the previous one: while a thread holds the
            # GIL this thread wakes late, so unweighted samples would over-count the moments
            # when the GIL is free (I/O such as fsync) and under-count pure-Python work.
            now = time.perf_counter()
            weight, last = now - last, now
            self.samples += 1
            for tid, frame in sys._current_frames().items():
                if tid == me or frame is None:
                    continue
                stack = []
                f = frame
                while f is not None:
                    stack.append(_where(f.f_code))
                    f = f.f_back
                top = stack[0]
                if (top[0].rsplit("/", 1)[-1], top[1]) in _IDLE_TOPS:
                    continue
                self.busy += weight
                self.self_[top] += weight
                self.by_category[self._category(stack)] += weight
                for key in dict.fromkeys(stack):
                    self.inclusive[key] += weight
            time.sleep(self.interval)

    def top(self, n: int = 15, *, by: str = "inclusive", skip_outer: int = 0) -> list[dict]:
        """The functions with the most busy samples, as shares of all busy samples."""
        counter = self.inclusive if by == "inclusive" else self.self_
        busy = self.busy or 1.0
        rows = []
        for (file, fn), count in counter.most_common(n + skip_outer):
            if count >= busy * 0.999 and by == "inclusive":
                continue  # thread bootstraps and the benchmark's own frames: 100% everywhere
            rows.append({"function": f"{file}:{fn}", "share": round(count / busy, 4)})
        return rows[:n]

    def _category(self, stack: list[tuple[str, str]]) -> str:
        # Categories are in priority order: a sample belongs to the first one found anywhere on
        # its stack (a checkpoint write inside a LangGraph step counts as the write).
        for name, match in self.categories:
            if any(match(file, fn) for file, fn in stack):
                return name
        return "other"

    def category_shares(self) -> dict[str, float]:
        busy = self.busy or 1.0
        return {name: round(c / busy, 4) for name, c in self.by_category.most_common()}
