"""The crisis family's entry (`wargraph.families`): where each of its parts lives. Kept apart
from the graph module so that reading it imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "crisis",
    scenario_class="wargraph.scenario:Scenario",
    graph="wargraph.graphs.crisis",
    scenarios="wargraph.scenarios",
    description="players and teams state plans; the control narrates",
)
