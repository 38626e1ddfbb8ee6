"""Many games at once in one process (`wargraph.runs.batch.play_many`) with the scripted decider:
each game its own thread id, checkpoints and records; one game's failure stays its own; a bad
scenario fails before any game starts; Ctrl-C stops the rest; the per-endpoint call limit."""

from __future__ import annotations

import json

import pytest

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError
from wargraph.models.chat import (
    ModelRefError,
    endpoint_concurrency,
    endpoint_limit,
    parse_model_ref,
    set_endpoint_concurrency,
)
from wargraph.runs.batch import GameSpec, play_many
from wargraph.runs.runner import list_runs, resume
from wargraph.store.lease import lease

SHORT = {"rounds": 1, "questions": []}


def scripted_games(n: int, **spec) -> list[GameSpec]:
    return [
        GameSpec("azuristan_crimsonia", SHORT, GameContext(model="scripted", seed=seed), **spec)
        for seed in range(n)
    ]


def test_games_in_flight_each_keep_their_own_thread_store_entry_and_records(tmp_path):
    db = tmp_path / "c.sqlite"
    runs = play_many(scripted_games(6), db=db, out=tmp_path / "games", concurrency=3)
    assert [r.status for r in runs] == ["finished"] * 6
    ids = [r.thread_id for r in runs]
    assert len(set(ids)) == 6 and set(list_runs(db)) == set(ids)
    for r in runs:
        assert r.out_dir == tmp_path / "games" / r.thread_id
        record = json.loads((r.out_dir / "record.json").read_text())
        assert record["thread_id"] == r.thread_id and record["done"]
        assert r.wall_s > 0 and r.error == ""


def test_a_game_another_process_holds_is_that_games_error_and_the_others_finish(tmp_path):
    db = tmp_path / "c.sqlite"
    games = scripted_games(3)
    games[1].thread_id = "held-elsewhere"
    with lease(db, "held-elsewhere", command="another run"):
        runs = play_many(games, db=db, out=tmp_path / "games", concurrency=3)
    assert [r.status for r in runs] == ["finished", "error", "finished"]
    assert runs[1].thread_id == "held-elsewhere"
    assert "GameHeld" in runs[1].error and "another run" in runs[1].error
    assert "held-elsewhere" not in list_runs(db)  # refused before anything was written


def test_a_bad_scenario_fails_before_any_game_starts(tmp_path):
    db = tmp_path / "c.sqlite"
    games = [*scripted_games(2), GameSpec("azuristan_crimsonia", {"rounds": "many"})]
    with pytest.raises(ScenarioError):
        play_many(games, db=db, concurrency=2)
    assert list_runs(db) == []


def test_concurrency_below_one_is_refused(tmp_path):
    with pytest.raises(ValueError, match="concurrency 0"):
        play_many(scripted_games(1), db=None, concurrency=0)


def test_ctrl_c_stops_games_in_flight_after_their_step_and_they_resume(tmp_path):
    db = tmp_path / "c.sqlite"
    ended = []

    def interrupt(run):
        ended.append(run)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        play_many(
            scripted_games(12), db=db, out=tmp_path / "games", concurrency=2, on_done=interrupt
        )
    assert len(ended) == 1 and ended[0].finished
    started = set(list_runs(db))
    assert ended[0].thread_id in started and len(started) < 12  # the rest never started
    for thread_id in started - {ended[0].thread_id}:
        result = resume(db=db, thread_id=thread_id)
        assert result.finished  # stopped after a step, saved, resumable


def test_the_endpoint_limit_follows_the_setting_then_the_environment(monkeypatch):
    ref = parse_model_ref("openai:m@http://127.0.0.1:9/v1")
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "3")
    try:
        set_endpoint_concurrency(None)
        assert endpoint_concurrency() == 3 and endpoint_limit(ref)._initial_value == 3
        assert set_endpoint_concurrency(7) is None
        assert endpoint_concurrency() == 7 and endpoint_limit(ref)._initial_value == 7
        # a batch's own limit holds while it runs, then the setting before it is back
        play_many(scripted_games(1), db=None, endpoint_concurrency=2)
        assert endpoint_concurrency() == 7 and endpoint_limit(ref)._initial_value == 7
        assert endpoint_limit(parse_model_ref("embedded"))._initial_value == 1
        with pytest.raises(ModelRefError, match="expected a whole number"):
            set_endpoint_concurrency(0)
        set_endpoint_concurrency(None)
        monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "lots")
        with pytest.raises(ModelRefError, match="WARGRAPH_ENDPOINT_CONCURRENCY='lots'"):
            endpoint_limit(ref)
    finally:
        set_endpoint_concurrency(None)


def test_experiment_command_takes_games_at_once_and_calls_per_endpoint(tmp_path):
    from typer.testing import CliRunner

    from wargraph.cli import app

    spec = tmp_path / "e.yaml"
    spec.write_text(
        json.dumps(
            {"scenario": "azuristan_crimsonia", "set": SHORT, "runs": 3, "model": "scripted"}
        )
    )
    out = tmp_path / "o"
    args = ["experiment", str(spec), "--out", str(out), "--concurrency", "3"]
    try:
        r = CliRunner().invoke(app, [*args, "--endpoint-concurrency", "5"])
        assert r.exit_code == 0, r.output
        said = " ".join(r.output.split())  # the console wraps lines
        assert "3 at a time" in said and "at most 5 calls at once per endpoint" in said
        assert endpoint_concurrency() == 5
        assert json.loads((out / "experiment.json").read_text())["concurrency"] == 3
    finally:
        set_endpoint_concurrency(None)
    r = CliRunner().invoke(app, [*args[:-1], "65"])
    assert r.exit_code == 2 and "Traceback" not in r.output
