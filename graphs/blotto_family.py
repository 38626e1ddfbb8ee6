"""Where Colonel Blotto lives: `wargraph/worlds/blotto.py` (scenario, world, measures),
`graphs/blotto.py`, its allocation panels in `wargraph/view/panels.py`. Entry point `blotto`;
imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "blotto",
    scenario_class="wargraph.worlds.blotto:BlottoScenario",
    graph="wargraph.graphs.blotto",
    scenarios="wargraph.scenarios",
    description="Colonel Blotto: forces across fronts under a budget",
    view_panels="wargraph.view.panels:blotto_panels",
    measures="wargraph.worlds.blotto:record_measures",
)
