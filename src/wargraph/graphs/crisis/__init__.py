"""The crisis game (Snow Globe style): players and teams state plans, the control narrates.
The generic scenario and the narrative world need nothing else: `graph` (build); its
scenarios in `wargraph/scenarios/crisis/`.
This module holds only its entry, `FAMILY`: reading it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "crisis",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.graphs.crisis.graph",
    scenarios="wargraph.scenarios.crisis",
    description="players and teams state plans; the control narrates",
)
