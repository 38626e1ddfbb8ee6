"""The blotto family's entry (`wargraph.families`): where each of its parts lives. Kept apart
from the graph module so that reading it imports no game code."""

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
