"""Games are compositions: every family is the library's phases + a world, its graph draws the
round's rhythm, any phase mounts under any name, and every prompt's context comes through one
door (`Table.view_text`: view_for + the world's rendering)."""

from __future__ import annotations

import re

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import wargraph.graphs.blotto.graph as blotto
import wargraph.graphs.crisis.graph as crisis
import wargraph.graphs.diplomacy.graph as diplomacy
import wargraph.graphs.flow.graph as flow
import wargraph.graphs.tabletop.graph as tabletop
import wargraph.graphs.waragent.graph as waragent
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.table import Table, scenario_of

FAMILIES = {
    "blotto": (blotto, "blotto", ["rounds=2"]),
    "crisis": (crisis, "azuristan_crimsonia", ["rounds=2"]),
    "tabletop": (tabletop, "haiwire", []),
    "waragent": (waragent, "wwi", ["rounds=2"]),
    "diplomacy": (diplomacy, "diplomacy", ["diplomacy.max_year=1901"]),
    "flow": (
        flow,
        "summit",
        ["rounds=2", "flow.phases=[negotiate, summarize, order, secretary_validate, adjudicate]"],
    ),
}

# (the round's phases in order, phases after the game, the most edges the graph may draw)
RHYTHM = {
    "blotto": (
        ["negotiate", "summarize", "order", "secretary_validate", "adjudicate"],
        ["analyze"],
        31,
    ),
    "crisis": (["inject", "order", "adjudicate"], ["analyze"], 16),
    "tabletop": (["inject", "respond", "adjudicate"], ["analyze"], 20),
    "waragent": (
        ["order", "secretary_validate", "adjudicate"],
        [],
        49,  # ten countries, each asked by two phases: 40 of these are seat edges
    ),
    "diplomacy": (
        ["negotiate", "summarize", "order", "secretary_validate", "adjudicate"],
        ["analyze"],
        67,  # seven powers, each asked by four phases: 56 of these are seat edges
    ),
    "flow": (
        ["negotiate", "summarize", "order", "secretary_validate", "adjudicate"],
        ["analyze"],
        39,
    ),
}


def edges_of(graph) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in graph.get_graph().edges}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_edges_follow_the_phase_order(family):
    """Between phases the graph draws exactly the round's rhythm: each phase to the next, the
    last to the next round and to the end, negotiation to itself; seats return only to the
    phases that ask them; the edge count stays bounded."""
    module, name, sets = FAMILIES[family]
    spine, closing, most = RHYTHM[family]
    g = module.build(load_scenario(name, sets)).compile()
    edges = edges_of(g)
    after = closing[0] if closing else "__end__"
    want = {("__start__", "setup"), ("setup", spine[0]), ("setup", "__end__")}
    want |= set(zip(spine, spine[1:], strict=False)) | {(spine[-1], spine[0]), (spine[-1], after)}
    want |= set(zip(closing, [*closing[1:], "__end__"], strict=False))
    want |= {("negotiate", "negotiate")} if "negotiate" in spine else set()
    between = {
        (a, b) for a, b in edges if not a.startswith("agent_") and not b.startswith("agent_")
    }
    assert between == want
    assert len(edges) <= most, len(edges)
    for seat in {n for e in edges for n in e if n.startswith("agent_")}:
        asked_by = {a for a, b in edges if b == seat}
        assert {b for a, b in edges if a == seat} == asked_by, seat


def test_crisis_draws_its_rhythm_exactly():
    sc = load_scenario("azuristan_crimsonia")
    edges = edges_of(crisis.build(sc).compile())
    players = [f"agent_{p}" for p in sc.players]
    control = f"agent_{sc.control.name}"
    assert ("inject", "order") in edges and ("order", "adjudicate") in edges
    assert ("adjudicate", "inject") in edges and ("adjudicate", "analyze") in edges
    for p in players:  # players are asked by `order` only
        assert {b for a, b in edges if a == p} == {"order"}
    assert {b for a, b in edges if a == control} <= {"adjudicate", "analyze"}
    assert len(edges) < 53 // 2  # the landed kit drew 53


def test_a_phase_mounts_under_any_name(scripted, tmp_path):
    sc = load_scenario(
        "summit", ["rounds=1", "flow.phases=[{talks: negotiate}, {diary: summarize}, adjudicate]"]
    )
    g = flow.build(sc).compile(checkpointer=InMemorySaver())
    out = g.invoke(
        {"scenario": sc.model_dump()},
        {"configurable": {"thread_id": "m"}, "recursion_limit": 200},
        context=scripted(tmp_path),
    )
    assert out["done"] and not out.get("error")
    kinds = {(e["phase"], e["kind"]) for e in out["events"]}
    assert ("diary", "summary") in kinds and ("adjudicate", "narration") in kinds
    assert any(p == "talks" for p, _ in kinds) or not any(k == "message" for _, k in kinds)


_LATER_EXCHANGE = re.compile(r"\.x(?:[2-9]|\d{2,})$")  # an ask id's key: exchange 2 on


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_prompt_context_comes_through_one_door(family, scripted):
    """Each ask's context equals what `view_text` gives that seat at that point of the game."""
    module, name, sets = FAMILIES[family]
    sc = load_scenario(name, sets)
    world = module.build(sc)  # the builder carries the world in its phase closures
    g = world.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": family}, "recursion_limit": 2000}
    ctx = scripted(None)
    g.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
    checked = later = 0
    family_world = _world_of(module)
    for snap in g.get_state_history(cfg):
        asks = snap.values.get("asks") or []
        for ask in asks:
            phase_state = {**snap.values, "phase": ask["phase"]}
            # the context is built before the phase's own update lands: rebuild from the parent
            parent = _parent(g, snap, cfg)
            table = Table(scenario_of(parent), ctx, {**parent, "phase": ask["phase"]}, family_world)
            if ask["task"] == "question":
                # after the game: the whole record, the world's debrief (written in the same
                # step as the questions) included
                after = Table(table.scenario, ctx, phase_state, family_world)
                want = after.view_text(ask["role"], policy="record")
                assert want in ask["context"] or ask["context"] in want
            elif _LATER_EXCHANGE.search(ask["id"]):
                # negotiate records an exchange and asks the next in one step: the question is
                # asked on the record with the exchange before it in (the step's own state)
                after = Table(table.scenario, ctx, phase_state, family_world)
                assert ask["context"] == after.view_text(ask["role"]), ask["id"]
                later += 1
            else:
                assert ask["context"] == table.view_text(ask["role"]), (ask["id"], phase_state)
            checked += 1
    assert checked > 0
    if family == "diplomacy":  # its scenario negotiates two exchanges a phase
        assert later > 0


def _world_of(module):
    from wargraph.worlds import NARRATIVE, World

    worlds = [v for v in vars(module).values() if isinstance(v, World) and v is not NARRATIVE]
    return worlds[0] if worlds else NARRATIVE


def _parent(g, snap, cfg):
    parent = snap.parent_config
    return g.get_state(parent).values if parent else snap.values


@pytest.mark.parametrize("family", ["blotto", "diplomacy", "tabletop", "waragent"])
def test_a_family_graph_refuses_another_familys_scenario(family):
    from wargraph.kernel.families import graph_module
    from wargraph.kernel.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=f"the {family} graph needs family '{family}'"):
        graph_module(family).build("azuristan_crimsonia")
