"""How fast this machine runs Python right now: the CPU seconds of a fixed workload (building,
encoding and decoding JSON, walking dicts and strings, regular expressions, small function
calls: what a game's process does), the least of a few runs.

    python -m benchmarks.calibrate            # prints the seconds

A CPU figure measured on another day or machine is scaled by the ratio of this workload's
seconds now to its seconds then (`benchmarks.reference`): these shared 2-core machines ran the
same code up to 1.4x slower from one hour to the next, and one machine of this workplace ran
AI_Diplomacy's phase in 0.266 s of CPU where another took 0.473 s.
"""

from __future__ import annotations

import json
import re
import sys
import time

WORD = re.compile(r"[A-Z]{3} [A-Z]{3}")


def _fib(n: int) -> int:
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _work() -> int:
    """One pass of the workload (deterministic); returns a checksum so nothing is skipped."""
    board = {
        f"unit{i}": {"order": f"A {'PAR BUR MUN KIE'.split()[i % 4]} H", "n": i, "w": i * 1.5}  # noqa: SIM905
        for i in range(1500)
    }
    total = 0
    for _ in range(50):
        text = json.dumps(board)
        back = json.loads(text)
        for key, value in back.items():
            total += len(key) + value["n"] + len(value["order"].split())
        total += len(WORD.findall(text[:30000]))
        total += len("".join(sorted(back)[:200]))
    return total + _fib(24)


def python_seconds(runs: int = 5) -> float:
    """The least CPU seconds of `runs` passes of the workload in this process."""
    best = float("inf")
    for _ in range(max(1, runs)):
        start = time.process_time()
        _work()
        best = min(best, time.process_time() - start)
    return round(best, 4)


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(python_seconds(runs))
