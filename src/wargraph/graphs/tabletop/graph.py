"""The tabletop exercise (HAIWIRE style): an incident-response drill about AI systems, in the
tabletop world (cards and a die, `src/wargraph/graphs/tabletop/world.py`).

Each round: inject (the next card) -> respond (the library's `order`: one responder, or a team
whose members propose and whose leader combines) -> adjudicate (the die, then the control's
narration); a full success or an empty hand ends play; then analyze (the debrief).
"""

from __future__ import annotations

from typing import Any

from wargraph.graphs.tabletop.world import (  # noqa: F401  (the family's public names)
    FALLBACK_NARRATIVE,
    OUTCOME_TEXT,
    TABLETOP,
    IncidentCard,
    InjectCard,
    TabletopConfig,
    TabletopScenario,
    draw,
    outcome_of,
    roll_die,
)
from wargraph.kernel.graphkit import GameGraph, build_game, family_scenario
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.inject import inject
from wargraph.nodes.order import order
from wargraph.server.factory import served_graph

DEFAULT_SCENARIO = "haiwire"


def build(scenario: TabletopScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = family_scenario(scenario, TabletopScenario, "tabletop")
    return build_game(
        {"inject": inject, "respond": order, "adjudicate": adjudicate},
        roster=list(sc.roles),
        world=TABLETOP,
        scenario=sc,
        end={"analyze": analyze},
    )


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("tabletop")
