"""Colonel Blotto's round, from the phase library: negotiate -> summarize -> order (one whole
number per front) -> secretary_validate -> adjudicate (the card phases); analyze after the last
round. The rules are the world's (`world.py`); the walk-through is docs/new-game.md."""

from __future__ import annotations

from typing import Any

from wargraph.graphs.blotto.world import BLOTTO, BlottoScenario
from wargraph.kernel.graphkit import GameGraph, build_game, family_scenario
from wargraph.nodes.analyze import analyze
from wargraph.nodes.library import CARD_PHASES
from wargraph.server.factory import served_graph

DEFAULT_SCENARIO = "blotto"


def build(scenario: BlottoScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = family_scenario(scenario, BlottoScenario, "blotto")
    return build_game(
        dict(CARD_PHASES),
        roster=list(sc.roles),
        world=BLOTTO,
        scenario=sc,
        end={"analyze": analyze},
    )


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("blotto")
