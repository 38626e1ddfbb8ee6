"""The tabletop exercise with the scripted decider (seeded; plays no strategy): the seeded deck,
severity -> number of injects, the die and the early stop, team responders, the debrief, and
clear errors for bad `tabletop:` sections."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import pytest
import yaml
from langgraph.checkpoint.memory import InMemorySaver

from wargraph.graphs.tabletop.graph import (
    OUTCOME_TEXT,
    TabletopScenario,
    build,
    draw,
    roll_die,
)
from wargraph.kernel.scenario import ScenarioError, load_scenario, shipped_scenarios
from wargraph.runs.trace import read_trace

HAIWIRE = yaml.safe_load(Path(shipped_scenarios()["haiwire"]).read_text())


def haiwire(**tabletop) -> dict:
    """The shipped scenario's data with parts of its `tabletop:` section replaced."""
    data = copy.deepcopy(HAIWIRE)
    data["tabletop"].update(tabletop)
    return data


def play(data: dict, scripted, tmp_path=None, *, seed: int = 0, checkpointer=None) -> dict:
    graph = build(data).compile(checkpointer=checkpointer or InMemorySaver())
    ctx = scripted(tmp_path, seed=seed)
    return graph.invoke({"scenario": data}, {"configurable": {"thread_id": "t"}}, context=ctx)


def kinds(out: dict, kind: str) -> list[dict]:
    return [e for e in out["events"] if e["kind"] == kind]


def seed_without_success(rounds: int, die: int, success: int, start: int = 0) -> int:
    """A seed whose first `rounds` rolls all miss: the game must then deal every inject."""
    seed = start
    while any(roll_die(seed, r, die) >= success for r in range(1, rounds + 1)):
        seed += 1
    return seed


# --- the deck ------------------------------------------------------------------------------------


def test_same_seed_same_record(scripted, checkpointer):
    a = play(HAIWIRE, scripted, seed=7, checkpointer=checkpointer)
    b = play(HAIWIRE, scripted, seed=7)
    assert a["events"] == b["events"]
    assert a["world"] == b["world"]
    assert not a.get("error")


def test_draw_is_seeded_and_differs_across_seeds():
    sc = load_scenario(HAIWIRE)
    assert isinstance(sc, TabletopScenario)
    deals = {}
    for seed in range(12):
        card, injects = draw(sc, seed)
        again_card, again_injects = draw(sc, seed)
        assert (card.id, [c.id for c in injects]) == (again_card.id, [c.id for c in again_injects])
        assert len(injects) == sc.tabletop.injects_by_severity[card.severity]
        assert len({c.id for c in injects}) == len(injects)  # no card dealt twice
        deals[seed] = (card.id, tuple(c.id for c in injects))
    assert len({inc for inc, _ in deals.values()}) > 1
    assert len(set(deals.values())) > 6


def test_the_game_records_the_drawn_incident_once(scripted):
    out = play(HAIWIRE, scripted, seed=5)
    sc = load_scenario(HAIWIRE)
    card, injects = draw(sc, 5)
    incidents = kinds(out, "incident")
    assert len(incidents) == 1
    assert incidents[0]["data"]["incident"] == card.id
    assert card.title in incidents[0]["text"]
    assert incidents[0]["round"] == 0  # kept in view by every memory policy
    dealt = [e["data"]["inject"] for e in kinds(out, "inject")]
    assert dealt == [c.id for c in injects][: len(dealt)]


def test_pinned_incident_is_played():
    sc = load_scenario(HAIWIRE, ["tabletop.incident=prompt_injection"])
    for seed in range(5):
        assert draw(sc, seed)[0].id == "prompt_injection"


# --- severity, the die, the early stop -----------------------------------------------------------


@pytest.mark.parametrize(
    ("incident", "severity"),
    [("vendor_drift", 1), ("chatbot_harm", 2), ("training_data_leak", 3)],
)
def test_number_of_injects_follows_severity(scripted, incident, severity):
    data = haiwire(incident=incident, injects_by_severity={1: 1, 2: 3, 3: 5})
    expected = {1: 1, 2: 3, 3: 5}[severity]
    seed = seed_without_success(expected, die=20, success=15)
    out = play(data, scripted, seed=seed)
    assert [e["data"]["number"] for e in kinds(out, "inject")] == list(range(1, expected + 1))
    assert len(kinds(out, "roll")) == expected
    assert len(kinds(out, "narration")) == expected
    assert out["world"]["ended"] == "injects exhausted"
    assert out["done"] is True


def test_rounds_cap_the_injects(scripted):
    data = {**haiwire(incident="training_data_leak"), "rounds": 2}
    out = play(data, scripted, seed=seed_without_success(4, 20, 15))
    assert len(kinds(out, "inject")) == 2


def test_full_success_stops_play_early(scripted):
    # Every roll of a d6 is at least 1: the first response resolves a severity-3 incident.
    data = haiwire(incident="training_data_leak", die=6, success=1, partial=None)
    out = play(data, scripted, seed=3)
    assert len(kinds(out, "inject")) == 1
    (roll,) = kinds(out, "roll")
    assert roll["data"]["die"] == 6 and 1 <= roll["data"]["roll"] <= 6
    assert roll["data"]["outcome"] == "success"
    assert out["done"] is True
    assert out["world"]["resolved"] is True and out["world"]["ended"] == "resolved"
    assert len(kinds(out, "answer")) == len(HAIWIRE["questions"])  # the debrief still runs


def test_success_on_a_later_roll_stops_there(scripted):
    # Find a seed whose first roll misses and second hits: play stops after inject 2 of 4.
    seed = next(s for s in range(500) if roll_die(s, 1, 20) < 15 and roll_die(s, 2, 20) >= 15)
    out = play(haiwire(incident="prompt_injection"), scripted, seed=seed)
    rolls = [e["data"]["roll"] for e in kinds(out, "roll")]
    assert rolls == [roll_die(seed, 1, 20), roll_die(seed, 2, 20)]
    assert [e["data"]["outcome"] for e in kinds(out, "roll")][-1] == "success"
    assert len(kinds(out, "inject")) == 2


def test_partial_success_goes_on(scripted):
    # partial on 2+, success on 20: find a seed with a partial first roll.
    seed = next(s for s in range(500) if 2 <= roll_die(s, 1, 20) < 20)
    out = play(haiwire(incident="vendor_drift", partial=2, success=20), scripted, seed=seed)
    first = kinds(out, "roll")[0]
    assert first["data"]["outcome"] == "partial"
    assert len(kinds(out, "inject")) >= 2


def test_control_narrates_the_outcome_the_die_decided(scripted, tmp_path):
    out = play(haiwire(incident="chatbot_harm"), scripted, tmp_path, seed=4)
    outcomes = [e["data"]["outcome"] for e in kinds(out, "roll")]
    narrations = kinds(out, "narration")
    assert [n["data"]["outcome"] for n in narrations] == outcomes
    asks = [c for c in read_trace(tmp_path / "trace.jsonl") if c["task"] == "narrate"]
    assert len(asks) == len(outcomes)
    for call, outcome in zip(asks, outcomes, strict=True):
        prompt = call["messages"][1]["content"]
        assert OUTCOME_TEXT[outcome] in prompt
        # the roll itself is in the control's view
        assert f"The die: {roll_die(4, call['round'], 20)} on a d20" in prompt


# --- team responders -----------------------------------------------------------------------------


def two_responders() -> dict:
    """The HAIWIRE team plus a solo vendor liaison who must not see the team's deliberations."""
    data = haiwire(incident="chatbot_harm", success=20)  # a d20 hits 20 rarely: several injects
    data["players"]["vendor_liaison"] = {"persona": "The model vendor's account manager."}
    return data


def test_team_members_propose_and_the_leader_combines(scripted, tmp_path):
    seed = seed_without_success(3, 20, 20)
    out = play(two_responders(), scripted, tmp_path, seed=seed)
    assert not out.get("error")
    proposals = kinds(out, "proposal")
    members = HAIWIRE["teams"]["incident_response"]["members"]
    assert sorted({p["author"] for p in proposals}) == sorted(members)
    assert all(p["audience"] == ["incident_response"] for p in proposals)
    plans = {p["author"]: p for p in kinds(out, "plan") if p["round"] == 1}
    assert plans["incident_response"]["audience"] == ["incident_response", "control"]
    assert plans["incident_response"]["data"]["leader"] == "incident_commander"
    assert plans["vendor_liaison"]["audience"] == ["vendor_liaison", "control"]

    trace = read_trace(tmp_path / "trace.jsonl")
    combine = [c for c in trace if c["task"] == "combine" and c["round"] == 1]
    assert [c["role"] for c in combine] == ["incident_commander"]
    for p in proposals:
        if p["round"] == 1:
            assert p["text"] in combine[0]["messages"][1]["content"]


def test_proposals_reach_the_team_and_no_one_else(scripted, tmp_path):
    seed = seed_without_success(3, 20, 20)
    out = play(two_responders(), scripted, tmp_path, seed=seed)
    round1 = [e["text"] for e in kinds(out, "proposal") if e["round"] == 1]
    team_plan = next(e["text"] for e in kinds(out, "plan") if e["author"] == "incident_response")
    trace = read_trace(tmp_path / "trace.jsonl")
    assert trace, "the scripted seats record their prompts"
    team = {"data_scientist", "lawyer", "comms_lead", "incident_commander"}
    seen_by_team = False
    for call in trace:
        if call["task"] == "question":  # the debrief reads the whole record by design
            continue
        prompt = "\n".join(m["content"] for m in call["messages"])
        if call["role"] in team:
            if call["round"] >= 2 and call["task"] == "plan":
                seen_by_team |= all(t in prompt for t in round1)
        else:
            assert not any(t in prompt for t in round1), (call["role"], call["task"])
            if call["role"] == "vendor_liaison":
                assert team_plan not in prompt
    assert seen_by_team, "members see each other's earlier proposals"


# --- the debrief ---------------------------------------------------------------------------------


def test_debrief_answers_are_recorded(scripted, tmp_path):
    out = play(HAIWIRE, scripted, tmp_path, seed=11)
    answers = {e["data"]["question"]: e for e in kinds(out, "answer")}
    assert list(answers) == [q["id"] for q in HAIWIRE["questions"]]
    lawyer = answers["lawyer_consulted"]
    assert lawyer["author"] == "control"
    assert lawyer["data"]["choice"] in ("yes", "no", "undetermined")
    assert lawyer["text"].startswith("Was a lawyer consulted at any point?")
    assert answers["lesson"]["data"]["answer"]
    # The control answers from the whole record, the team's private proposals included.
    debrief = [c for c in read_trace(tmp_path / "trace.jsonl") if c["task"] == "question"]
    assert len(debrief) == len(HAIWIRE["questions"])
    proposal = kinds(out, "proposal")[0]["text"]
    assert all(proposal in c["messages"][1]["content"] for c in debrief)


# --- graph shape and bad input ---------------------------------------------------------------


def test_phases_are_named_in_the_games_language():
    nodes = set(build(HAIWIRE).compile().get_graph().nodes)
    assert {"inject", "respond", "adjudicate", "analyze"} <= nodes
    assert "agent_lawyer" in nodes and "agent_control" in nodes


def test_severity_names_are_accepted():
    data = copy.deepcopy(HAIWIRE)
    data["tabletop"]["incidents"][0]["severity"] = "High"
    assert load_scenario(data).tabletop.incidents[0].severity == 3


def bad(data: dict, *expected: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario(data)
    msg = str(err.value)
    for part in expected:
        assert part in msg, msg
    assert "Traceback" not in msg
    return msg


def test_unknown_severity_names_the_card_field():
    data = copy.deepcopy(HAIWIRE)
    data["tabletop"]["incidents"][2]["severity"] = 5
    bad(data, "tabletop.incidents.2.severity", "1 (low), 2 (medium) or 3 (high)", "5")


def test_empty_decks_name_the_deck():
    bad(haiwire(incidents=[]), "tabletop.incidents", "incident deck is empty")
    bad(haiwire(injects=[]), "tabletop.injects", "inject deck is empty")


def test_inject_deck_too_small_for_a_severity():
    data = haiwire(injects=[{"text": "one"}, {"text": "two"}])
    bad(data, "tabletop.injects", "has 2 card(s)", "needs 3")


def test_other_bad_tabletop_sections():
    bad(haiwire(success=21), "tabletop.success", "d20")
    bad(haiwire(partial=16), "tabletop.partial")
    bad(haiwire(die=1), "tabletop.die")
    bad(haiwire(incident="nope"), "tabletop.incident", "'nope'")
    bad(haiwire(injects_by_severity={1: 2, 2: 3, 4: 1}), "tabletop.injects_by_severity", "4")
    bad(haiwire(injects_by_severity={1: 2, 2: 3}), "tabletop.injects_by_severity", "severity 3")
    bad(haiwire(injects_by_severity={1: 0, 2: 3, 3: 4}), "tabletop.injects_by_severity")
    twice = haiwire(injects=[{"id": "x", "text": "a"}, {"id": "x", "text": "b"}])
    bad(twice, "tabletop.injects", "'x'")
    no_text = copy.deepcopy(HAIWIRE)
    del no_text["tabletop"]["incidents"][0]["text"]
    bad(no_text, "tabletop.incidents.0.text", "Field required")
    missing = {k: v for k, v in HAIWIRE.items() if k != "tabletop"}
    bad(missing, "tabletop", "Field required")
    solo = {**copy.deepcopy(HAIWIRE), "players": {}, "teams": {}}
    bad(solo, "players", "at least one player")
    bad({**copy.deepcopy(HAIWIRE), "injects": [{"round": 1, "text": "x"}]}, "tabletop.injects")


def test_bad_scenario_file_names_the_file_and_field(tmp_path):
    text = Path(shipped_scenarios()["haiwire"]).read_text().replace("severity: 3", "severity: 9", 1)
    path = tmp_path / "drill.yaml"
    path.write_text(text)
    msg = bad_file(path)
    assert str(path) in msg and "severity" in msg


def bad_file(path: Path) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario(str(path))
    return str(err.value)


def test_build_refuses_other_families_and_the_graph_reports_them(scripted):
    with pytest.raises(ScenarioError, match="tabletop"):
        build("azuristan_crimsonia")
    # The compiled default graph, handed a crisis scenario with seats it has: an error in the
    # state, no traceback, and nothing played.
    crisis = {"title": "C", "setting": "S", "players": {"lawyer": {}}}
    graph = build().compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "x"}}
    out = graph.invoke({"scenario": crisis}, cfg, context=scripted())
    assert "family 'tabletop'" in out["error"] and out["done"] is True
    assert not kinds(out, "plan") and not kinds(out, "incident")


def test_scenario_round_trips_through_the_game_state():
    # The kit stores the scenario as JSON (int keys become strings) and validates it again.
    sc = load_scenario(HAIWIRE)
    again = load_scenario(json.loads(json.dumps(sc.model_dump())))
    assert again == sc


def test_inline_minimal_tabletop_plays(scripted):
    data = yaml.safe_load(
        textwrap.dedent(
            """
            family: tabletop
            title: Minimal drill
            setting: A model misbehaves.
            players: {on_call: {persona: "The on-call ML engineer."}}
            tabletop:
              die: 6
              success: 6
              incidents: [{title: Drift, text: Accuracy fell overnight., severity: low}]
              injects: [{text: A customer complains.}, {text: The CEO asks why.}]
            """
        )
    )
    out = play(data, scripted, seed=seed_without_success(2, 6, 6))
    assert [e["author"] for e in kinds(out, "plan")] == ["on_call", "on_call"]
    assert kinds(out, "incident")[0]["data"]["incident"] == "i1"
    assert [e["data"]["inject"] for e in kinds(out, "inject")] in (["j1", "j2"], ["j2", "j1"])


def test_responders_are_told_how_many_injects_this_incident_has(scripted, tmp_path):
    # The scenario's `rounds` is only a cap (10); a severity-2 incident has 3 injects.
    play(haiwire(incident="chatbot_harm"), scripted, tmp_path, seed=seed_without_success(3, 20, 15))
    plans = [c for c in read_trace(tmp_path / "trace.jsonl") if c["task"] == "plan"]
    assert plans
    for call in plans:
        assert f"Move {call['round']} of 3." in call["messages"][1]["content"]


def test_every_shipped_tabletop_scenario_plays(scripted):
    names = []
    for name, path in shipped_scenarios().items():
        data = yaml.safe_load(Path(path).read_text())
        if data.get("family") != "tabletop":
            continue
        names.append(name)
        out = play(data, scripted, seed=1)
        assert not out.get("error") and out["done"] is True
        assert len(kinds(out, "incident")) == 1 and kinds(out, "inject")
        assert len(kinds(out, "answer")) == len(data.get("questions", []))
    assert {"haiwire", "agent_oncall", "incident_drill"} <= set(names)
