"""A second process for the one-writer tests (run as a script; one line per event on stdout).

python _lease_child.py take DB THREAD [CLOCK_OFFSET_S]
    tries the game's lease: prints "held" (and keeps it until stdin closes) or
    "refused <message>"; with an offset, this process's clock is that far off.
python _lease_child.py play DB THREAD ROUNDS
    plays a scripted crisis game, printing "step <node>" after each step and pausing
    0.3 s there (a window to stop it in); ends with "done" or "error <message>".
python _lease_child.py resume DB THREAD
    resumes it the same way.
"""

from __future__ import annotations

import sys
import time


def _skew(offset: float) -> None:
    """Move this process's clocks (wall and monotonic) by `offset` seconds."""
    if not offset:
        return
    for name in ("time", "monotonic", "perf_counter"):
        real = getattr(time, name)
        setattr(time, name, lambda real=real: real() + offset)
    real_ns = time.time_ns
    time.time_ns = lambda: real_ns() + int(offset * 1e9)


def main(argv: list[str]) -> int:
    mode, db, thread = argv[:3]
    if mode == "take":
        _skew(float(argv[3]) if len(argv) > 3 else 0.0)
        from wargraph.store.lease import GameHeld, lease

        try:
            with lease(db, thread, command="take"):
                print("held", flush=True)
                sys.stdin.read()
        except GameHeld as exc:
            print(f"refused {exc}", flush=True)
        return 0

    if mode == "resume":
        _skew(float(argv[3]) if len(argv) > 3 else 0.0)
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play, resume
    from wargraph.store.errors import StoreError

    def progress(node, values):
        print(f"step {node}", flush=True)
        time.sleep(0.3)

    try:
        if mode == "play":
            play(
                "azuristan_crimsonia",
                overrides=[f"rounds={argv[3]}"],
                context=GameContext(model="scripted", seed=5),
                db=db,
                thread_id=thread,
                progress=progress,
            )
        else:
            resume(db=db, thread_id=thread, progress=progress)
    except StoreError as exc:
        print(f"error {type(exc).__name__} {exc}", flush=True)
        return 3
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
