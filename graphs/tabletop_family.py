"""The tabletop family's entry (`wargraph.families`): where each of its parts lives. Kept apart
from the graph module so that reading it imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "tabletop",
    scenario_class="wargraph.worlds.tabletop:TabletopScenario",
    graph="wargraph.graphs.tabletop",
    scenarios="wargraph.scenarios",
    description="an incident, inject cards and a die",
)
