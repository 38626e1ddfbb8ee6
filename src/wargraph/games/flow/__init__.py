"""The flow composer: a game made of the phase library by the scenario's `flow.phases`.
`graph` (build), `scenarios/`. This module holds only its entry, `FAMILY`: reading it imports no
game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "flow",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.games.flow.graph",
    scenarios="wargraph.games.flow.scenarios",
    description="a game composed from the phase library by the scenario",
)
