"""Where the tabletop exercise lives: its scenario class (cards, a die) in
`wargraph/worlds/tabletop.py`, `graphs/tabletop.py`, the shipped scenarios. The entry point
`tabletop` in pyproject.toml names this; it imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "tabletop",
    scenario_class="wargraph.worlds.tabletop:TabletopScenario",
    graph="wargraph.graphs.tabletop",
    scenarios="wargraph.scenarios",
    description="an incident, inject cards and a die",
)
