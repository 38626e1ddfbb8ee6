"""Where Colonel Blotto lives: `src/wargraph/games/blotto/world.py` (scenario, world, measures),
`src/wargraph/games/blotto/graph.py`, its allocation panels in `src/wargraph/view/panels.py`. Entry point `blotto`;
imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "blotto",
    scenario_class="wargraph.games.blotto.world:BlottoScenario",
    graph="wargraph.games.blotto.graph",
    scenarios="wargraph.scenarios",
    description="Colonel Blotto: forces across fronts under a budget",
    view_panels="wargraph.view.panels:blotto_panels",
    seat_world="wargraph.games.blotto.seat_world:panels",  # the seat page's board
    measures="wargraph.games.blotto.world:record_measures",
)
