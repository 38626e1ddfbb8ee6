"""A game's process moves what its first steps left alive out of the collector's full scans
(issue 43): each full collection scanned the imports, graphs and models again and stopped every
thread for 0.05-0.25 s between the waves of seat calls. The phase nodes do it, so a game the
server runs (an `ainvoke` on its loop, no runner around it) settles as a CLI game does."""

from __future__ import annotations

import gc

import wargraph.kernel.heap as heap
from tests.aio import run
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import game_graph, play


def test_a_game_freezes_its_first_steps_objects_then_stops_freezing(tmp_path, monkeypatch):
    monkeypatch.setattr(heap, "settled", [0])
    gc.unfreeze()
    before = gc.get_freeze_count()
    play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=1),
        db=None,
        out_dir=tmp_path / "out",
    )
    assert before == 0 and gc.get_freeze_count() > 10_000
    assert heap.settled[0] == heap.SETTLE_STEPS  # a longer-lived process freezes no more
    frozen = gc.get_freeze_count()
    heap.settle_heap()
    # nothing frozen again; frozen objects that die meanwhile leave the count (it may fall)
    assert gc.get_freeze_count() <= frozen
    gc.unfreeze()


def test_a_game_run_as_the_server_runs_it_settles_too(monkeypatch):
    """`ainvoke` of the game's graph, as langgraph-api runs a served game."""
    from langgraph.checkpoint.memory import InMemorySaver

    monkeypatch.setattr(heap, "settled", [0])
    gc.unfreeze()
    sc = load_scenario("azuristan_crimsonia", {"rounds": 2})
    graph = game_graph(sc, InMemorySaver())
    config = {"configurable": {"thread_id": "served"}, "recursion_limit": 1000}
    run(
        graph.ainvoke(
            {"scenario": sc.model_dump()}, config, context=GameContext(model="scripted", seed=1)
        )
    )
    assert heap.settled[0] == heap.SETTLE_STEPS and gc.get_freeze_count() > 10_000
    gc.unfreeze()
