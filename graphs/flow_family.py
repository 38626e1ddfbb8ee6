"""The flow family's entry (`wargraph.families`): where each of its parts lives. Kept apart from
the graph module so that reading it imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "flow",
    scenario_class="wargraph.scenario:Scenario",
    graph="wargraph.graphs.flow",
    scenarios="wargraph.scenarios",
    description="a game composed from the phase library by the scenario",
)
