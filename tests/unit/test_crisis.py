"""The crisis game and the kernel under it, played with the scripted decider (deterministic)."""

from __future__ import annotations

import pytest
from langgraph.types import Command

import wargraph.graphs.crisis.graph as crisis
from wargraph.kernel.context import GameContext
from wargraph.kernel.graphkit import WrongSeats
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.trace import read_trace

CANARY = "CANARY-7f3a-AZURE-ONLY"


def scenario_with_secret():
    sc = load_scenario("azuristan_crimsonia", [f"players.azuristan.secrets=['{CANARY}']"])
    return sc


def play(graph, cfg, ctx, sc):
    return graph.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)


def test_crisis_plays_rounds_with_plans_narrations_and_answers(checkpointer, scripted, tmp_path):
    sc = load_scenario("azuristan_crimsonia")
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    out = play(g, {"configurable": {"thread_id": "a"}}, scripted(tmp_path), sc)
    kinds = [(e["round"], e["kind"]) for e in out["events"]]
    assert kinds.count((1, "plan")) == 2 and kinds.count((2, "plan")) == 2
    assert (1, "narration") in kinds and (2, "narration") in kinds and (2, "inject") in kinds
    answers = [e for e in out["events"] if e["kind"] == "answer"]
    assert len(answers) == len(sc.questions)
    assert answers[0]["data"]["choice"] in ("yes", "no", "undetermined")
    assert out["done"] is True
    # plans are private to their author and the control
    for e in out["events"]:
        if e["kind"] == "plan":
            assert e["audience"] == [e["author"], "control"]


def test_same_seed_same_record_other_seed_differs(scripted):
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario("azuristan_crimsonia")

    def run(seed, tid):
        g = crisis.build(sc).compile(checkpointer=InMemorySaver())
        return play(g, {"configurable": {"thread_id": tid}}, scripted(seed=seed), sc)["events"]

    assert run(1, "x") == run(1, "y")
    assert run(1, "x") != run(2, "x")


def test_canary_secret_never_reaches_another_role(checkpointer, scripted, tmp_path):
    sc = scenario_with_secret()
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    play(g, {"configurable": {"thread_id": "c"}}, scripted(tmp_path), sc)
    prompts = read_trace(tmp_path / "trace.jsonl")
    assert prompts, "the trace records every prompt"
    seen_by = {p["role"] for p in prompts if CANARY in json_text(p)}
    # the control sees the whole record only after the game (analysis), never during play
    during_play = {p["role"] for p in prompts if CANARY in json_text(p) and p["node"] != "analyze"}
    assert seen_by >= {"azuristan"}
    assert during_play == {"azuristan"}
    # and azuristan's plans never reach crimsonia
    plans = [p for p in prompts if p["role"] == "crimsonia"]
    assert plans and all("azuristan plan" not in json_text(p) for p in plans)


def json_text(entry):
    return "\n".join(m["content"] for m in entry.get("messages", []))


def test_scenario_text_is_never_in_a_system_message(scripted, tmp_path, checkpointer):
    sc = scenario_with_secret()
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    play(g, {"configurable": {"thread_id": "s"}}, scripted(tmp_path), sc)
    for p in read_trace(tmp_path / "trace.jsonl"):
        system = p["messages"][0]
        assert system["role"] == "system"
        assert "Zafaristan" not in system["content"] and CANARY not in system["content"]
        assert "Azuristan" not in system["content"]


def test_agent_memory_lives_in_its_own_namespace(checkpointer, scripted):
    sc = load_scenario("azuristan_crimsonia")
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    play(g, {"configurable": {"thread_id": "m"}}, scripted(), sc)
    mem = {
        role: g.get_state(
            {"configurable": {"thread_id": "m", "checkpoint_ns": f"agent_{role}"}}
        ).values.get("memory", [])
        for role in ("azuristan", "crimsonia")
    }
    assert [m["round"] for m in mem["azuristan"]] == [1, 2]  # persisted across rounds
    assert all("azuristan" in m["text"] for m in mem["azuristan"])
    assert all("azuristan" not in m["text"] for m in mem["crimsonia"])


def test_two_human_seats_wait_in_parallel_and_resume_by_id(checkpointer):
    sc = load_scenario("azuristan_crimsonia", ["rounds=1", "questions=[]"])
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "h"}}
    ctx = GameContext(model="scripted", humans=["azuristan", "crimsonia"])
    g.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
    waiting = g.get_state(cfg).interrupts
    seats = {i.value["seat"]: i for i in waiting}
    assert set(seats) == {"azuristan", "crimsonia"}
    assert "Zafaristan" in seats["azuristan"].value["view"]
    assert seats["azuristan"].value["schema"]["properties"]["plan"]["type"] == "string"
    # an invalid answer for one seat: it stays open with the error; the other seat is done
    g.invoke(
        Command(resume={seats["azuristan"].id: {"wrong": 1}, seats["crimsonia"].id: "We talk."}),
        cfg,
        context=ctx,
    )
    waiting = g.get_state(cfg).interrupts
    assert [i.value["seat"] for i in waiting] == ["azuristan"]
    assert "did not match" in waiting[0].value["error"]
    g.invoke(Command(resume={waiting[0].id: {"plan": "We hold."}}), cfg, context=ctx)
    state = g.get_state(cfg)
    assert not state.interrupts and state.values["done"]
    plans = {e["author"]: e["text"] for e in state.values["events"] if e["kind"] == "plan"}
    assert plans == {"azuristan": "We hold.", "crimsonia": "We talk."}


def test_control_review_lets_a_person_edit_the_narrative(checkpointer):
    sc = load_scenario("azuristan_crimsonia", ["rounds=1", "questions=[]", "control.review=true"])
    g = crisis.build(sc).compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "r"}}
    ctx = GameContext(model="scripted")
    g.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
    (review,) = g.get_state(cfg).interrupts
    assert review.value["task"] == "review" and "narrative" in review.value["draft"]
    g.invoke(
        Command(resume={review.id: {"accept": False, "text": "EDITED BY UMPIRE"}}), cfg, context=ctx
    )
    events = g.get_state(cfg).values["events"]
    narration = [e for e in events if e["kind"] == "narration"][0]
    assert narration["text"] == "EDITED BY UMPIRE" and narration["data"]["source"] == "reviewed"


def test_teams_members_propose_leaders_combine_nested_and_shared(scripted, tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario(
        "strait_standoff",
        [
            "rounds=1",
            "questions=[]",
            "teams.alliance={members: [sela_cabinet, brenn_office], leader: sela_president}",
            "teams.brenn_office={members: [brenn_aide], leader: brenn}",
            "players.brenn_aide={persona: aide}",
            "teams.contact_group.leader=ostmark_admiral",
        ],
    )
    g = crisis.build(sc).compile(checkpointer=InMemorySaver())
    out = play(g, {"configurable": {"thread_id": "t"}}, scripted(tmp_path), sc)
    ev = out["events"]
    proposals = [
        (e["author"], e["data"]["team"])
        for e in ev
        if e["kind"] == "proposal" and "team" in e.get("data", {})
    ]
    # sela_diplomat sits on two teams and proposes for each
    assert ("sela_diplomat", "sela_cabinet") in proposals and (
        "sela_diplomat",
        "contact_group",
    ) in proposals
    order = [e["author"] for e in ev if e["phase"] == "order" and e["author"] in sc.teams]
    assert set(order) == set(sc.teams)
    calls = read_trace(tmp_path / "trace.jsonl")
    combine = [c["ask_id"] for c in calls if c["task"] == "combine"]
    # inner teams combine before the team that holds them
    assert combine.index("r1.order.combine.sela_president.alliance") > combine.index(
        "r1.order.combine.sela_president.sela_cabinet"
    )
    # a member's proposal is seen by its team, not by the other side
    ost_prompts = [
        json_text(c) for c in calls if c["role"] == "ostmark_admiral" and c["task"] == "combine"
    ]
    cabinet = [
        e["text"]
        for e in ev
        if e["kind"] == "proposal" and e.get("data", {}).get("team") == "sela_cabinet"
    ]
    assert all(t not in p for t in cabinet for p in ost_prompts)
    assert "alliance" in sc.actors and "sela_cabinet" not in sc.actors


def test_bad_inline_scenario_in_graph_input_is_a_clear_error():
    g = crisis.builder.compile()
    out = g.invoke({"scenario": {"title": "x"}}, context=GameContext(model="scripted"))
    assert "setting" in out["error"] and out["done"]
    # a graph built for other seats raises (a LangGraph user expects an exception), naming both
    other = load_scenario("summit").model_dump()
    with pytest.raises(
        WrongSeats, match=r"built for the seats \['azuristan'.*graphs\.<family>\.build"
    ):
        g.invoke({"scenario": other}, context=GameContext(model="scripted"))
