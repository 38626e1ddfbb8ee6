"""Where the flow composer lives: the generic scenario (its `flow.phases`) and
`src/wargraph/games/flow/graph.py`. Entry point `flow` in pyproject.toml; imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "flow",
    scenario_class="wargraph.kernel.scenario:Scenario",
    graph="wargraph.games.flow.graph",
    scenarios="wargraph.games.flow.scenarios",
    description="a game composed from the phase library by the scenario",
)
