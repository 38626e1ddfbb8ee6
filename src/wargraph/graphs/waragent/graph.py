"""WarAgent-style historical country simulations (1914, 1939, the Warring States).

Each round: order (every country acts at once on its own beliefs) -> secretary_validate (the
rules and the country's board and stick; reasons back, revisions, then amend) -> adjudicate (the
world applies every action; each country's beliefs take what reached it). The game ends at the
round limit or when the board and stick stay unchanged. Rules: the package
`src/wargraph/graphs/waragent/`; the scenario and the World made of its parts: its `game.py`.
"""

from __future__ import annotations

from typing import Any

from wargraph.graphs.waragent.game import (  # noqa: F401  (the family's public names)
    SETTINGS,
    WAIT,
    WARAGENT,
    SecretaryVerdict,
    WarAgentScenario,
)
from wargraph.kernel.graphkit import GameGraph, build_game, family_scenario
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order
from wargraph.nodes.secretary_validate import secretary_validate
from wargraph.server.factory import served_graph

DEFAULT_SCENARIO = "wwi"


def build(scenario: WarAgentScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = family_scenario(scenario, WarAgentScenario, "waragent")
    return build_game(
        {"order": order, "secretary_validate": secretary_validate, "adjudicate": adjudicate},
        roster=list(sc.roles),
        world=WARAGENT,
        scenario=sc,
    )


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("waragent")
