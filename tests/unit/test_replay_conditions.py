"""Every condition a replay sets takes effect from the fork on, or is refused naming it (issue
29, item 4); `--compare` replays baseline and change with the same seeds and tables the
difference. Scripted decider, real SQLite checkpoints, real engines; prompts read from traces."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.replay import replay
from wargraph.runs.replay_compare import compare
from wargraph.runs.runner import GameError, play
from wargraph.runs.trace import read_trace

# family -> (scenario, overrides, the seat changed, where to fork, the persona set)
GAMES = {
    "crisis": ("azuristan_crimsonia", ["rounds=3"], "azuristan", "2", "ZEBRA relentless hawk"),
    "waragent": ("wwi", ["rounds=3"], "France", "2", "aggressive"),
    "diplomacy": (
        "diplomacy",
        ["diplomacy.max_year=1902", "diplomacy.negotiation_rounds=1", "diplomacy.maps=none"],
        "FRANCE",
        "F1901M",
        "ZEBRA relentless hawk",
    ),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One scripted game per family in one SQLite store, each with its trace."""
    tmp = tmp_path_factory.mktemp("conditions")
    db = tmp / "games.sqlite"
    for family, (scenario, overrides, *_rest) in GAMES.items():
        result = play(
            scenario,
            overrides=overrides,
            context=GameContext(model="scripted", seed=7, trace_path=str(tmp / f"{family}.jsonl")),
            db=db,
            thread_id=family,
        )
        assert result.finished
    return tmp, db


def _text(call: dict) -> str:
    return json.dumps(call["messages"], ensure_ascii=False)


@pytest.mark.parametrize("family", list(GAMES))
def test_a_persona_change_reaches_every_replayed_prompt_of_its_seat(stored, tmp_path, family):
    tmp, db = stored
    _scenario, _overrides, seat, phase, persona = GAMES[family]
    result = replay(
        db=db,
        thread_id=family,
        phase=phase,
        runs=2,
        phases=2,
        overrides=[f"players.{seat}.persona={persona}"],
        out_dir=tmp_path / "rep",
    )
    assert result.change["rewritten"] == [f"r0.setup.brief.scenario.{seat}"]
    before = read_trace(tmp / f"{family}.jsonl")
    assert before and not any(persona in _text(c) for c in before)  # none before the fork
    for k in (1, 2):
        calls = read_trace(tmp_path / "rep" / f"run_{k}" / "trace.jsonl")
        mine = [c for c in calls if c.get("role") == seat]
        assert mine, [c.get("role") for c in calls]
        missing = [c["ask_id"] for c in mine if persona not in _text(c)]
        assert not missing, missing
        # the brief is the seat's own: no other seat reads it
        others = [c["ask_id"] for c in calls if c.get("role") != seat and persona in _text(c)]
        assert not others, others
    record = json.loads((tmp_path / "rep" / "run_1" / "record.json").read_text())
    brief = next(e for e in record["events"] if e["id"] == f"r0.setup.brief.scenario.{seat}")
    assert persona in brief["text"] and brief["data"]["changed_at_fork"]["phase"] == phase


def test_a_profile_section_and_a_model_change_take_effect(stored, tmp_path):
    """WarAgent: a profile section rewrites the country's profile from the fork on; a seat's
    model set by the change wins over the stored run's model for that seat."""
    _tmp, db = stored
    result = replay(
        db=db,
        thread_id="waragent",
        phase="2",
        runs=1,
        overrides=["players.France.profile.key_policy=ZEBRA policy of the fork"],
        out_dir=tmp_path / "rep",
    )
    assert "r0.setup.profile.scenario.France" in result.change["rewritten"]
    calls = read_trace(tmp_path / "rep" / "run_1" / "trace.jsonl")
    france = [c for c in calls if c.get("role") == "France"]
    assert france and all("ZEBRA policy of the fork" in _text(c) for c in france)


@pytest.mark.parametrize(
    "family, overrides, message",
    [
        ("crisis", ["players.azuristan.persona=dove"], "already has this value"),
        ("crisis", ["injects=[{round: 1, text: A storm.}]"], "inject of round 1, already played"),
        ("diplomacy", ["diplomacy.game_id=another"], "changes the game's opening position"),
        ("crisis", ["players.nobody.persona=x"], "no player 'nobody'"),
    ],
)
def test_a_change_that_cannot_apply_is_refused_naming_it(stored, family, overrides, message):
    _tmp, db = stored
    phase = GAMES[family][3]
    with pytest.raises(Exception) as err:
        replay(db=db, thread_id=family, phase=phase, runs=1, overrides=overrides)
    assert message in str(err.value)
    key = overrides[0].split("=")[0]
    assert key in str(err.value)


def test_a_default_model_no_seat_plays_is_refused(tmp_path):
    db = tmp_path / "g.sqlite"
    roles = {"azuristan": "scripted", "crimsonia": "scripted", "control": "scripted"}
    play(
        "azuristan_crimsonia",
        context=GameContext(model="scripted", role_models=roles),
        db=db,
        thread_id="own",
    )
    with pytest.raises(GameError, match="--model embedded: no seat of this game plays"):
        replay(db=db, thread_id="own", phase="2", runs=1, model="embedded")


def test_compare_pairs_runs_by_seed_and_tables_the_difference(stored, tmp_path):
    _tmp, db = stored
    out = tmp_path / "cmp"
    result = compare(
        db=db,
        thread_id="diplomacy",
        phase="F1901M",
        runs=2,
        overrides=["players.FRANCE.persona=ZEBRA"],
        out_dir=out,
    )
    assert [r["seed"] for r in result.baseline.runs] == [r["seed"] for r in result.change.runs]
    names = {r.measure for r in result.rows}
    assert {"centres.FRANCE", "game.scores.FRANCE"} <= names
    for r in result.rows:
        assert r.n == 2 and r.lo is not None and r.lo <= r.difference <= r.hi
    assert (out / "compare.md").read_text().count("| measure |") == 1
    assert (out / "compare.csv").read_text().startswith("measure,baseline,change,difference")
    with pytest.raises(GameError, match="needs a change"):
        compare(db=db, thread_id="diplomacy", phase="F1901M", runs=1, out_dir=out)


def test_cli_replay_compare(stored, tmp_path):
    _tmp, db = stored
    out = tmp_path / "cli"
    args = ["replay", "--db", str(db), "--thread", "crisis", "--phase", "2", "--runs", "2"]
    args += ["--set", "players.azuristan.persona=hawk", "--compare", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "Critical state analysis of crisis at 2" in res.output
    assert "compare.md" in res.output and (out / "compare.csv").exists()
    assert (out / "baseline" / "replay.json").exists() and (out / "change" / "replay.json").exists()
    res = CliRunner().invoke(app, args[:9] + ["--set", "players.azuristan.persona=dove"])
    assert res.exit_code == 2 and "already has this value" in res.output


def test_a_seats_model_set_by_the_change_wins_over_the_stored_role_model(tmp_path):
    """The stored game gave azuristan its own model (`--role-model`); the change gives it
    another: every replayed call of azuristan goes to the changed model, the other seat's not."""
    from tests.reliability._support import FakeEndpoint

    db = tmp_path / "g.sqlite"
    play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", role_models={"azuristan": "scripted"}),
        db=db,
        thread_id="models",
    )
    endpoint = FakeEndpoint(reply="We hold the line.").start()
    try:
        ref = f"openai:fake@{endpoint.url}"
        replay(
            db=db,
            thread_id="models",
            phase="2",
            runs=1,
            overrides=[f"players.azuristan.model={ref}"],
            out_dir=tmp_path / "rep",
        )
    finally:
        endpoint.stop()
    calls = read_trace(tmp_path / "rep" / "run_1" / "trace.jsonl")
    mine = [c for c in calls if c.get("role") == "azuristan" and c.get("event") == "call"]
    assert mine and all(c["model"] == ref for c in mine)
    assert not [c for c in calls if c.get("role") != "azuristan" and c.get("model") == ref]
    assert endpoint.requests
