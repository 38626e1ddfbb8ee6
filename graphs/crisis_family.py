"""Where the crisis game lives: the generic scenario, `graphs/crisis.py`, the shipped
scenarios; the narrative world needs nothing else. Read by `wargraph.families` (entry point
`crisis` in pyproject.toml); a module of its own so that reading it imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "crisis",
    scenario_class="wargraph.scenario:Scenario",
    graph="wargraph.graphs.crisis",
    scenarios="wargraph.scenarios",
    description="players and teams state plans; the control narrates",
)
