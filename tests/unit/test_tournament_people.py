"""A person may enter a tournament: their games wait for them (with the command that plays
each), the others are played, and the person is never rated."""

from __future__ import annotations

import shlex

from wargraph.evals.tournament import load_tournament, run_tournament


def test_people_games_wait_and_are_not_rated(tmp_path):
    t = load_tournament(
        {
            "name": "withme",
            "scenario": "blotto",
            "set": {"rounds": 2, "blotto.exchanges": 0, "questions": []},
            "entrants": {
                "br": {"model": "bot:best_response"},
                "fixed": {"model": "bot:fixed"},
                "me": {"human": True, "persona": "A careful commander."},
            },
            "rotations": 2,
            "score": "points",
            "bootstrap": 20,
        }
    )
    result = run_tournament(t, tmp_path, show_progress=False)
    assert len(result.games) == 6
    assert len(result.standing.rows) == 2  # br vs fixed, twice
    assert sorted(result.standing.fit.names) == ["br", "fixed"]
    assert len(result.people) == 4 and len(result.standing.missing) == 4
    args = shlex.split(result.people[0])
    assert args[:3] == ["wargraph", "play", args[2]] and "--human" in args
    assert "--thread" in args and "--out" in args
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    assert "questions=[]" in sets and not any(".kind=" in s for s in sets)
    assert any(s.endswith(".persona=A careful commander.") for s in sets)
