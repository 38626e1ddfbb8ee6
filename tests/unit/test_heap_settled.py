"""A game's process moves what its first steps left alive out of the collector's full scans
(issue 43): each full collection scanned the imports, graphs and models again and stopped every
thread for 0.05-0.25 s between the waves of seat calls."""

from __future__ import annotations

import gc

import wargraph.runs.runner as runner
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play


def test_a_game_freezes_its_first_steps_objects_then_stops_freezing(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "_settled", [0])
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
    assert runner._settled[0] == runner._SETTLE_STEPS  # a longer-lived process freezes no more
    frozen = gc.get_freeze_count()
    runner.settle_heap()
    assert gc.get_freeze_count() == frozen
    gc.unfreeze()
