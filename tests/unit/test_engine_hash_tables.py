"""The engine's position hashes are the same in every process, whatever other threads draw from
Python's shared `random` while the first game of a map is made (a served game once differed from
the same game played alone in its `zobrist_hash` alone)."""

from __future__ import annotations

import random
import sys
import threading

import pytest
from diplomacy import Game

import wargraph.graphs.diplomacy.engine as engine


def _tables_made(build) -> dict:
    saved = Game.zobrist_tables.pop("standard", None)
    stop = threading.Event()

    def draw() -> None:  # another game's thread using the shared generator
        while not stop.is_set():
            random.random()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    other = threading.Thread(target=draw)
    other.start()
    try:
        build()
        return Game.zobrist_tables["standard"]
    finally:
        stop.set()
        other.join()
        sys.setswitchinterval(switch)
        if saved is not None:
            Game.zobrist_tables["standard"] = saved


@pytest.fixture
def reference() -> dict:
    Game.zobrist_tables.pop("standard", None)
    engine.hash_tables("standard")  # alone: no other thread draws
    return Game.zobrist_tables["standard"]


def test_hash_tables_are_the_same_while_another_thread_draws(reference):
    for _ in range(3):
        assert _tables_made(lambda: engine.hash_tables("standard")) == reference


def test_a_loaded_game_makes_the_same_tables(reference):
    saved = engine.new_game()
    made = _tables_made(lambda: engine.load(saved))
    assert made == reference
