"""WarAgent-style historical simulations (1914, 1939, the Warring States). This package is the
whole family: the rules (`rules` and the modules it names), the World's parts, `game`, `graph`
(build), `panels` (board and stick in `wargraph view`), `eval` (accuracy against history:
measures, report figure, `wargraph eval waragent`), `prompts/`, `scenarios/`. This module holds
only its entry, `FAMILY`: reading it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "waragent",
    scenario_class="wargraph.games.waragent.game:WarAgentScenario",
    graph="wargraph.games.waragent.graph",
    scenarios="wargraph.games.waragent.scenarios",
    prompts="wargraph.games.waragent.prompts",
    description="WarAgent-style historical simulations",
    view_panels="wargraph.games.waragent.panels:panels",
    seat_world="wargraph.games.waragent.seat_world:panels",  # the seat page's board
    measures="wargraph.games.waragent.eval:record_measures",
    report_figure="wargraph.games.waragent.eval:record_figure",
    eval_command="wargraph.games.waragent.eval:eval_waragent",  # accuracy against history
)
