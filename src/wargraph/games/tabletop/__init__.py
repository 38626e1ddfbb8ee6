"""The tabletop exercise: an incident, inject cards and a die. `world` (scenario, World),
`graph` (build), `prompts/`, `scenarios/`. This module holds only its entry, `FAMILY`: reading it
imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "tabletop",
    scenario_class="wargraph.games.tabletop.world:TabletopScenario",
    graph="wargraph.games.tabletop.graph",
    scenarios="wargraph.games.tabletop.scenarios",
    prompts="wargraph.games.tabletop.prompts",
    description="an incident, inject cards and a die",
)
