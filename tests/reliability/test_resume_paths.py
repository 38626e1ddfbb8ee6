"""The other ways a game is stopped and continued in one process: a breakpoint before every
agent step (as LangGraph Studio sets them), and a seat whose decider fails once and is retried
by the seat's RetryPolicy. Each must give the record of an uninterrupted run (breakpoints on
both stores, SQLite and PostgreSQL), and the seat's memory must stay in its own namespace.

Regressions: LangGraph continues a `checkpointer=True` subgraph from its last checkpoint whenever
the parent resumes, ignoring a plain input; an agent seat that had not started its asks handed
back the previous step's answers, and every game looped forever at breakpoints (src/wargraph/seats/agents.py
now always enters the seat through a Command to `begin`). A retry of the parent's seat node
called the seat's subgraph a second time from one task, which LangGraph stores under another
namespace (`agent_<role>|1`): the retried step vanished from the seat's memory (the retry now
runs inside the seat, on `decide`)."""

from __future__ import annotations

import pytest

from tests.reliability._support import Family, family_params
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import build_for
from wargraph.seats.scripted import ScriptedDecider
from wargraph.store.saver import open_saver

SEED = 4


def reference(family: Family, scenario: str) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario(scenario, list(family.overrides) or None)
    graph = build_for(sc).compile(checkpointer=InMemorySaver())
    return graph.invoke(
        {"scenario": sc.model_dump()},
        {"configurable": {"thread_id": "ref"}, "recursion_limit": 10_000},
        context=GameContext(model="scripted", seed=SEED),
    )


@pytest.mark.parametrize("family", family_params())
def test_breakpoints_before_every_agent_step(family, store_db):
    scenario = family.require()
    expected = reference(family, scenario)
    sc = load_scenario(scenario, list(family.overrides) or None)
    builder = build_for(sc)
    agents = [n for n in builder.nodes if n.startswith("agent_")]
    with open_saver(store_db) as saver:
        graph = builder.compile(checkpointer=saver, interrupt_before=agents)
        cfg = {"configurable": {"thread_id": "bp"}, "recursion_limit": 10_000}
        ctx = GameContext(model="scripted", seed=SEED)
        graph.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
        stops = 0
        # bounded: a game that re-asks forever (stale answers) fails here, not by hanging
        while graph.get_state(cfg).next and stops < 400:
            graph.invoke(None, cfg, context=ctx)
            stops += 1
        values = graph.get_state(cfg).values
    assert stops > 1, "the breakpoints were never hit"
    assert values.get("done") is True, f"the game did not finish after {stops} breakpoints"
    assert values["events"] == expected["events"]
    assert values["world"] == expected["world"]


@pytest.mark.parametrize("family", family_params())
def test_a_seat_that_fails_once_is_retried_to_the_same_record(family, tmp_path, monkeypatch):
    scenario = family.require()
    expected = reference(family, scenario)
    failed: list[str] = []
    decide = ScriptedDecider.decide

    def flaky(self, ask, schema, *, memory=""):
        # the first ask of round 2 fails once, as a model call or a dropped connection would
        if ask["round"] == 2 and not failed:
            failed.extend([ask["id"], ask["role"]])
            raise ConnectionError("transient failure (injected by the test)")
        return decide(self, ask, schema, memory=memory)

    monkeypatch.setattr(ScriptedDecider, "decide", flaky)
    sc = load_scenario(scenario, list(family.overrides) or None)
    cfg = {"configurable": {"thread_id": "retry"}, "recursion_limit": 10_000}
    with open_saver(tmp_path / "retry.sqlite") as saver:
        graph = build_for(sc).compile(checkpointer=saver)
        out = graph.invoke(
            {"scenario": sc.model_dump()}, cfg, context=GameContext(model="scripted", seed=SEED)
        )
        role = failed[1]
        seat = {"configurable": {"thread_id": "retry", "checkpoint_ns": f"agent_{role}"}}
        kept = [(m["id"], m["round"]) for m in graph.get_state(seat).values.get("memory", [])]
        namespaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(None)}
    assert failed, "the injected failure never happened"
    assert out["done"] is True
    assert out["events"] == expected["events"]
    assert not [ns for ns in namespaces if "|" in ns], f"a seat's history split: {namespaces}"
    assert any(r >= 2 for _, r in kept), (failed, kept)  # the retried step is kept
