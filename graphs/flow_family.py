"""Where the flow composer lives: the generic scenario (its `flow.phases`) and
`graphs/flow.py`. Entry point `flow` in pyproject.toml; imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "flow",
    scenario_class="wargraph.scenario:Scenario",
    graph="wargraph.graphs.flow",
    scenarios="wargraph.scenarios",
    description="a game composed from the phase library by the scenario",
)
