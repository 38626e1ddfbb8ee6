"""Where the tabletop exercise lives: its scenario class (cards, a die) in
`src/wargraph/games/tabletop/world.py`, `src/wargraph/games/tabletop/graph.py`, the shipped scenarios. The entry point
`tabletop` in pyproject.toml names this; it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "tabletop",
    scenario_class="wargraph.games.tabletop.world:TabletopScenario",
    graph="wargraph.games.tabletop.graph",
    scenarios="wargraph.games.tabletop.scenarios",
    prompts="wargraph.games.tabletop.prompts",
    description="an incident, inject cards and a die",
)
