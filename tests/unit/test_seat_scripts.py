"""A seat's script (`--script SEAT=FILE`, a role's `script:`, `GameContext(scripts=...)`): the
seat plays its exact answers, then the seeded scripted decider, and the trace says which."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from wargraph import GameContext
from wargraph.cli import app
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.runs.runner import play
from wargraph.seats.script import ScriptError, check_script, load_script

runner = CliRunner()
EAST = {"west": 0, "centre": 0, "east": 10}
WEST = {"west": 10, "centre": 0, "east": 0}


def _allocations(record, side="north"):
    return [
        e["text"] for e in record["events"] if e["kind"] == "allocation" and e["author"] == side
    ]


def _trace(out):
    return [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]


def test_a_script_by_task_plays_its_answers_in_order_then_the_seed(tmp_path):
    ctx = GameContext(model="scripted", seed=0, scripts={"north": {"allocate": [EAST, WEST]}})
    record = play("blotto", context=ctx, db=None, out_dir=tmp_path).record
    said = _allocations(record)
    assert said[:2] == [
        "Allocation: west 0, centre 0, east 10",
        "Allocation: west 10, centre 0, east 0",
    ]
    plain = play("blotto", context=GameContext(model="scripted", seed=0), db=None).record
    assert said[2] == _allocations(plain)[2]  # run out: the seeded scripted answer
    assert _allocations(record, "south") == _allocations(plain, "south")  # other seats as before
    north = [t for t in _trace(tmp_path) if t["role"] == "north" and t["task"] == "allocate"]
    assert [t["event"] for t in north] == ["script", "script", "script-ended"]
    assert "no answer for allocate" in north[2]["note"] and "seeded" in north[2]["note"]


def test_a_list_script_answers_every_question_in_the_order_asked(tmp_path):
    # round 1 asks north: its messages, its diary (one value for a one-field schema), its move
    script = [{"messages": [{"to": "south", "text": "Hold."}]}, "My notes.", EAST]
    ctx = GameContext(model="scripted", seed=0, scripts={"north": script})
    record = play("blotto", context=ctx, db=None, out_dir=tmp_path).record
    assert _allocations(record)[0] == "Allocation: west 0, centre 0, east 10"
    said = [(e["kind"], e["text"]) for e in record["events"] if e["author"] == "north"][:2]
    assert said == [("message", "Hold."), ("summary", "My notes.")]
    north = [t for t in _trace(tmp_path) if t["role"] == "north"]
    assert [t["event"] for t in north[:4]] == ["script", "script", "script", "script-ended"]


def test_a_scenario_role_names_its_script(tmp_path):
    sc = load_scenario(
        "blotto", ['players.north.script={"allocate": [{"west": 0, "centre": 0, "east": 10}]}']
    )
    assert sc.role("north").script == {"allocate": [EAST]}
    record = play(sc, context=GameContext(model="scripted", seed=0), db=None).record
    assert _allocations(record)[0] == "Allocation: west 0, centre 0, east 10"
    # a role without a script is stored as before scripts existed
    assert "script" not in record["scenario"]["players"]["south"]


def test_an_answer_the_schema_refuses_stops_the_game_with_one_line():
    ctx = GameContext(model="scripted", seed=0, scripts={"north": {"allocate": [{"west": "x"}]}})
    with pytest.raises(ScriptError) as err:
        play("blotto", context=ctx, db=None)
    text = str(err.value)
    assert "\n" not in text and "north" in text and "allocate" in text and "answer 1" in text


def test_a_one_value_answer_to_a_question_of_many_fields_is_refused():
    ctx = GameContext(model="scripted", seed=0, scripts={"north": {"allocate": [7]}})
    with pytest.raises(ScriptError, match="one value but the answer has the fields"):
        play("blotto", context=ctx, db=None)


def test_malformed_scripts_are_one_line_errors(tmp_path):
    with pytest.raises(ScriptError, match="list of answers or a mapping"):
        check_script("yes", "x")
    with pytest.raises(ScriptError, match="answer 2 is a list"):
        check_script(["yes", ["no"]], "x")
    with pytest.raises(ScriptError, match="no script file"):
        load_script(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- [unclosed\n")
    with pytest.raises(ScriptError, match="not valid YAML/JSON"):
        load_script(bad)
    with pytest.raises(ScenarioError):
        load_scenario("blotto", ["players.north.script=7"])


def test_the_cli_plays_a_seats_script_file(tmp_path):
    script = tmp_path / "north.yaml"
    script.write_text(yaml.safe_dump({"allocate": [EAST]}))
    out = tmp_path / "out"
    args = ["play", "blotto", "--model", "scripted", "--db", str(tmp_path / "g.sqlite")]
    r = runner.invoke(app, [*args, "--out", str(out), "--script", f"north={script}"])
    assert r.exit_code == 0, r.output
    record = json.loads((out / "record.json").read_text())
    assert _allocations(record)[0] == "Allocation: west 0, centre 0, east 10"

    r = runner.invoke(app, [*args, "--script", f"north={tmp_path / 'none.yaml'}"])
    assert r.exit_code != 0 and "--script north: no script file" in r.output
    r = runner.invoke(app, [*args, "--script", "north"])
    assert r.exit_code != 0 and "expected SEAT=FILE" in r.output
    r = runner.invoke(app, [*args, "--script", f"nobody={script}"])
    assert r.exit_code != 0 and "'nobody': no such role" in r.output


def test_a_persons_seat_stays_a_person_whatever_its_script():
    from wargraph.kernel.table import Table

    sc = load_scenario("blotto", ["players.south.kind=human"])
    ctx = GameContext(
        model="scripted", humans=["north"], scripts={"north": [EAST], "south": [WEST]}
    )
    table = Table(sc, ctx, {"round": 1})
    assert table.seat("north")["kind"] == "human" and "script" not in table.seat("north")
    assert table.seat("south")["kind"] == "human" and "script" not in table.seat("south")
    plain = Table(sc, GameContext(model="embedded", scripts={"north": [EAST]}), {"round": 1})
    assert plain.seat("north")["kind"] == "scripted" and plain.seat("north")["script"] == [EAST]
