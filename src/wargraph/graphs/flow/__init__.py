"""The flow composer: a game made of the phase library by the scenario's `flow.phases`.
`graph` (build); its scenarios in `wargraph/scenarios/flow/`. This module holds only its entry, `FAMILY`: reading it imports no
game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "flow",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.graphs.flow.graph",
    scenarios="wargraph.scenarios.flow",
    description="a game composed from the phase library by the scenario",
)
