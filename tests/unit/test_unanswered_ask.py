"""A phase that reads an answer under another id than the one it asked under asked again until
LangGraph's recursion limit (an order question whose task differed from the world's `order_task`
did). Now the second asking is a clear error naming the ask, its task and the phase; and `order`
reads its answers under the task its question named, so a renamed task simply plays."""

from __future__ import annotations

import dataclasses
import time

import pytest

import wargraph.kernel.graphkit as graphkit
from wargraph.kernel.context import GameContext
from wargraph.kernel.graphkit import build_game
from wargraph.kernel.scenario import load_scenario
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order
from wargraph.nodes.seats import asks, players
from wargraph.runs.runner import thread_config
from wargraph.worlds import NARRATIVE, Orders, World

SCENARIO = {
    "title": "Two seats",
    "setting": "A test.",
    "rounds": 2,
    "players": {"north": {}, "south": {}},
}


class RenamedTask(Orders):
    """Orders whose question names its task `move`, not the part's default task `plan`."""

    def question(self, table, actor, *, team=None):
        return dataclasses.replace(super().question(table, actor, team=team), task="move")


@asks(players)
def misread(state, table):
    """Asks under the question's task (`plan`) and looks for the answer under `move`."""
    if table.answer(table.ask_id("move", "north")) is None:
        q = table.world.orders.question(table, "north")
        return {"asks": [table.ask_question("north", q)]}
    return {}


def _play(world, phase=order):
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario(SCENARIO)
    graph = build_game(
        {"order": phase, "adjudicate": adjudicate}, roster=list(sc.roles), world=world, scenario=sc
    ).compile(checkpointer=InMemorySaver())
    return graph.invoke(
        {"scenario": sc.model_dump()}, thread_config("t1"), context=GameContext(model="scripted")
    )


def test_an_ask_looked_for_under_another_id_is_a_clear_error():
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        _play(NARRATIVE, misread)
    assert type(caught.value).__name__ == "UnansweredAsk", repr(caught.value)[:200]
    assert isinstance(caught.value, graphkit.UnansweredAsk)
    message = str(caught.value)
    assert "'r1.order.plan.north'" in message  # the ask
    assert "task 'plan'" in message and "phase 'order'" in message
    assert time.monotonic() - started < 30  # not a busy loop to the recursion limit (~45 s)


def test_an_order_question_with_its_own_task_plays_to_the_end():
    values = _play(World(orders=RenamedTask()))
    assert values["done"] and not values.get("error")
    plans = [e for e in values["events"] if e["kind"] == "plan"]
    assert {e["author"] for e in plans} == {"north", "south"} and len(plans) == 4


def test_the_same_world_with_matching_tasks_plays_to_the_end():
    assert _play(NARRATIVE)["done"]
