"""Colonel Blotto (a campaign over named fronts), composed from the phase library and the Blotto
world (`src/wargraph/games/blotto/world.py`); the walk-through is docs/new-game.md.

Each round: negotiate (messages between sides) -> summarize (a private diary) -> order (one whole
number per front) -> secretary_validate (refuse with reasons, ask again, then scale down) ->
adjudicate (code scores the fronts; the control narrates); after the last round, analyze.
"""

from __future__ import annotations

from typing import Any

from wargraph.games.blotto.world import BLOTTO, BlottoScenario
from wargraph.kernel.graphkit import GameGraph, build_game, default_graphs, family_scenario
from wargraph.nodes.analyze import analyze
from wargraph.nodes.library import CARD_PHASES

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


# `builder` (for tests) and `graph` (for the server) are built on first use, not at import
__getattr__ = default_graphs(__name__, build)
