"""The collector's full scans kept off what a game's process loaded (issue 43)."""

from __future__ import annotations

import gc

# Phase steps of this process after which what is alive is frozen out of full scans.
SETTLE_STEPS = 10
settled = [0]


def settle_heap() -> None:
    """At each of the process's first phase steps, what is alive (the imports, compiled graphs,
    chat models and schemas the first steps load: ~240,000 objects in a Diplomacy game) is
    moved out of the garbage collector's reach (`gc.freeze`, a constant-time splice). Each full
    collection scanned all of it again and stopped every thread for 0.05-0.25 s, several times
    a phase, between the waves of calls. Called by every phase node, so a served game (an
    `ainvoke` on the server's loop) settles as a game of the CLI does. Later objects are
    collected as before; cyclic garbage of the first steps that was still uncollected stays
    allocated (bounded: ten steps)."""
    if settled[0] < SETTLE_STEPS:
        settled[0] += 1
        gc.freeze()
