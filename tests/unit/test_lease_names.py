"""A refusal names the game's holder even in a race (issue 40, item 10): a holder names itself
just after it takes the game's lock, and a second process refused in between used to get "in
use by another process" (the holder named in 3 races of 5). Now it waits a moment for the name.
Real processes on a real SQLite store (and PostgreSQL where reachable)."""

from __future__ import annotations

import multiprocessing as mp
import time

import pytest

from wargraph.store.errors import GameHeld
from wargraph.store.lease import Lease, lease, own_sql


def _hold_and_name_late(db: str, key: str, locked, done) -> None:
    """Take the lock, then name itself only 0.3 s later (a slow moment of a real holder)."""
    with own_sql(db, create=True) as sql:
        held = Lease(db, sql, key, "holder-under-test")
        assert held._lock()
        locked.set()
        time.sleep(0.3)
        held.generation = held._next_generation()
        done.wait(10)
        held.release()


def test_a_refusal_in_the_race_names_the_holder(store_db):
    with lease(store_db, "warm"):  # the store's tables exist before the race
        pass
    ctx = mp.get_context("fork")
    locked, done = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_and_name_late, args=(store_db, "g", locked, done))
    holder.start()
    try:
        assert locked.wait(20)
        with pytest.raises(GameHeld) as refused, lease(store_db, "g"):
            pass
        assert "holder-under-test" in str(refused.value), str(refused.value)
    finally:
        done.set()
        holder.join(20)
