"""The flow composer: a game that exists nowhere else, built from library phases only."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import wargraph.graphs.flow.graph as flow
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.runs.trace import read_trace


def test_summit_negotiate_summarize_adjudicate_plays(scripted, tmp_path):
    sc = load_scenario("summit")
    g = flow.build(sc).compile(checkpointer=InMemorySaver())
    out = g.invoke(
        {"scenario": sc.model_dump()},
        {"configurable": {"thread_id": "f"}},
        context=scripted(tmp_path),
    )
    phases = [e["phase"] for e in out["events"] if e["round"] == 1]
    assert "negotiate" in phases and "summarize" in phases, phases
    assert phases.index("summarize") > phases.index("negotiate")
    assert [e["kind"] for e in out["events"]].count("summary") == 2 * len(sc.players)
    assert [e["kind"] for e in out["events"]].count("narration") == 2
    for e in out["events"]:
        if e["kind"] == "message" and e["audience"] != ["*"]:
            assert e["author"] in e["audience"] and len(e["audience"]) == 2
        if e["kind"] == "summary":
            assert e["audience"] == [e["author"]]
    # the diary replaces its slot in the agent's private memory instead of piling up
    mem = g.get_state({"configurable": {"thread_id": "f", "checkpoint_ns": "agent_karvia"}}).values[
        "memory"
    ]
    assert sum(1 for m in mem if m["id"] == "diary") == 1
    # graph nodes are exactly the declared phases plus seats
    nodes = set(g.get_graph().nodes)
    assert {"negotiate", "summarize", "adjudicate", "analyze", "agent_karvia"} <= nodes
    assert "order" not in nodes
    calls = read_trace(tmp_path / "trace.jsonl")
    assert {c["task"] for c in calls} >= {"message", "diary", "adjudicate"}


def test_private_message_reaches_only_its_recipient(scripted, tmp_path):
    sc = load_scenario("summit", ["rounds=2"])
    g = flow.build(sc).compile(checkpointer=InMemorySaver())
    out = g.invoke(
        {"scenario": sc.model_dump()},
        {"configurable": {"thread_id": "p"}},
        context=scripted(tmp_path),
    )
    private = [
        e
        for e in out["events"]
        if e["kind"] == "message" and e["audience"] != ["*"] and e["round"] == 1
    ]
    assert private, "the scripted decider sends some private messages with this seed"
    calls = read_trace(tmp_path / "trace.jsonl")
    for msg in private:
        outsiders = set(sc.players) - set(msg["audience"])
        for c in calls:
            if c["role"] in outsiders and c["round"] == 2:
                assert msg["text"] not in c["messages"][1]["content"]


def test_unknown_phase_in_flow_is_a_scenario_error():
    with pytest.raises(ScenarioError, match="flow.phases: unknown phase"):
        flow.build(load_scenario("summit", ["flow.phases=[negotiate, dance]"]))
