"""One small grid on the real embedded model: 2 conditions x 1 run, one move, judged by the
embedded model, with its report. Takes about a minute on 2 cores."""

from __future__ import annotations

import csv
import json
import time

import pytest

from wargraph.evals.experiment import load_experiment, run_experiment
from wargraph.evals.judge import record_lines

pytestmark = [pytest.mark.model, pytest.mark.slow]


def test_small_grid_on_the_embedded_model(tmp_path):
    exp = load_experiment(
        {
            "name": "model_grid",
            "scenario": "azuristan_crimsonia",
            "set": {"rounds": 1, "questions": []},
            "runs": 1,
            "model": "embedded",
            "context": {"max_tokens": 120},
            "concurrency": 2,
            "grid": {
                "pairing": {
                    "dove-dove": {
                        "players.azuristan.persona": "dove",
                        "players.crimsonia.persona": "dove",
                    },
                    "hawk-hawk": {
                        "players.azuristan.persona": "hawk",
                        "players.crimsonia.persona": "hawk",
                    },
                }
            },
            "questions": [{"id": "conflict", "text": "Did armed conflict occur?"}],
        }
    )
    start = time.perf_counter()
    res = run_experiment(exp, tmp_path, show_progress=False)
    elapsed = time.perf_counter() - start
    assert res.counts["played"] == 2 and not res.counts["crashed"], res.counts
    for o in res.outcomes:
        assert o["status"] == "done" and o["model_calls"] >= 3  # two plans and the umpire
        rec = json.loads((tmp_path / o["folder"] / "record.json").read_text())
        assert any(e["kind"] == "narration" for e in rec["events"])
        (j,) = o["judgements"]
        assert j["source"] in ("model", "fallback")
        assert j["answer"] in ("yes", "no", "undetermined")
        lines = {x["line"] for x in record_lines(rec)}
        assert all(q["line"] in lines for q in j["quotes"])
    rows = list(csv.DictReader((tmp_path / "outcomes.csv").open()))
    assert [r["label"] for r in rows] == ["dove-dove", "hawk-hawk"]
    report = res.report.read_text()
    assert "| dove-dove | 1 |" in report and "figures/question_conflict.png" in report
    assert (tmp_path / "figures" / "question_conflict.png").stat().st_size > 5000
    # the second run finds everything done and plays nothing
    again = run_experiment(exp, tmp_path, show_progress=False)
    assert again.counts["skipped"] == 2 and again.new_games == 0
    assert elapsed < 300, f"two one-move games and two judgements took {elapsed:.0f} s"
