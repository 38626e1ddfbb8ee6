"""`wargraph.results.load` on a scripted experiment: the games frame names the outcome's columns
as outcomes.csv does (answer:<q>, quote:<q>, measure:<m>, each axis) with the same values, and
the calls frame has the documented columns (model, tokens, latency, prompt, output) even for
lines that have none."""

from __future__ import annotations

import csv

import pytest

from wargraph.evals.experiment import load_experiment, run_experiment
from wargraph.results import CALL_COLUMNS, load

pytest.importorskip("pandas")

SPEC = {
    "name": "frames",
    "scenario": "azuristan_crimsonia",
    "set": {"rounds": 1},
    "runs": 1,
    "model": "scripted",
    "grid": {"pairing": {"dove-dove": {"players.azuristan.persona": "dove"}}},
    "questions": [{"id": "conflict", "text": "Did armed conflict occur?"}],
}


def test_frames_name_their_columns_as_the_csv_does(tmp_path):
    run_experiment(load_experiment(SPEC), tmp_path, show_progress=False)
    with (tmp_path / "outcomes.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    r = load(tmp_path)
    assert len(rows) == len(r.games) == 1
    named = [c for c in rows[0] if c.split(":")[0] in ("answer", "quote", "measure")]
    assert "answer:conflict" in named and "quote:conflict" in named
    missing = [c for c in [*named, "pairing"] if c not in r.games.columns]
    assert not missing, f"columns of outcomes.csv not in the frame: {missing}"
    assert not [c for c in r.games.columns if c.startswith(("answers:", "measures:", "levels:"))]
    game = r.games.iloc[0]
    for column in [*named, "pairing"]:
        assert str(game[column]) == rows[0][column], column

    calls = r.calls
    assert list(calls.columns[: len(CALL_COLUMNS)]) == CALL_COLUMNS
    assert "messages" not in calls.columns and len(calls) > 0
    asked = calls[calls["prompt"].notna()]
    assert len(asked) > 0 and asked["prompt"].str.startswith("[").all()
