"""The tabletop exercise (HAIWIRE style): an incident-response drill about AI systems, in the
tabletop world (cards and a die, `src/wargraph/games/tabletop/world.py`).

Each round: inject (the next card) -> respond (the library's `order`: one responder, or a team
whose members propose and whose leader combines) -> adjudicate (the die, then the control's
narration); a full success or an empty hand ends play; then analyze (the debrief).
"""

from __future__ import annotations

from typing import Any

from wargraph.games.tabletop.world import (  # noqa: F401  (the family's public names)
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
from wargraph.kernel.graphkit import GameGraph, build_game, default_graphs, family_scenario
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.inject import inject
from wargraph.nodes.order import order

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


# `builder` (for tests) and `graph` (for the server) are built on first use, not at import
__getattr__ = default_graphs(__name__, build)
