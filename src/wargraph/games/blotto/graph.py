"""Colonel Blotto's round, from the phase library: negotiate -> summarize -> order (one whole
number per front) -> secretary_validate -> adjudicate (the card phases); analyze after the last
round. The rules are the world's (`world.py`); the walk-through is docs/new-game.md."""

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
