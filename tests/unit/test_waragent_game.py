"""Whole WarAgent games on the scripted decider and on scripted "people" (human seats answered
by a function): the record, the secretary loop, variants, stopping and information asymmetry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wargraph.evals.waragent import eval_waragent
from wargraph.graphs.waragent.graph import WarAgentScenario, build
from wargraph.graphs.waragent.rules import Situation, apply_round, new_world, validate
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

WAIT = {"actions": [{"type": "wait", "target": "none", "message": ""}]}
N = len(load_scenario("wwi").players)  # countries at the 1914 table


def run(tmp_path: Path, overrides=(), seed: int = 0, humans=(), human_io=None, name="out"):
    ctx = GameContext(model="scripted", seed=seed, humans=list(humans))
    return play(
        "wwi",
        overrides=list(overrides),
        context=ctx,
        db=None,
        out_dir=tmp_path / name,
        human_io=human_io,
    )


def replay_checks(world: Situation) -> int:
    """Replay the history from the start: every applied set passed the rules on the actor's own
    beliefs at that moment, and the replay rebuilds each recorded true board. Returns the
    number of applied actions."""
    w = new_world(world.countries, world.history[0].board)
    count = 0
    for log in world.history[1:]:
        for actor, actions in log.actions.items():
            verdict = validate(actor, actions, w.beliefs[actor], w.countries)
            assert verdict.ok, f"round {log.round} {actor}: {verdict.text(actions)}"
            count += len(actions)
        w = apply_round(w, log.actions, _visibility())
        assert w.true.state_key() == log.board.state_key(), f"round {log.round}"
    return count


def _visibility():
    return load_scenario("wwi").waragent.visibility_map()


# --- a whole game -------------------------------------------------------------------------------


def test_whole_wwi_game_on_the_scripted_decider(tmp_path):
    # (its speed is measured in benchmarks/, not asserted here)
    result = run(tmp_path, seed=3)
    assert result.finished and not result.values.get("error")
    world = Situation.model_validate(result.values["world"]["waragent"])
    assert world.round == 6 and [h.round for h in world.history] == list(range(7))
    # The board evolves: it changes from round to round and ends far from empty.
    keys = [h.board.state_key() for h in world.history]
    assert len(set(keys)) >= 4
    assert world.true.edges("war") and world.true.mobilized
    assert replay_checks(world) >= 6 * N  # at least one action per country per round
    # The secretary loop ran: scripted first drafts are often invalid and come back revised.
    verdicts = [e for e in result.record["events"] if e["kind"] == "verdict"]
    assert len(verdicts) == 6 * N
    assert any(v["data"]["revisions"] > 0 for v in verdicts)
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert {t["task"] for t in trace} == {"act", "revise"}
    # The record scores against history.
    scores = eval_waragent([tmp_path / "out"], tmp_path / "eval")
    run_scores = scores["runs"][0]
    assert 0.0 <= run_scores["mobilization_jaccard"] <= 1.0
    assert run_scores["rounds"] == 6


def test_same_seed_same_record_other_seed_other_game(tmp_path):
    # three of the six rounds: the games part by round 2 (the whole game is played above)
    a = run(tmp_path, ["rounds=3"], seed=5, name="a").record
    b = run(tmp_path, ["rounds=3"], seed=5, name="b").record
    c = run(tmp_path, ["rounds=3"], seed=6, name="c").record
    assert a["events"] == b["events"] and a["world"] == b["world"]
    assert a["world"]["waragent"]["true"] != c["world"]["waragent"]["true"]


@pytest.mark.parametrize("name", ["wwii", "warring_states"])
def test_the_other_scenarios_play(tmp_path, name):
    result = play(
        name,
        overrides=["rounds=2"],
        context=GameContext(model="scripted"),
        db=None,
        out_dir=tmp_path / name,
    )
    assert result.finished and not result.values.get("error")
    world = Situation.model_validate(result.values["world"]["waragent"])
    assert world.round == 2 and replay_checks(world) > 0
    assert eval_waragent([tmp_path / name], tmp_path / "eval")["runs"][0]["rounds"] == 2


# --- the secretary --------------------------------------------------------------------------------


def test_amend_after_the_revision_limit(tmp_path):
    # No revisions allowed: invalid first drafts are amended at once, and the game moves on.
    result = run(tmp_path, ["rounds=2", "waragent.secretary.max_revisions=0"], seed=1)
    verdicts = [e for e in result.record["events"] if e["kind"] == "verdict"]
    amended = [v for v in verdicts if v["data"]["status"] == "amended"]
    assert amended and all(v["data"]["revisions"] == 0 for v in verdicts)
    assert all("amended" in v["text"] for v in amended)
    assert not any(t["task"] == "revise" for t in read_trace(tmp_path / "out" / "trace.jsonl"))
    world = Situation.model_validate(result.values["world"]["waragent"])
    # Amended sets pass every per-action rule (an unmet alliance obligation is waived).
    w = new_world(world.countries, world.history[0].board)
    for log in world.history[1:]:
        for actor, actions in log.actions.items():
            assert not any(validate(actor, actions, w.beliefs[actor], w.countries).action_reasons)
        w = apply_round(w, log.actions, _visibility())


def test_a_person_as_secretary_rejects_and_countries_revise(tmp_path):
    seen: list[dict[str, Any]] = []

    def people(payload: dict[str, Any]) -> Any:
        seen.append(payload)
        if payload["task"] == "review":
            return {"valid": False, "reason": "not in the spirit of the age"}
        return WAIT

    # The countries are people too and always propose a valid "wait", so only the secretary
    # rejects: each country is reviewed, revises once, is reviewed again, and is amended.
    overrides = ["rounds=1", "waragent.secretary.kind=human", "waragent.secretary.max_revisions=1"]
    countries = list(load_scenario("wwi").players)
    result = run(tmp_path, overrides, humans=countries, human_io=people)
    assert result.finished
    reviews = [p for p in seen if p["task"] == "review"]
    assert {p["seat"] for p in reviews} == {"secretary"}
    assert len(reviews) == 2 * N
    verdicts = [e for e in result.record["events"] if e["kind"] == "verdict"]
    assert all(v["data"]["status"] == "amended" for v in verdicts)
    # (A person's seat is traced again when the graph resumes it: one prompt per ask id.)
    revise_prompts = {
        t["ask_id"]: t["messages"][-1]["content"]
        for t in read_trace(tmp_path / "out" / "trace.jsonl")
        if t["task"] == "revise"
    }.values()
    assert len(revise_prompts) == N
    assert all(
        "> - the secretary objects: not in the spirit of the age" in p for p in revise_prompts
    )


# --- stopping -------------------------------------------------------------------------------------


def test_stops_when_the_board_stands_still(tmp_path):
    countries = list(load_scenario("wwi").players)
    result = run(
        tmp_path,
        ["rounds=10", "waragent.stop_unchanged=2"],
        humans=countries,
        human_io=lambda payload: WAIT,
    )
    assert result.finished
    world = result.values["world"]
    assert world["waragent"]["round"] == 2
    assert "unchanged for 2 rounds" in world["stopped"]
    assert result.record["events"][-1]["kind"] == "narration"


# --- variants through --set ------------------------------------------------------------------------


def _prompts(tmp_path: Path, role: str, name="out") -> list[str]:
    return [
        "\n".join(m["content"] for m in t["messages"])
        for t in read_trace(tmp_path / name / "trace.jsonl")
        if t["role"] == role
    ]


def test_settings_triggers_and_profile_overrides(tmp_path):
    overrides = [
        "rounds=1",
        "waragent.setting=aggressive",
        "players.Serbia.persona=conservative",
        "waragent.trigger=strait_clash",
        "waragent.military_scale.Russia=0.3333333333333333",
    ]
    run(tmp_path, overrides)
    russia = _prompts(tmp_path, "Russia")[0]
    serbia = _prompts(tmp_path, "Serbia")[0]
    assert "bold and assertive" in russia and "which rival you can weaken" in russia
    assert "cautious" in serbia and "avoid a war you do not need" in serbia
    assert "Coastal batteries" in russia and "Sarajevo" not in russia
    assert "a third of their historical size" in russia
    assert "a third of" not in serbia  # the override is Russia's own profile


def test_memory_policy_semi_markovian_and_full(tmp_path):
    def prompt_at_round_3(name: str, overrides: list[str]) -> str:
        run(tmp_path, ["rounds=3", *overrides], seed=2, name=name)
        (prompt,) = [
            "\n".join(m["content"] for m in t["messages"])
            for t in read_trace(tmp_path / name / "trace.jsonl")
            if t["role"] == "Britain" and t["round"] == 3 and t["task"] == "act"
        ]
        return prompt

    short = prompt_at_round_3("semi", [])
    full = prompt_at_round_3("full", ["memory=full"])
    assert "[round 1, " not in short and "[round 2, " in short
    assert "[round 1, " in full and "[round 2, " in full
    # Both keep the trigger and the board and stick.
    assert "Sarajevo" in short and "Your relations:" in short


def test_anonymised_game_and_report_in_real_names(tmp_path):
    result = run(tmp_path, ["rounds=2", "waragent.anonymise=true"], seed=4)
    spec = result.record["scenario"]
    assert list(spec["players"])[0].startswith("Country ")
    prompts = "\n".join(_prompts(tmp_path, "Country P"))
    assert prompts and "Russia" not in prompts and "Sarajevo" not in prompts
    assert "Corvina" in prompts
    scores = eval_waragent([tmp_path / "out"], tmp_path / "eval")
    assert scores["runs"][0]["rounds"] == 2
    # The figures carry the real names again (checked via the world the eval loads).
    from wargraph.evals.waragent import load_run

    assert "Russia" in load_run(tmp_path / "out")["world"].countries


# --- information asymmetry ---------------------------------------------------------------------------


def test_canary_in_a_private_action_reaches_only_its_target(tmp_path):
    canary = "CANARY-7f3a-secret-route"
    secret = "CANARY-brief-only-serbia"

    def serbia(payload: dict[str, Any]) -> Any:
        if payload["round"] == 1 and payload["task"] == "act":
            return {
                "actions": [
                    {"type": "send_message", "target": "Russia", "message": f"Our plan: {canary}"},
                    {"type": "request_alliance", "target": "Russia", "message": canary},
                ]
            }
        return WAIT

    run(
        tmp_path,
        ["rounds=3", f"players.Serbia.secrets=[{secret}]"],
        seed=1,
        humans=["Serbia"],
        human_io=serbia,
    )
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert len({t["role"] for t in trace}) == N
    reached = {t["role"] for t in trace if canary in json.dumps(t["messages"])}
    assert reached == {"Serbia", "Russia"}  # Serbia sees its own action; Russia is the target
    with_secret = {t["role"] for t in trace if secret in json.dumps(t["messages"])}
    assert with_secret == {"Serbia"}
    # In the record, both private actions are addressed to Serbia and Russia alone.
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    private = [e for e in record["events"] if canary in e["text"]]
    assert len(private) == 2
    assert all(set(e["audience"]) == {"Serbia", "Russia"} for e in private)


# --- the graph -----------------------------------------------------------------------------------------


def test_graph_shape_and_wrong_family():
    g = build("wwi").compile()
    nodes = set(g.get_graph(xray=False).nodes)
    assert {
        "setup",
        "order",
        "secretary_validate",
        "adjudicate",
        "agent_Serbia",
        "agent_secretary",
    } <= nodes
    with pytest.raises(ScenarioError, match="waragent"):
        build("haiwire")
    assert isinstance(load_scenario("wwi"), WarAgentScenario)


def test_a_model_secretary_reviews_after_the_rules(tmp_path):
    # The secretary as a (here scripted) model: asked only about sets the rules passed; its
    # objections send the country back, and what reaches the board still passes the rules.
    result = run(tmp_path, ["rounds=2", "waragent.secretary.kind=ai"], seed=2)
    assert result.finished and not result.values.get("error")
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    reviews = [t for t in trace if t["task"] == "review"]
    assert reviews and {t["role"] for t in reviews} == {"secretary"}
    assert all("The leader of" in t["messages"][-1]["content"] for t in reviews)
    world = Situation.model_validate(result.values["world"]["waragent"])
    w = new_world(world.countries, world.history[0].board)
    for log in world.history[1:]:
        for actor, actions in log.actions.items():
            assert not any(validate(actor, actions, w.beliefs[actor], w.countries).action_reasons)
        w = apply_round(w, log.actions, _visibility())


def test_a_paused_game_resumes_without_loss_or_doubling(tmp_path):
    from wargraph.runs.runner import resume

    ctx = GameContext(model="scripted", seed=9, humans=["Serbia"])
    db = tmp_path / "g.sqlite"
    paused = play("wwi", overrides=["rounds=2"], context=ctx, db=db, out_dir=tmp_path / "p")
    assert not paused.finished and paused.interrupts  # Serbia's seat waits for a person
    done = resume(
        db=db, thread_id=paused.thread_id, out_dir=tmp_path / "p", human_io=lambda payload: WAIT
    )
    straight = play(
        "wwi",
        overrides=["rounds=2"],
        context=ctx,
        db=None,
        out_dir=tmp_path / "s",
        human_io=lambda payload: WAIT,
    )
    assert done.finished
    ids = [e["id"] for e in done.record["events"]]
    assert len(ids) == len(set(ids))
    assert done.record["events"] == straight.record["events"]
    assert done.record["world"] == straight.record["world"]
