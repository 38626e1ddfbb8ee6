"""The qualitative crisis game (Snow Globe style): players and teams state plans each move, the
control adjudicates them into a narrative, and answers post-game questions."""

from __future__ import annotations

from typing import Any

from wargraph.kernel.graphkit import GameGraph, build_game
from wargraph.kernel.scenario import Scenario, load_scenario
from wargraph.kernel.world import NARRATIVE
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.inject import inject
from wargraph.nodes.order import order
from wargraph.server.factory import served_graph

DEFAULT_SCENARIO = "azuristan_crimsonia"


def build(scenario: Scenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    """inject -> order -> adjudicate each move, in a narrative world; then analyze."""
    sc = load_scenario(scenario)
    return build_game(
        {"inject": inject, "order": order, "adjudicate": adjudicate},
        roster=list(sc.roles),
        world=NARRATIVE,
        scenario=sc,
        end={"analyze": analyze},
    )


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("crisis")
