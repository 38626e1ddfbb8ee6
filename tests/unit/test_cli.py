"""The command line, end to end with the scripted decider (no model needed)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from wargraph.cli import app

runner = CliRunner()


def test_play_writes_records_and_resume_finishes_nothing_twice(tmp_path):
    db, out = tmp_path / "g.sqlite", tmp_path / "out"
    r = runner.invoke(
        app,
        [
            "play",
            "azuristan_crimsonia",
            "--model",
            "scripted",
            "--db",
            str(db),
            "--out",
            str(out),
            "--thread",
            "t1",
            "--rounds",
            "1",
            "--set",
            "players.crimsonia.persona=hawk",
        ],
    )
    assert r.exit_code == 0, r.output
    record = json.loads((out / "record.json").read_text())
    assert record["done"] and record["thread_id"] == "t1"
    assert record["scenario"]["players"]["crimsonia"]["persona"] == "hawk"
    assert (out / "transcript.md").read_text().startswith("# The Zafaristan crisis")
    assert (out / "trace.jsonl").exists()
    n = len(record["events"])
    r = runner.invoke(app, ["resume", "--db", str(db), "--thread", "t1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert len(json.loads((out / "record.json").read_text())["events"]) == n
    r = runner.invoke(
        app,
        ["play", "azuristan_crimsonia", "--model", "scripted", "--db", str(db), "--thread", "t1"],
    )
    assert r.exit_code == 2 and "already holds a game" in r.output


def test_human_at_the_terminal_with_validation(tmp_path):
    out = tmp_path / "o"
    # crimsonia is a person: an empty answer is refused, the second one is taken
    r = runner.invoke(
        app,
        [
            "play",
            "azuristan_crimsonia",
            "--model",
            "scripted",
            "--human",
            "crimsonia",
            "--rounds",
            "1",
            "--set",
            "questions=[]",
            "--db",
            str(tmp_path / "h.sqlite"),
            "--out",
            str(out),
        ],
        input="\nWe send envoys to the capital.\n",
    )
    assert r.exit_code == 0, r.output
    assert "not accepted" in r.output
    plans = [
        e
        for e in json.loads((out / "record.json").read_text())["events"]
        if e["author"] == "crimsonia"
    ]
    assert (
        plans[0]["text"] == "We send envoys to the capital."
        and plans[0]["data"]["source"] == "human"
    )


def test_bad_inputs_give_clear_errors_not_tracebacks(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\nsetting: y\nplayers: {a: {kind: robot}}\n")
    not_a_db = tmp_path / "junk.sqlite"
    not_a_db.write_text("this is not a database")
    for args in (
        ["validate", str(bad)],
        ["play", str(bad), "--model", "scripted"],
        ["play", "azuristan_crimsonia", "--model", "gpt-5"],
        ["play", "azuristan_crimsonia", "--role-model", "control"],
        ["resume", "--db", str(tmp_path / "none.sqlite"), "--thread", "x"],
        ["ask", str(tmp_path / "missing.json"), "why?", "--model", "scripted"],
        ["graph", "nope"],
        ["resume", "--db", str(not_a_db), "--thread", "x"],
        ["play", "summit", "--model", "scripted", "--db", str(not_a_db)],
    ):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.output)
        assert "error:" in r.output and "Traceback" not in r.output


def test_validate_scenarios_and_graph():
    r = runner.invoke(app, ["validate", "azuristan_crimsonia"])
    assert r.exit_code == 0 and "ok" in r.output
    r = runner.invoke(app, ["scenarios"])
    assert "azuristan_crimsonia" in r.output and "summit" in r.output
    r = runner.invoke(app, ["graph", "summit"])
    assert r.exit_code == 0 and "negotiate" in r.output and "agent_karvia" in r.output


def test_prepare_writes_a_scenario_that_plays_and_ask_answers(tmp_path):
    target = tmp_path / "prepared.yaml"
    r = runner.invoke(
        app,
        [
            "prepare",
            "A border dispute over a river island",
            "-o",
            str(target),
            "--model",
            "scripted",
        ],
    )
    assert r.exit_code == 0, r.output
    data = yaml.safe_load(target.read_text())
    assert len(data["players"]) >= 2
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        [
            "play",
            str(target),
            "--model",
            "scripted",
            "--db",
            str(tmp_path / "p.sqlite"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["ask", str(out), "Who gained most?", "--model", "scripted"])
    assert r.exit_code == 0 and "answer" in r.output
    r = runner.invoke(
        app, ["ask", str(out), "War?", "--option", "yes", "--option", "no", "--model", "scripted"]
    )
    assert r.exit_code == 0 and "choice" in r.output


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_eval_diplomacy_with_the_promise_judge(tmp_path):
    """The scripted decider stands in for the judge model (deterministic; judges nothing)."""
    out, ev = tmp_path / "d", tmp_path / "ev"
    r = runner.invoke(
        app,
        [
            "play",
            "diplomacy",
            "--model",
            "scripted",
            "--max-year",
            "1901",
            "--out",
            str(out),
            "--db",
            str(tmp_path / "d.sqlite"),
        ],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app, ["eval", "diplomacy", str(out), "--out", str(ev), "--promises-model", "scripted"]
    )
    assert r.exit_code == 0, r.output
    judged = json.loads((ev / "promises.json").read_text())
    (measures,) = judged.values()
    rates = measures["betrayal_rates"]
    assert set(rates) <= {"defensive", "offensive", "neutrality", "support"}
    assert sum(v["promises"] + v["undeterminable"] for v in rates.values()) == len(
        measures["promises"]
    )


@pytest.mark.parametrize(
    "args, said",
    [
        (["play", "no_such_game"], "no shipped scenario"),
        (["play", "diplomacy", "--rounds", "0", "--model", "scripted"], "rounds"),
    ],
)
def test_a_game_that_is_never_created_names_no_thread(tmp_path, monkeypatch, args, said):
    """A new game's thread is said when the game is about to be created: an error before it (a
    bad scenario, a bad setting) named a thread of a game that does not exist."""
    from wargraph.runs.runner import list_runs

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "g.sqlite"
    r = runner.invoke(app, [*args, "--db", str(db)], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and said in r.output, r.output
    assert "thread" not in r.output, r.output
    assert not db.exists() or not list_runs(db)


def test_a_new_game_says_its_thread_before_it_plays(tmp_path):
    r = runner.invoke(app, ["play", "blotto", "--model", "scripted", "--db", str(tmp_path / "g")])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("thread: "), r.output


def test_games_to_a_pipe_is_a_line_a_game_with_nothing_cut(tmp_path):
    """To a pipe (80 columns assumed) the games table cut the family ("warage…") and wrapped the
    scenario over four lines; a line a game now, so that grep and sort read it."""
    db = str(tmp_path / "g.sqlite")
    r = runner.invoke(app, ["play", "wwi", "--model", "scripted", "--rounds", "1", "--db", db])
    assert r.exit_code == 0, r.output
    listed = runner.invoke(app, ["games", "--db", db], env={"COLUMNS": None})
    rows = [line for line in listed.output.splitlines() if "waragent" in line]
    assert len(rows) == 1, listed.output
    assert "The July Crisis, 1914" in rows[0] and "…" not in rows[0]
