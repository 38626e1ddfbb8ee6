"""Running experiments with the scripted decider and the scripted judge: resume without
re-running finished games, interruption part-way, crashes, the report end to end, the CLI."""

from __future__ import annotations

import csv
import hashlib
import json
import socket
import sqlite3
import threading
import time
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

import wargraph.evals.stats as stats
import wargraph.store.connect as store  # where the SQLite connection is made
from wargraph.cli import app
from wargraph.evals.experiment import (
    Hooks,
    langsmith_parts,
    load_experiment,
    log_langsmith,
    plan_games,
    run_experiment,
)
from wargraph.evals.judge import record_lines
from wargraph.runs.runner import list_runs

SPEC = {
    "name": "tiny",
    "scenario": "azuristan_crimsonia",
    "set": {"rounds": 1, "questions": []},
    "runs": 2,
    "model": "scripted",
    "concurrency": 2,
    "grid": {
        "pairing": {
            "dove-dove": {"players.azuristan.persona": "dove", "players.crimsonia.persona": "dove"},
            "hawk-hawk": {"players.azuristan.persona": "hawk", "players.crimsonia.persona": "hawk"},
        }
    },
    "questions": [
        {"id": "conflict", "text": "Did armed conflict occur?"},
        {
            "id": "status",
            "text": "What was the final status of Zafaristan?",
            "options": ["part of Azuristan", "independent", "part of Crimsonia", "contested"],
        },
    ],
}


def tiny(**changes):
    return load_experiment({**SPEC, **changes})


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def records(out: Path) -> dict[str, dict]:
    """Each game's record, less the store it names (`db`: each experiment folder has its own)."""
    found = {
        str(p.parent.relative_to(out)): json.loads(p.read_text())
        for p in sorted(out.glob("games/*/*/record.json"))
    }
    for record in found.values():
        record.pop("db", None)
    return found


def test_second_run_skips_every_finished_game(tmp_path):
    exp = tiny()
    first = run_experiment(exp, tmp_path, show_progress=False)
    assert first.counts["played"] == 4 and first.new_games == 4
    assert set(list_runs(tmp_path / "checkpoints.sqlite")) == {p.thread_id for p in plan_games(exp)}
    before = {p: digest(p) for p in tmp_path.glob("games/*/*/*.json")}
    seen = []
    again = run_experiment(
        exp, tmp_path, show_progress=False, hooks=Hooks(game_done=lambda o, h: seen.append(o))
    )
    assert again.counts["skipped"] == 4 and again.new_games == 0 and seen == []
    assert {p: digest(p) for p in tmp_path.glob("games/*/*/*.json")} == before
    assert len(again.outcomes) == 4
    # more runs: only the new games are played
    more = run_experiment(tiny(runs=3), tmp_path, show_progress=False)
    assert more.counts["skipped"] == 4 and more.counts["played"] == 2


def test_changed_questions_rejudge_without_replaying(tmp_path):
    first = run_experiment(tiny(), tmp_path, show_progress=False)
    assert first.counts["played"] == 4, first.counts  # else the next run plays, not re-judges
    recs = {p: digest(p) for p in tmp_path.glob("games/*/*/record.json")}
    qs = [{"id": "conflict", "text": "Was there any fighting at all?"}]
    res = run_experiment(tiny(questions=qs), tmp_path, show_progress=False)
    assert res.counts["rejudged"] == 4 and res.new_games == 0
    assert {p: digest(p) for p in tmp_path.glob("games/*/*/record.json")} == recs
    assert all(o["judgements"][0]["question"] == qs[0]["text"] for o in res.outcomes)


def test_games_opening_a_new_store_together_wait_their_turn(tmp_path, monkeypatch):
    """While one connection writes to the new store (as when another game is switching the new
    file to WAL), SQLite refuses the WAL switch at once, without its busy timeout. The games
    must wait their turn, not crash: a game crashed this way now and then when games started
    together (the next run then played it instead of re-judging it)."""
    db = tmp_path / "checkpoints.sqlite"
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # a write lock on the new, empty file
    opened = threading.Event()

    def connect(*args, **kwargs):
        conn = sqlite3.connect(*args, **kwargs)
        opened.set()  # a game has the file open: it now meets the lock
        return conn

    monkeypatch.setattr(
        store, "sqlite3", types.SimpleNamespace(**{**vars(sqlite3), "connect": connect})
    )

    def release() -> None:
        opened.wait(60)
        time.sleep(0.3)  # the game is at its WAL switch by now
        holder.execute("COMMIT")

    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    try:
        res = run_experiment(tiny(runs=1), tmp_path, show_progress=False, report=False)
    finally:
        releaser.join(60)
        holder.close()
    assert opened.is_set()
    assert res.counts["played"] == 2 and res.counts["crashed"] == 0, res.counts
    assert len(list_runs(db)) == 2


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_interrupted_after_k_games_then_resumed(tmp_path):
    """A KeyboardInterrupt after the first finished game (as Ctrl-C would): the game running
    alongside stops after its current step; the next run finishes the rest and nothing that
    was finished runs again. The records equal those of an uninterrupted experiment."""
    exp = tiny(concurrency=1)
    done: list[str] = []

    def stop_after_first(outcome, how):
        done.append(outcome["thread_id"])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            exp, tmp_path / "a", show_progress=False, hooks=Hooks(game_done=stop_after_first)
        )
    assert len(done) == 1
    finished = list((tmp_path / "a").glob("games/*/*/outcome.json"))
    assert len(finished) == 1
    hows: list[tuple[str, str]] = []
    res = run_experiment(
        exp,
        tmp_path / "a",
        show_progress=False,
        hooks=Hooks(game_done=lambda o, h: hows.append((o["thread_id"], h))),
    )
    assert res.counts["skipped"] == 1 and res.new_games == 3
    assert done[0] not in {t for t, _ in hows}  # the finished game did not run again
    whole = run_experiment(exp, tmp_path / "b", show_progress=False)
    assert whole.counts["played"] == 4
    assert records(tmp_path / "a") == records(tmp_path / "b")


def test_a_game_stopped_mid_way_resumes_from_its_checkpoint(tmp_path):
    """Stop the experiment inside a game (after its third graph step): that game resumes from
    its last checkpoint on the next run, with nothing lost or doubled."""
    exp = tiny(concurrency=1, runs=1)
    target = plan_games(exp)[1].thread_id
    steps: list[str] = []

    def node(plan, name):
        if plan.thread_id == target:
            steps.append(name)
            if len(steps) == 3:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, tmp_path / "a", show_progress=False, hooks=Hooks(node=node))
    assert target in list_runs(tmp_path / "a" / "checkpoints.sqlite")
    hows = {}
    res = run_experiment(
        exp,
        tmp_path / "a",
        show_progress=False,
        hooks=Hooks(game_done=lambda o, h: hows.update({o["thread_id"]: h})),
    )
    assert hows == {target: "resumed"} and res.counts["skipped"] == 1
    run_experiment(exp, tmp_path / "b", show_progress=False)
    assert records(tmp_path / "a") == records(tmp_path / "b")


def test_a_crashing_game_does_not_stop_the_others_and_resumes_next_time(tmp_path):
    exp = tiny(runs=1)
    target = plan_games(exp)[0].thread_id
    calls = {"n": 0}

    def node(plan, name):
        if plan.thread_id == target:
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("the endpoint went away")

    res = run_experiment(exp, tmp_path, show_progress=False, hooks=Hooks(node=node))
    assert res.counts["crashed"] == 1 and res.counts["played"] == 1
    report = res.report.read_text()
    assert "1 game(s) crashed" in report and "the endpoint went away" in report
    again = run_experiment(exp, tmp_path, show_progress=False)
    assert again.counts["resumed"] == 1 and again.counts["skipped"] == 1


def test_end_to_end_report_matches_the_games(tmp_path):
    res = run_experiment(tiny(runs=3), tmp_path, show_progress=False)
    out = tmp_path
    rows = list(csv.DictReader((out / "outcomes.csv").open()))
    assert len(rows) == 6
    assert {r["label"] for r in rows} == {"dove-dove", "hawk-hawk"}
    options = {"yes", "no", "undetermined"}
    assert all(r["answer:conflict"] in options and r["status"] == "done" for r in rows)
    report = (out / "report.md").read_text()
    for label in ("dove-dove", "hawk-hawk"):
        answers = [r["answer:conflict"] for r in rows if r["label"] == label]
        for opt in ("yes", "no"):
            cell = stats.wilson(answers.count(opt), len(answers)).text()
            assert f"| {label} | 3 |" in report and cell in report
    assert "## Comparisons" in report and "dove-dove vs hawk-hawk" in report
    for q in ("conflict", "status"):
        png = out / "figures" / f"question_{q}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert f"figures/question_{q}.png" in report
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["questions"]) == {"conflict", "status"}
    # judgements carry their evidence; quotes are lines of the game's record
    for o in res.outcomes:
        rec = json.loads((out / o["folder"] / "record.json").read_text())
        lines = {x["line"] for x in record_lines(rec)}
        for j in o["judgements"]:
            assert j["source"] == "scripted" and "evidence" in j
            assert all(q["line"] in lines for q in j["quotes"])
        assert o["seed"] == o["run"]


def test_cli_experiment(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(json.dumps({**SPEC, "model": "embedded", "runs": 5}))
    runner = CliRunner()
    args = ["experiment", str(path), "--runs", "1", "--model", "scripted"]
    args += ["--out", str(tmp_path / "o")]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "2 played" in r.output and "report:" in r.output
    assert (tmp_path / "o" / "report.md").exists()
    meta = json.loads((tmp_path / "o" / "experiment.json").read_text())
    assert meta["runs"] == 1 and meta["model"] == "scripted" and meta["judge_model"] == "scripted"
    r = runner.invoke(app, args)  # the same command again: nothing is played twice
    assert r.exit_code == 0 and "2 already finished" in r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenario: azuristan_crimsonia\nruns: -1\n")
    r = runner.invoke(app, ["experiment", str(bad)])
    assert r.exit_code == 2 and "runs" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["experiment", str(tmp_path / "none.yaml")])
    assert r.exit_code == 2 and "no such experiment file" in r.output


def test_no_langsmith_key_means_no_connection(tmp_path, monkeypatch):
    """With no LANGSMITH_API_KEY an experiment never opens a network connection."""
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    attempts: list = []
    real = socket.socket.connect

    def guard(self, address):
        attempts.append(address)
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guard)
    res = run_experiment(tiny(runs=1), tmp_path, show_progress=False)
    assert res.langsmith is None and attempts == []
    assert log_langsmith({"name": "x"}, res.outcomes) is None


def test_langsmith_parts_turn_outcomes_into_feedback(tmp_path):
    res = run_experiment(tiny(runs=1), tmp_path, show_progress=False, report=False)
    meta = json.loads((tmp_path / "experiment.json").read_text())
    examples, target, evaluator = langsmith_parts(meta, res.outcomes)
    assert len(examples) == 2 and examples[0]["inputs"]["run"] == 0
    out = target(examples[1]["inputs"])
    assert out["answers"] == res.outcomes[1]["answers"]
    feedback = {r["key"]: r for r in evaluator(out)["results"]}
    answer = res.outcomes[1]["answers"]["conflict"]
    assert feedback["conflict"]["value"] == answer
    assert feedback["conflict"]["score"] == {"yes": 1.0, "no": 0.0}.get(answer)


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_changed_measures_recompute_without_rejudging(tmp_path):
    spec = {
        "name": "wa",
        "scenario": "wwi",
        "set": {"rounds": 1},
        "model": "scripted",
        "questions": [{"id": "war", "text": "Did a general war break out?"}],
    }
    first = run_experiment(load_experiment(spec), tmp_path, show_progress=False)
    (o1,) = first.outcomes
    assert {"alliance_ami", "war_jaccard", "global_war"} <= set(o1["measures"])
    record = digest(tmp_path / o1["folder"] / "record.json")
    again = run_experiment(
        load_experiment({**spec, "measures": ["alliance_*"]}), tmp_path, show_progress=False
    )
    assert again.counts["remeasured"] == 1 and again.new_games == 0
    (o2,) = again.outcomes
    assert set(o2["measures"]) == {"alliance_ami", "alliance_nmi"}
    assert o2["judgements"] == o1["judgements"]
    assert digest(tmp_path / o1["folder"] / "record.json") == record
    report = again.report.read_text()
    assert "| condition | n | alliance_ami | alliance_nmi |" in report
    assert (tmp_path / "figures" / "board_default.png").exists()  # Family.report_figure
