"""The command line answers every seat a scenario gives to a person, says what it did, and stops
a game whose model cannot answer (scripted decider or a missing model file: no model runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wargraph.cli import app

runner = CliRunner()

PEOPLE = {
    "title": "River talks",
    "setting": "Two neighbours argue over a river.",
    "rounds": 1,
    "players": {
        "upriver": {"persona": "A cautious leader.", "kind": "human"},
        "downriver": {"persona": "An anxious leader."},
    },
    "control": {"review": True},
    "questions": [],
}


def play_args(tmp_path: Path, scenario: str, *more: str, model: str = "scripted") -> list[str]:
    """`wargraph play` arguments with the game and its files under tmp_path, then `more`."""
    out = [] if "--out" in more else ["--out", str(tmp_path / "out")]
    return ["play", scenario, "--model", model, "--db", str(tmp_path / "g.sqlite"), *out, *more]


def one_scripted_round(tmp_path: Path) -> list[str]:
    """One scripted round of the crisis, its records under tmp_path/out."""
    return play_args(
        tmp_path, "azuristan_crimsonia", "--rounds", "1", "--out", str(tmp_path / "out")
    )


def scenario_file(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "people.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_scenario_s_person_and_review_are_answered_at_the_terminal(tmp_path):
    """`kind: human` and `review: true` with no --human flag, and --model scripted does not turn
    the person into a script: the plan comes from standard input, the review edits the story."""
    out = tmp_path / "out"
    r = runner.invoke(
        app,
        play_args(tmp_path, str(scenario_file(tmp_path, PEOPLE)), "--out", str(out)),
        input='We open the sluices.\n{"accept": false, "text": "The water flows again."}\n',
    )
    assert r.exit_code == 0, r.output
    assert "Game over" in r.output
    events = json.loads((out / "record.json").read_text())["events"]
    plans = {e["author"]: e for e in events if e["kind"] == "plan"}
    assert plans["upriver"]["text"] == "We open the sluices."
    assert plans["upriver"]["data"]["source"] == "human"
    assert plans["downriver"]["data"]["source"] == "scripted"
    story = [e for e in events if e["kind"] == "narration"]
    assert story[0]["text"] == "The water flows again."
    assert story[0]["data"]["source"] == "reviewed"


def test_a_person_with_no_answer_gets_the_resume_hint(tmp_path):
    r = runner.invoke(
        app,
        play_args(tmp_path, str(scenario_file(tmp_path, PEOPLE)), "--thread", "waiting"),
        input="",
    )
    assert r.exit_code == 3 and "wargraph resume" in " ".join(r.output.split())


def test_prepare_with_the_scripted_decider_does_not_claim_a_fallback(tmp_path):
    target = tmp_path / "prepared.yaml"
    r = runner.invoke(
        app, ["prepare", "A border dispute.", "-o", str(target), "--model", "scripted"]
    )
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and "unusable" not in r.output and target.exists()


def test_a_missing_model_file_is_found_before_the_game_exists(tmp_path):
    """The preflight (issue 29): a GGUF path that is not there is one line naming the seats and
    the path, exit 2, and no game (a model that goes missing mid-game still stops the game
    resumably: tests/reliability/test_model_stop.py)."""
    missing = tmp_path / "missing.gguf"
    r = runner.invoke(
        app,
        play_args(
            tmp_path,
            "azuristan_crimsonia",
            *("--out", str(tmp_path / "out"), "--thread", "nomodel"),
            model=f"gguf:{missing}",
        ),
    )
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())  # the terminal wraps long lines
    squeezed = "".join(r.output.split())  # a long path may be wrapped anywhere
    assert "no such GGUF file" in said and str(missing) in squeezed and "azuristan" in said
    assert "no game was created" in said and "Game over" not in said
    assert not (tmp_path / "out").exists()


def test_max_faults_must_be_positive(tmp_path):
    r = runner.invoke(app, ["play", "azuristan_crimsonia", "--max-faults", "0"])
    assert r.exit_code == 2 and "--max-faults 0: expected 1 or more" in " ".join(r.output.split())


def test_every_finished_game_ends_with_a_fault_summary(tmp_path):
    r = runner.invoke(app, one_scripted_round(tmp_path))
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "0 transport faults" in said and "fallbacks: 0" in said


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_langsmith_tracing_without_a_key_says_so_once_and_stays_offline(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LANGSMITH", "LANGCHAIN"))  # no key of any name
    }
    env["LANGSMITH_TRACING"] = "true"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wargraph.cli",
            *one_scripted_round(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr  # the one note, no upload warnings
    assert "LANGSMITH_API_KEY" in lines[0] and "off" in lines[0]
