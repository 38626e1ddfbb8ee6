"""WarAgent-style historical simulations (1914, 1939, the Warring States). This package holds
the family's code: the rules (`rules` and the modules it names), the World's parts, `game`, `graph`
(build), `panels` (board and stick in `wargraph view`), and beside it
`wargraph/evals/waragent.py` (accuracy against history: measures, report figure, `wargraph eval
waragent`), `wargraph/prompts/waragent/` and `wargraph/scenarios/waragent/`. This module holds
only its entry, `FAMILY`: reading it imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "waragent",
    scenario_class="wargraph.graphs.waragent.game:WarAgentScenario",
    graph="wargraph.graphs.waragent.graph",
    scenarios="wargraph.scenarios.waragent",
    prompts="wargraph.prompts.waragent",
    description="WarAgent-style historical simulations",
    view_panels="wargraph.graphs.waragent.panels:panels",
    seat_world="wargraph.graphs.waragent.seat_world:panels",  # the seat page's board
    measures="wargraph.evals.waragent:record_measures",
    report_figure="wargraph.evals.waragent:record_figure",
    eval_command="wargraph.evals.waragent:eval_waragent",  # accuracy against history
)
