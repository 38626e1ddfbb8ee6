"""A sequential mount of `order` (`Orders(sequential=True)`): one mount whose seats answer one at
a time in the order of `actors`, each seeing the answers before it (as their audiences allow),
with the graph Studio draws unchanged."""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.checkpoint.memory import InMemorySaver

from wargraph.kernel.graphkit import build_game
from wargraph.kernel.parts import Orders
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.state import EVERYONE
from wargraph.kernel.world import World
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order

TURN = ["lendor", "karvia", "miran"]  # the penholder first, then each member in turn
SAID = {
    "lendor": "Lendor drafts: share the water.",
    "karvia": "Karvia agrees.",
    "miran": "Miran waits.",
}


@dataclass(frozen=True)
class Turns(Orders):
    """Lendor drafts, then Karvia and Miran answer; Miran's answer is private."""

    def actors(self, table):
        return list(TURN)

    def events(self, table, actor, proposal, source, *, team=None):
        audience = [actor, table.scenario.control.name] if actor == "miran" else [EVERYONE]
        return [table.event(kind="plan", author=actor, text=proposal, audience=audience)]


def _play(world, scripted, tmp_path, thread="t"):
    sc = load_scenario("summit", ["rounds=1"])
    g = build_game(
        {"order": order, "adjudicate": adjudicate}, list(sc.roles), world=world, scenario=sc
    )
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    scripts = {who: {"plan": [text]} for who, text in SAID.items()}
    out = graph.invoke(
        {"scenario": sc.model_dump()}, cfg, context=scripted(tmp_path, scripts=scripts)
    )
    steps = [s.values.get("asks") or [] for s in graph.get_state_history(cfg)][::-1]
    return graph, out, [a for asks in steps for a in asks if a["phase"] == "order"], steps


def test_each_seat_answers_in_turn_and_sees_the_answers_before_it(scripted, tmp_path):
    _, out, asked, steps = _play(World(orders=Turns(sequential=True)), scripted, tmp_path)
    assert out["done"] and not out.get("error")
    assert [a["role"] for a in asked] == TURN
    assert all(len([a for a in s if a["phase"] == "order"]) <= 1 for s in steps)  # one at a time
    context = {a["role"]: a["context"] for a in asked}
    assert SAID["lendor"] not in context["lendor"]
    assert SAID["lendor"] in context["karvia"] and SAID["karvia"] not in context["karvia"]
    assert SAID["lendor"] in context["miran"] and SAID["karvia"] in context["miran"]
    plans = [(e["author"], e["text"]) for e in out["events"] if e["kind"] == "plan"]
    assert plans == [(who, SAID[who]) for who in TURN]  # recorded once each, in turn


def test_a_later_answer_private_to_its_seat_is_not_shown_to_the_next(scripted, tmp_path):
    @dataclass(frozen=True)
    class MiranFirst(Turns):
        def actors(self, table):
            return ["miran", "lendor", "karvia"]

    _, out, asked, _ = _play(World(orders=MiranFirst(sequential=True)), scripted, tmp_path)
    context = {a["role"]: a["context"] for a in asked}
    assert [a["role"] for a in asked] == ["miran", "lendor", "karvia"]
    assert SAID["miran"] not in context["lendor"] and SAID["miran"] not in context["karvia"]
    assert SAID["lendor"] in context["karvia"]


def test_without_sequential_every_seat_answers_at_once_on_the_same_view(scripted, tmp_path):
    _, out, asked, steps = _play(World(orders=Turns()), scripted, tmp_path)
    assert sorted(a["role"] for a in asked) == sorted(TURN)
    assert not any(SAID[who] in a["context"] for a in asked for who in TURN)


def test_the_graph_draws_one_order_node_whatever_the_mount_does():
    sc = load_scenario("summit", ["rounds=1"])

    def edges(world):
        g = build_game(
            {"order": order, "adjudicate": adjudicate}, list(sc.roles), world=world, scenario=sc
        )
        return {(e.source, e.target) for e in g.compile().get_graph().edges}

    assert edges(World(orders=Turns(sequential=True))) == edges(World(orders=Turns()))


def test_a_flow_mounts_order_in_turn_by_an_option(scripted, tmp_path):
    import wargraph.graphs.flow.graph as flow

    phases = "[{draft: {phase: order, seats: [lendor]}}, {respond: {phase: order, sequential: true, seats: [karvia, miran]}}, adjudicate]"
    sc = load_scenario("summit", ["rounds=1", "public_plans=true", f"flow.phases={phases}"])
    graph = flow.build(sc).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "f"}, "recursion_limit": 200}
    scripts = {"lendor": ["Lendor drafts: share the water."], "karvia": ["Karvia agrees."]}
    out = graph.invoke(
        {"scenario": sc.model_dump()}, cfg, context=scripted(tmp_path, scripts=scripts)
    )
    assert out["done"] and not out.get("error")
    asked = [
        a for s in list(graph.get_state_history(cfg))[::-1] for a in s.values.get("asks") or []
    ]
    respond = [a for a in asked if a["phase"] == "respond"]
    assert [a["role"] for a in respond] == ["karvia", "miran"]
    assert SAID["lendor"] in respond[0]["context"] and SAID["karvia"] not in respond[0]["context"]
    assert SAID["karvia"] in respond[1]["context"]
    assert [a["role"] for a in asked if a["phase"] == "draft"] == ["lendor"]


def test_a_flow_option_on_another_phase_or_an_unknown_seat_is_refused():
    import pytest

    import wargraph.graphs.flow.graph as flow
    from wargraph.kernel.scenario import ScenarioError

    bad = load_scenario("summit", ["flow.phases=[{talks: {phase: negotiate, sequential: true}}]"])
    with pytest.raises(ScenarioError, match="options of order, not negotiate"):
        flow.build(bad)
    bad = load_scenario("summit", ["flow.phases=[{respond: {phase: order, seats: [nobody]}}]"])
    with pytest.raises(ScenarioError, match="nobody"):
        flow.build(bad)
