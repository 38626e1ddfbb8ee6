"""The tabletop exercise: an incident, inject cards and a die. `world` (scenario, World),
`graph` (build); its templates and scenarios in `wargraph/prompts/tabletop/` and
`wargraph/scenarios/tabletop/`. This module holds only its entry, `FAMILY`: reading it
imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "tabletop",
    scenario_class="wargraph.graphs.tabletop.world:TabletopScenario",
    graph="wargraph.graphs.tabletop.graph",
    scenarios="wargraph.scenarios.tabletop",
    prompts="wargraph.prompts.tabletop",
    description="an incident, inject cards and a die",
)
