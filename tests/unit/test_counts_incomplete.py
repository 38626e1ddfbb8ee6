"""A game read back without its call log is flagged (issue 40, item 9): a game on a model that
finished elsewhere (on a worker as its driver died: its outcome and call log never reached
the experiment's folder) used to come back "resumed" with 0 calls and 0 tokens and no word;
now its outcome says `counts_incomplete`, and outcomes.csv and the report say so. A real
loopback chat endpoint (tests.reliability's fake OpenAI-compatible server)."""

from __future__ import annotations

import csv
import shutil

from tests.reliability._support import FakeEndpoint
from wargraph.evals.experiment import load_experiment, run_experiment


def test_a_game_read_back_without_its_calls_is_flagged(tmp_path):
    fake = FakeEndpoint(reply="We hold the line.").start()
    try:
        exp = load_experiment(
            {
                "name": "elsewhere",
                "scenario": "azuristan_crimsonia",
                "set": {"rounds": 1, "questions": []},
                "runs": 1,
                "model": f"openai:fake@{fake.url}",
            }
        )
        first = run_experiment(exp, tmp_path, show_progress=False)
        [played] = first.outcomes
        assert played["model_calls"] > 0 and not played["counts_incomplete"]
        # as if a worker finished it in the store and died with its driver before writing
        # its files: the game is over in the store, its folder is empty
        shutil.rmtree(tmp_path / played["folder"])
        again = run_experiment(exp, tmp_path, show_progress=False)
    finally:
        fake.stop()
    [read_back] = again.outcomes
    assert read_back["how"] == "resumed" and read_back["model_calls"] == 0
    assert read_back["counts_incomplete"] is True
    [row] = list(csv.DictReader((tmp_path / "outcomes.csv").open(encoding="utf-8")))
    assert row["counts_incomplete"] == "True"
    assert "**Counts incomplete:** 1 game(s)" in (tmp_path / "report.md").read_text("utf-8")
