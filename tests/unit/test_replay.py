"""Critical state analysis: fork a stored game at a phase, replay it N times under a change, and
leave the original thread untouched (scripted decider, real SQLite checkpoints)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import wargraph.graphs.diplomacy.rules as W
from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.models.chat import ModelRefError
from wargraph.runs.replay import replay
from wargraph.runs.runner import GameError, build_for, list_runs, load_run, play
from wargraph.runs.trace import read_trace
from wargraph.store.saver import open_saver


def _thread_rows(db, thread: str) -> list[tuple]:
    """Every checkpoint of a thread, in every namespace (through the saver: any store)."""
    sc, _ = load_run(db, thread)
    rows = []
    with open_saver(db) as saver:
        for ns in ["", *(f"agent_{r}" for r in sorted(sc.roles))]:
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
            for t in saver.list(config):
                rows.append(
                    (
                        ns,
                        t.config["configurable"]["checkpoint_id"],
                        json.dumps(t.checkpoint, sort_keys=True, default=str),
                    )
                )
    return sorted(rows)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A Diplomacy game to 1902 in a SQLite store, thread `orig`."""
    tmp = tmp_path_factory.mktemp("stored")
    db = tmp / "games.sqlite"
    result = play(
        "diplomacy",
        overrides=["diplomacy.max_year=1902", "diplomacy.negotiation_rounds=1"],
        context=GameContext(model="scripted", seed=7),
        db=db,
        thread_id="orig",
        out_dir=tmp / "orig",
    )
    assert result.finished
    return db, result


def _values(db, thread: str) -> dict:
    sc, _ = load_run(db, thread)
    with open_saver(db) as saver:
        graph = build_for(sc).compile(checkpointer=saver)
        return graph.get_state({"configurable": {"thread_id": thread}}).values


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_replay_a_phase_n_times_leaves_the_original_untouched(stored, tmp_path):
    db, original = stored
    rows_before = _thread_rows(db, "orig")
    result = replay(db=db, thread_id="orig", phase="F1901M", runs=3, out_dir=tmp_path / "rep")

    assert _thread_rows(db, "orig") == rows_before  # not one checkpoint added or changed
    assert _values(db, "orig")["events"] == original.values["events"]
    assert result.source["as_node"] == "adjudicate"

    # The fork: the state before F1901M's negotiate, copied into three new threads.
    runs = result.runs
    assert len(runs) == 3 and len({r["thread_id"] for r in runs}) == 3
    assert {r["thread_id"] for r in runs} <= set(list_runs(db))
    assert [r["seed"] for r in runs] == [8, 9, 10]  # the stored seed + run number
    fork_events = [
        e for e in original.values["events"] if e["round"] <= 2 and e["phase"] == "setup"
    ]
    start_phase = {
        e["round"]: e["data"]["phase"]
        for e in original.values["events"]
        if "records" in e.get("data", {})
    }
    first_round = next(r for r, p in start_phase.items() if p == "F1901M")
    before_fork = [e for e in original.values["events"] if e["round"] < first_round]
    assert fork_events and all(e in before_fork for e in fork_events)
    for r in runs:
        values = _values(db, r["thread_id"])
        assert values["events"][: len(before_fork)] == before_fork
        assert W.phase_info(values["world"]["diplomacy"]).name == "S1902M"
        assert r["outcome"]["phases"][0] == "F1901M" and r["memories_copied"] == 7
    # Different seeds: the runs differ from each other (a distribution, not one game thrice).
    orders = [json.dumps(r["outcome"]["orders"]["F1901M"], sort_keys=True) for r in runs]
    assert len(set(orders)) > 1

    # The original's own outcome of that phase, for comparison.
    played = next(
        e
        for e in original.values["events"]
        if e.get("data", {}).get("phase") == "F1901M" and "records" in e["data"]
    )
    assert result.original["orders"]["F1901M"] == played["data"]["orders"]

    # The distribution: every order of every run is counted once per unit.
    summary = result.summary
    assert summary["runs"] == 3
    for power, units in summary["orders"].items():
        for unit, counts in units.items():
            assert sum(counts.values()) == 3, (power, unit)
    assert set(summary["centres"]) == set(W.POWERS)
    for p, c in summary["centres"].items():
        got = [r["outcome"]["centres"][p] for r in runs]
        assert c["mean"] == pytest.approx(sum(got) / 3) and c["min"] == min(got)
    assert summary["relationships"]  # diary entries of the replayed phase, shifts vs the fork

    # Each seat's private memory came along (memories_copied above). Diplomacy prompts show no
    # private notes (they repeated the view's diary, talks and results): the first replayed
    # prompt holds the seat's S1901M orders through its view, as the original game had them.
    s1901 = next(
        e
        for e in original.values["events"]
        if e.get("data", {}).get("phase") == "S1901M" and "records" in e["data"]
    )
    first = next(
        c for c in read_trace(tmp_path / "rep" / "run_1" / "trace.jsonl") if c["role"] == "FRANCE"
    )
    prompt = first["messages"][-1]["content"]
    assert "Your private notes from earlier" not in prompt
    assert all(o in prompt for o in s1901["data"]["orders"]["FRANCE"])

    report = json.loads((tmp_path / "rep" / "replay.json").read_text())
    assert len(report["runs"]) == 3 and report["summary"]["runs"] == 3
    assert (tmp_path / "rep" / "run_2" / "record.json").exists()
    # the replayed phases' maps, drawn for the report (never during the replayed play)
    maps = sorted(p.stem for p in (tmp_path / "rep" / "run_2" / "maps").glob("*.svg"))
    run_2 = json.loads((tmp_path / "rep" / "run_2" / "record.json").read_text())
    names = [p["name"] for p in run_2["world"]["diplomacy"]["phases"]]
    assert maps == sorted(names[names.index("F1901M") :]) and "S1901M" not in maps


def test_replay_under_a_change_for_one_power(stored, tmp_path):
    db, _ = stored
    result = replay(
        db=db,
        thread_id="orig",
        phase="S1902M",
        runs=1,
        overrides=[
            "players.FRANCE.prompt_variant=v2",
            "diplomacy.instructions.FRANCE=Persuade England by reciprocity.",
        ],
        out_dir=tmp_path / "rep",
    )
    calls = read_trace(tmp_path / "rep" / "run_1" / "trace.jsonl")
    systems = {c["role"]: c["messages"][0]["content"] for c in calls}
    assert "ruthless" in systems["FRANCE"] and "ruthless" not in systems["ITALY"]
    for c in calls:  # the guidance is data in France's talks, diary and order prompts only
        if c["task"] != "digest":
            assert ("reciprocity" in json.dumps(c["messages"])) == (c["role"] == "FRANCE")
    assert result.change["overrides"][0] == "players.FRANCE.prompt_variant=v2"
    # The stored game keeps its own scenario; the replay thread stores the changed one.
    assert load_run(db, "orig")[0].players["FRANCE"].prompt_variant is None
    changed, _ = load_run(db, result.runs[0]["thread_id"])
    assert changed.players["FRANCE"].prompt_variant == "v2"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"thread_id": "nobody", "phase": "F1901M"}, "no game with thread id"),
        ({"thread_id": "orig", "phase": "autumn"}, "expected an engine phase"),
        ({"thread_id": "orig", "phase": "F1950M"}, "this game has: S1901M, F1901M"),
        ({"thread_id": "orig", "phase": "F1901M", "runs": 0}, "at least 1"),
        ({"thread_id": "orig", "phase": "F1901M", "overrides": ["teams.x.leader=FRANCE"]}, ""),
    ],
)
def test_bad_replays_get_clear_errors(stored, kwargs, message):
    db, _ = stored
    with pytest.raises((GameError, ValueError)) as err:
        replay(db=db, **kwargs)
    assert message in str(err.value)


def test_bad_model_and_missing_db(stored, tmp_path):
    db, _ = stored
    with pytest.raises(ModelRefError):
        replay(db=db, thread_id="orig", phase="F1901M", runs=1, model="nonsense:x")
    with pytest.raises(GameError, match="no such checkpoint database"):
        replay(db=tmp_path / "none.sqlite", thread_id="orig", phase="F1901M")


def test_replay_is_generic_over_families(store_db):
    """The crisis game forks at the start of a round (no family hooks needed), on both stores:
    the fork goes through the saver's API only."""
    db = store_db
    original = play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=2),
        db=db,
        thread_id="crisis",
    )
    rows = _thread_rows(db, "crisis")
    result = replay(db=db, thread_id="crisis", phase="2", runs=2)
    assert _thread_rows(db, "crisis") == rows
    for r in result.runs:
        kinds = {e["kind"] for e in r["outcome"]["events"]}
        assert {"plan", "narration"} <= kinds
        assert r["memories_copied"] == len(original.values["spec"]["players"]) + 1
    theirs = {
        e["text"] for e in original.values["events"] if e["round"] == 2 and e["kind"] == "plan"
    }
    ours = {e["text"] for r in result.runs for e in r["outcome"]["events"] if e["kind"] == "plan"}
    assert ours and not ours & theirs  # other seeds, other plans
    with pytest.raises(GameError, match="round number"):
        replay(db=db, thread_id="crisis", phase="F1901M")


def test_cli_replay(stored, tmp_path):
    db, _ = stored
    out = tmp_path / "cli"
    res = CliRunner().invoke(
        app,
        [
            "replay",
            "--db",
            str(db),
            "--thread",
            "orig",
            "--phase",
            "F1902M",
            "--runs",
            "1",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "centres after the replayed phase" in res.output
    assert (out / "replay.md").exists()
    res = CliRunner().invoke(
        app, ["replay", "--db", str(db), "--thread", "orig", "--phase", "X", "--runs", "1"]
    )
    assert res.exit_code == 2 and "expected an engine phase" in res.output
