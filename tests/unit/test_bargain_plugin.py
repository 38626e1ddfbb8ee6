"""A three-party alternating-offers bargaining game as a plug-in (tests/plugins/bargain): `order`
mounted twice (the round's proposer proposes, the others respond under their own answer task),
the secretary's verdict naming the offer played, templates from the plug-in's own package, and
its measures in an experiment's outcomes and report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import wargraph.kernel.families as families
from tests.plugins import bargain
from wargraph.evals.experiment import load_experiment, run_experiment
from wargraph.evals.judge import family_measures
from wargraph.kernel.context import GameContext
from wargraph.kernel.families import Family, FamilyError
from wargraph.prompts import PromptError, family_prompts, load_prompt, render_prompt
from wargraph.runs.runner import play
from wargraph.seats.deciders import INTERRUPT_VERSION

SCENARIO = str(Path(bargain.__file__).with_name("three_way.yaml"))


@pytest.fixture
def plugin(monkeypatch, entry_points):
    entry_points(bargain="tests.plugins.bargain:FAMILY")
    yield
    monkeypatch.undo()
    families.refresh()


def game(tmp_path: Path, seed: int = 0, **overrides: Any):
    return play(
        SCENARIO,
        overrides=dict(overrides),
        context=GameContext(model="scripted", seed=seed),
        db=None,
        out_dir=tmp_path / f"g{seed}",
    )


def of_kind(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in record["events"] if e["kind"] in kind.split("|")]


def test_a_phase_mounted_twice_keeps_the_first_mounts_proposal(plugin, tmp_path):
    record = game(tmp_path).record
    assert record["done"] and not record.get("error")
    results = of_kind(record, "deal|refused")
    assert results, "every round resolves"
    for r in results:
        offers = [e for e in of_kind(record, "offer") if e["round"] == r["round"]]
        replies = [e for e in of_kind(record, "reply") if e["round"] == r["round"]]
        proposer = ["ann", "bob", "cat"][(r["round"] - 1) % 3]
        # the proposer alone proposed (in `propose`), the other two replied (in `respond`)
        assert {e["author"] for e in offers} == {proposer}
        assert {e["author"] for e in replies} == {"ann", "bob", "cat"} - {proposer}
        assert {e["phase"] for e in offers} == {"propose"}
        assert {e["phase"] for e in replies} == {"respond"}
        # and adjudicate saw the proposer's split next to the replies
        assert sum(r["data"]["split"].values()) in (90, 45, 22)
    # the round's mounts are emptied for the next round
    assert record["world"]["proposals"] == {}


def test_each_mount_of_order_asks_with_its_own_parts_task(plugin, tmp_path):
    # `propose` asks with task "offer", `respond` with "reply" (the default task is "plan")
    assert bargain.BARGAIN.orders_at("respond").task == "reply"
    record = game(tmp_path, seed=1).record
    assert record["done"] and of_kind(record, "reply") and of_kind(record, "offer")
    asked = (tmp_path / "g1" / "trace.jsonl").read_text()
    assert ".respond.reply." in asked and ".propose.offer." in asked and ".plan." not in asked


def test_the_verdict_hook_is_given_the_offer_played(plugin, tmp_path):
    seen = 0
    for seed in range(3):
        record = game(tmp_path, seed=seed).record
        pie = 90
        for verdict in of_kind(record, "verdict"):
            result = next(
                e for e in of_kind(record, "deal|refused") if e["round"] == verdict["round"]
            )
            played = verdict["data"]["played"]
            assert played == result["data"]["split"]  # what adjudicate played
            assert sum(played.values()) == pie  # accepted as offered, or the even split
            seen += verdict["data"]["status"] == "even"  # the give-up's split, not the offer
            pie = result["data"]["pie"]
    assert seen, "a scripted offer that does not add up is replaced by the even split"


def test_a_plugins_templates_come_from_its_own_package_first(plugin):
    own = load_prompt("bargain_offer", family="bargain")
    assert "propose how to split a pie" in own
    # its own `player_system` overrides wargraph's for its games, and only for them
    mine = render_prompt("player_system", family="bargain")
    assert "three-way bargaining" in mine
    assert "three-way bargaining" not in render_prompt("player_system")
    with family_prompts("bargain"):  # what a running phase of the family sees
        assert render_prompt("player_system") == mine
        assert "pie of 7" in render_prompt("bargain_offer", pie=7)
    # a template found nowhere names every place looked in
    with pytest.raises(PromptError, match=r"no prompt template 'nope' in tests\.plugins"):
        load_prompt("nope", "v2", family="bargain")
    with pytest.raises(PromptError, match="no prompt template 'bargain_offer'"):
        load_prompt("bargain_offer")  # wargraph's own folder does not have it


def test_a_missing_prompts_package_is_a_clear_error(monkeypatch, entry_points):
    entry_points(ghost="tests.unit.test_bargain_plugin:GHOST")
    try:
        why = families.problems()["ghost"]
        assert why.endswith("its prompts package 'no_such_prompts_pkg' cannot be found"), why
        with pytest.raises(FamilyError, match="no_such_prompts_pkg"):
            families.get("ghost")
    finally:
        monkeypatch.undo()
        families.refresh()


GHOST = Family(
    "ghost",
    "wargraph.kernel.scenario:Scenario",
    "wargraph.graphs.crisis.graph",
    prompts="no_such_prompts_pkg",
)


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_the_plugins_measures_reach_an_experiment_report(plugin, tmp_path):
    exp = load_experiment(
        {
            "name": "bargain",
            "scenario": SCENARIO,
            "runs": 2,
            "model": "scripted",
            "concurrency": 1,
            "questions": [{"id": "deal", "text": "Did the sides agree?"}],
        }
    )
    result = run_experiment(exp, tmp_path / "exp", show_progress=False)
    assert result.counts["played"] == 2
    for o in result.outcomes:
        assert o["measures_note"] == ""
        assert set(o["measures"]) >= {"offers", "agreed"}
        record = json.loads((tmp_path / "exp" / o["folder"] / "record.json").read_text())
        assert o["measures"]["offers"] == len(of_kind(record, "offer"))
    report = (tmp_path / "exp" / "report.md").read_text()
    assert "offers" in report and "agreed" in report


def test_blottos_measures_reach_the_outcome(tmp_path):
    result = play(
        "blotto",
        context=GameContext(model="scripted"),
        db=None,
        out_dir=tmp_path / "b",
        overrides={"rounds": 1},
    )
    measures, note = family_measures(result.record, tmp_path / "b" / "record.json")
    assert note == "" and measures["rounds"] == 1
    assert any(k.startswith("scores.") for k in measures)


def test_a_misspelled_measures_reference_is_named(monkeypatch, entry_points, tmp_path):
    entry_points(typo="tests.unit.test_bargain_plugin:TYPO")
    try:
        record = {"scenario": {"family": "typo"}, "events": []}
        measures, note = family_measures(record, tmp_path / "record.json")
        assert measures == {}
        assert "family 'typo': its measures 'tests.plugins.bargain:record_measure'" in note
        with pytest.raises(FamilyError, match="record_measure"):
            families.attribute("typo", "measures")
    finally:
        monkeypatch.undo()
        families.refresh()


TYPO = Family(
    "typo",
    "wargraph.kernel.scenario:Scenario",
    "wargraph.graphs.crisis.graph",
    measures="tests.plugins.bargain:record_measure",
)


def test_a_persons_interrupt_payload_carries_its_version(plugin, tmp_path):
    waiting = play(
        SCENARIO,
        context=GameContext(model="scripted", humans=["ann"]),
        db=None,
        out_dir=tmp_path / "h",
    )
    payload = waiting.interrupts[0]["value"]
    assert payload["version"] == INTERRUPT_VERSION == 1
    assert payload["seat"] == "ann" and payload["phase"] == "propose" and payload["task"] == "offer"
    assert set(payload) == {
        "version", "seat", "ask_id", "round", "phase", "task", "instructions", "view", "memory",
        "question", "schema", "error",
    }  # fmt: skip


def test_wargraph_graph_draws_each_seat_as_one_node_unless_asked_for_xray():
    from typer.testing import CliRunner

    from wargraph.cli import app

    plain = CliRunner().invoke(app, ["graph", "azuristan_crimsonia"])
    assert plain.exit_code == 0 and "agent_azuristan --> order;" in plain.output
    assert "decide" not in plain.output  # collapsed, as README draws it
    xray = CliRunner().invoke(app, ["graph", "azuristan_crimsonia", "--xray"])
    assert xray.exit_code == 0 and "agent_azuristan\\3adecide" in xray.output


def test_a_family_reference_not_of_the_form_module_function_is_reported(monkeypatch, entry_points):
    entry_points(nocolon="tests.unit.test_bargain_plugin:NO_COLON")
    try:
        assert (
            "measures 'tests.plugins.bargain' is not of the form module:function"
            in (families.problems()["nocolon"])
        )
    finally:
        monkeypatch.undo()
        families.refresh()


NO_COLON = Family(
    "nocolon",
    "wargraph.kernel.scenario:Scenario",
    "wargraph.graphs.crisis.graph",
    measures="tests.plugins.bargain",
)


def test_a_missing_template_during_play_is_one_line(plugin, monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from wargraph.cli import app

    monkeypatch.setattr(bargain, "render_prompt", lambda name, *a, **k: load_prompt(name + "_x"))
    out = CliRunner().invoke(
        app, ["play", SCENARIO, "--model", "scripted", "--db", str(tmp_path / "g.sqlite")]
    )
    assert out.exit_code != 0 and "Traceback" not in out.output, out.output
    assert "no prompt template 'bargain_offer_x' in tests.plugins.bargain.prompts/v1" in out.output


def test_a_secretary_mounted_twice_does_not_repeat_its_verdicts(plugin):
    from langgraph.checkpoint.memory import InMemorySaver

    from wargraph.kernel.scenario import load_scenario
    from wargraph.runs.runner import thread_config

    sc = load_scenario(SCENARIO)
    values = (
        bargain.build(sc, check_replies=True)
        .compile(checkpointer=InMemorySaver())
        .invoke(
            {"scenario": sc.model_dump()}, thread_config("t"), context=GameContext(model="scripted")
        )
    )
    assert values["done"] and not values.get("error")
    verdicts = [e for e in values["events"] if e["kind"] == "verdict"]
    rounds = [e["round"] for e in values["events"] if e["kind"] in ("deal", "refused")]
    assert sorted(e["round"] for e in verdicts) == rounds  # one verdict per offer, not two
    assert {e["phase"] for e in verdicts} == {"secretary_validate"}
