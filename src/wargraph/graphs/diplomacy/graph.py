"""Full-press Diplomacy on the `diplomacy` engine, composed from the phase library:

    negotiate (rounds of messages, all powers at once; the world's press rules) -> summarize
    (private diaries: summary, intent, goals, relationships; a yearly digest) -> order (one enum
    of legal orders per unit) -> secretary_validate (the engine checks the orders on a copy of the
    phase; refused orders go back with the reason, then the unit holds) -> adjudicate (the engine
    processes the phase), one engine phase per round until `diplomacy.max_year`; then analyze
    (the game's scores and measures). With `diplomacy.diary: with_orders` the diaries are asked
    in the orders' step (`nodes.together`): the node `order` runs both.

The rules live in `src/wargraph/graphs/diplomacy/` (`world.py` assembles the World from one module
per part; the engine boundary beside them); critical state analysis in `replay.py` there, whose
hooks the family's entry (`src/wargraph/graphs/diplomacy/__init__.py`) declares.
"""

from __future__ import annotations

from typing import Any

from wargraph.graphs.diplomacy.world import DIPLOMACY, DiplomacyScenario
from wargraph.kernel.graphkit import GameGraph, build_game, family_scenario
from wargraph.nodes.analyze import analyze
from wargraph.nodes.library import CARD_PHASES
from wargraph.nodes.together import together
from wargraph.server.factory import served_graph

DEFAULT_SCENARIO = "diplomacy"


def build(scenario: DiplomacyScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = family_scenario(scenario, DiplomacyScenario, "diplomacy")
    spine = dict(CARD_PHASES)
    if sc.diplomacy.diary == "with_orders":
        # the diaries asked in the orders' step: one model latency less per movement phase
        spine = {name: fn for name, fn in spine.items() if name != "summarize"}
        spine["order"] = together(
            ("summarize", CARD_PHASES["summarize"]), ("order", spine["order"])
        )
    return build_game(
        spine,
        roster=list(sc.roles),
        world=DIPLOMACY,
        scenario=sc,
        end={"analyze": analyze},
    )


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("diplomacy")
