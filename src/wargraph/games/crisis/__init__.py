"""Where the crisis game lives: the generic scenario, `src/wargraph/games/crisis/graph.py`, the shipped
scenarios; the narrative world needs nothing else. Read by `wargraph.families` (entry point
`crisis` in pyproject.toml); a module of its own so that reading it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "crisis",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.games.crisis.graph",
    scenarios="wargraph.games.crisis.scenarios",
    description="players and teams state plans; the control narrates",
)
