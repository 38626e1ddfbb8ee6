"""A question whose task differs from the world's `order_task` was answered under one ask id
and looked for under another: the game asked again until LangGraph's recursion limit. Now the
second asking is a clear error naming the ask, its task and the phase."""

from __future__ import annotations

import dataclasses
import time

import pytest

from wargraph import graphkit
from wargraph.context import GameContext
from wargraph.graphkit import build_game
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order
from wargraph.runner import _config
from wargraph.scenario import load_scenario
from wargraph.worlds.base import NarrativeWorld

SCENARIO = {
    "title": "Two seats",
    "setting": "A test.",
    "rounds": 2,
    "players": {"north": {}, "south": {}},
}


class RenamedTask(NarrativeWorld):
    """A world whose order question names its task `move`, not its order_task `plan`."""

    def order_question(self, table, actor, *, team=None):
        return dataclasses.replace(super().order_question(table, actor, team=team), task="move")


def _play(world):
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario(SCENARIO)
    graph = build_game(
        {"order": order, "adjudicate": adjudicate}, roster=list(sc.roles), world=world, scenario=sc
    ).compile(checkpointer=InMemorySaver())
    return graph.invoke(
        {"scenario": sc.model_dump()}, _config("t1"), context=GameContext(model="scripted")
    )


def test_an_ask_looked_for_under_another_id_is_a_clear_error():
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        _play(RenamedTask())
    assert type(caught.value).__name__ == "UnansweredAsk", repr(caught.value)[:200]
    assert isinstance(caught.value, graphkit.UnansweredAsk)
    message = str(caught.value)
    assert "'r1.order.move." in message  # the ask
    assert "task 'move'" in message and "phase 'order'" in message
    assert "order_task is 'plan'" in message
    assert time.monotonic() - started < 10  # not a busy loop to the recursion limit


def test_the_same_world_with_matching_tasks_plays_to_the_end():
    assert _play(NarrativeWorld())["done"]
