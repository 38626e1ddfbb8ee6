"""The crisis game (Snow Globe style): players and teams state plans, the control narrates.
The generic scenario and the narrative world need nothing else: `graph` (build), `scenarios/`.
This module holds only its entry, `FAMILY`: reading it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "crisis",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.games.crisis.graph",
    scenarios="wargraph.games.crisis.scenarios",
    description="players and teams state plans; the control narrates",
)
