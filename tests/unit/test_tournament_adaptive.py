"""Adaptive length: rotations are added until the top two separate, or a budget is spent; the
report says which stopped it."""

from __future__ import annotations

import json

from wargraph.evals.tournament import load_tournament, run_tournament


def blotto(entrants: dict, adaptive: dict) -> dict:
    return {
        "name": "adaptive",
        "scenario": "blotto",
        "set": {"rounds": 3, "blotto.exchanges": 0, "questions": []},
        "entrants": entrants,
        "score": "points",
        "adaptive": adaptive,
        "bootstrap": 50,
    }


def test_stops_when_the_top_two_separate(tmp_path):
    t = load_tournament(
        blotto(
            {"br": {"model": "bot:best_response"}, "fixed": {"model": "bot:fixed"}},
            {"until_separated": True, "max_games": 40},
        )
    )
    result = run_tournament(t, tmp_path, show_progress=False)
    assert result.stopped_by.startswith("separated: br")
    assert len(result.games) < 40 and len(result.games) % 2 == 0  # whole rotations
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["stopped_by"] == result.stopped_by
    assert result.stopped_by in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_stops_at_the_game_budget_when_entrants_are_equal(tmp_path):
    t = load_tournament(
        blotto(
            {"a": {"model": "bot:even"}, "b": {"model": "bot:even"}},
            {"until_separated": True, "max_games": 6},
        )
    )
    result = run_tournament(t, tmp_path, show_progress=False)
    assert result.stopped_by.startswith("game budget")
    assert len(result.games) == 6
