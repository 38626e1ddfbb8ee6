"""A crisis game with two human seats, driven through langgraph-sdk against a real `langgraph dev`.

The umpire (control) is played by the scripted decider: deterministic, seeded, no strategy."""

from __future__ import annotations

import importlib.util

import pytest

from tests.server.support import sdk
from wargraph.server import FAMILIES

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

HUMANS = ["azuristan", "crimsonia"]
CTX = {"model": "scripted", "humans": HUMANS, "seed": 7}


def _pending(client, thread_id: str) -> dict[str, dict]:
    state = client.threads.get_state(thread_id)
    return {i["value"]["seat"]: i for i in state["interrupts"]}


def _system_assistant(client, graph_id: str) -> dict:
    found = client.assistants.search(graph_id=graph_id, metadata={"created_by": "system"})
    assert found, f"no assistant for graph {graph_id}"
    return found[0]


def test_every_importable_graph_is_served_with_studio_schemas(server):
    client = sdk(server)
    served = {a["graph_id"] for a in client.assistants.search(limit=50)}
    importable = {f for f in FAMILIES if importlib.util.find_spec(f"wargraph.graphs.{f}.graph")}
    assert "crisis" in importable
    assert importable <= served, f"graphs that import but are not served: {importable - served}"
    for family in sorted(importable):
        assistant = _system_assistant(client, family)
        schemas = client.assistants.get_schemas(assistant["assistant_id"])
        context = schemas["context_schema"]["properties"]
        assert {"model", "role_models", "seed", "humans"} <= set(context), family
        assert {"scenario", "overrides"} <= set(schemas["input_schema"]["properties"]), family
        drawn = client.assistants.get_graph(assistant["assistant_id"], xray=True)
        ids = {n["id"] for n in drawn["nodes"]}
        assert "setup" in ids, family
        assert any(i.startswith("agent_") for i in ids), family


def test_two_human_seats_interrupts_resume_history_and_replay(server):
    client = sdk(server)
    thread_id = client.threads.create()["thread_id"]

    out = client.runs.wait(
        thread_id, "crisis", input={"scenario": "azuristan_crimsonia"}, context=CTX
    )
    assert "__interrupt__" in out, out
    pending = _pending(client, thread_id)
    assert set(pending) == set(HUMANS)
    for seat, item in pending.items():
        payload = item["value"]
        assert {"seat", "ask_id", "question", "view", "schema", "error"} <= set(payload)
        assert payload["ask_id"] == f"r1.order.plan.{seat}"
        assert set(payload["schema"]["properties"]) == {"plan"}
        assert payload["error"] == ""
        other = next(h for h in HUMANS if h != seat)
        assert f"You are {seat}." in payload["view"]
        assert f"You are {other}." not in payload["view"], "a seat's view shows another's brief"

    # Both people answer; one command resumes both interrupts by id.
    round1 = {"azuristan": "AZ-R1: open talks at the border", "crimsonia": "CR-R1: send aid"}
    client.runs.wait(
        thread_id,
        "crisis",
        command={"resume": {pending[s]["id"]: {"plan": p} for s, p in round1.items()}},
        context=CTX,
    )
    values = client.threads.get_state(thread_id)["values"]
    assert values["round"] == 2
    plans = {e["author"]: e for e in values["events"] if e["kind"] == "plan" and e["round"] == 1}
    for seat, text in round1.items():
        assert plans[seat]["text"] == text
        assert plans[seat]["audience"] == [seat, "control"]
        assert plans[seat]["data"]["source"] == "human"
    assert any(e["kind"] == "narration" and e["round"] == 1 for e in values["events"])

    # Round 2: one person answers first (a partial resume); the other's question stays open.
    pending = _pending(client, thread_id)
    assert {p["value"]["ask_id"] for p in pending.values()} == {
        "r2.order.plan.azuristan",
        "r2.order.plan.crimsonia",
    }
    client.runs.wait(
        thread_id,
        "crisis",
        command={"resume": {pending["azuristan"]["id"]: {"plan": "AZ-R2: hold"}}},
        context=CTX,
    )
    still = _pending(client, thread_id)
    assert set(still) == {"crimsonia"}
    assert still["crimsonia"]["id"] == pending["crimsonia"]["id"]
    client.runs.wait(
        thread_id,
        "crisis",
        command={"resume": {still["crimsonia"]["id"]: {"plan": "CR-R2: talk"}}},
        context=CTX,
    )
    final = client.threads.get_state(thread_id)
    assert final["values"]["done"] is True
    assert final["interrupts"] == []
    assert any(e["kind"] == "answer" for e in final["values"]["events"]), "no debrief answers"
    finished_id = final["checkpoint"]["checkpoint_id"]

    # History, then time travel: replay round 2 from the checkpoint where it began.
    history = client.threads.get_history(thread_id, limit=500)
    assert len(history) > 10
    assert history[0]["checkpoint"]["checkpoint_id"] == finished_id
    starts = [
        h
        for h in history
        if h["values"].get("round") == 2
        and h["next"] == ["inject"]
        and not h["tasks"][0].get("interrupts")
    ]
    assert starts, "no checkpoint at the start of round 2"
    fork_at = starts[-1]["checkpoint"]["checkpoint_id"]
    out = client.runs.wait(thread_id, "crisis", input=None, checkpoint_id=fork_at, context=CTX)
    assert "__interrupt__" in out
    forked = client.threads.get_state(thread_id)
    assert {i["value"]["ask_id"] for i in forked["interrupts"]} == {
        "r2.order.plan.azuristan",
        "r2.order.plan.crimsonia",
    }
    texts = [e["text"] for e in forked["values"]["events"]]
    assert "AZ-R2: hold" not in texts, "the replayed branch carries the old branch's round 2"
    assert round1["azuristan"] in texts, "the replayed branch lost round 1"
    pending = {i["value"]["seat"]: i["id"] for i in forked["interrupts"]}
    client.runs.wait(
        thread_id,
        "crisis",
        command={
            "resume": {
                pending["azuristan"]: {"plan": "AZ-R2-ALT: mobilise"},
                pending["crimsonia"]: {"plan": "CR-R2-ALT: withdraw"},
            }
        },
        context=CTX,
    )
    alt = client.threads.get_state(thread_id)["values"]
    assert alt["done"] is True
    alt_texts = [e["text"] for e in alt["events"]]
    assert "AZ-R2-ALT: mobilise" in alt_texts and "AZ-R2: hold" not in alt_texts
    # Nothing lost: the first ending is still in the thread's history.
    after = client.threads.get_history(thread_id, limit=1000)
    assert finished_id in {h["checkpoint"]["checkpoint_id"] for h in after}


def test_assistant_selects_another_scenario_through_the_graph_factory(server):
    client = sdk(server)
    assistant = client.assistants.create(
        "crisis", config={"configurable": {"scenario": "strait_standoff"}}, name="strait"
    )
    drawn = client.assistants.get_graph(assistant["assistant_id"])
    seats = {n["id"] for n in drawn["nodes"] if n["id"].startswith("agent_")}
    assert "agent_sela_president" in seats and "agent_azuristan" not in seats
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(
        thread_id,
        assistant["assistant_id"],
        input={"scenario": "strait_standoff"},
        context={"model": "scripted"},
    )
    state = client.threads.get_state(thread_id)  # read through the same (factory-built) graph
    assert state["values"]["done"] is True and not state["values"].get("error")
    assert {"sela_cabinet", "sela_defence"} <= {e["author"] for e in state["values"]["events"]}


def test_unknown_scenario_in_config_is_a_clear_422(server):
    from langgraph_sdk.errors import UnprocessableEntityError

    client = sdk(server)
    assistant = client.assistants.create(
        "crisis", config={"configurable": {"scenario": "no_such_scenario"}}
    )
    with pytest.raises(UnprocessableEntityError) as err:
        client.assistants.get_graph(assistant["assistant_id"])
    assert "no_such_scenario" in str(err.value)
    assert "no shipped or registered scenario" in str(err.value)


def test_bad_input_scenario_ends_the_run_with_the_reason(server):
    client = sdk(server)
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(
        thread_id,
        "crisis",
        input={"scenario": {"title": "no setting"}},
        context={"model": "scripted"},
    )
    assert out["done"] is True
    assert "setting" in out["error"]
