"""Where the WarAgent simulations live: `src/wargraph/games/waragent/`, `src/wargraph/games/waragent/graph.py`, the
board panels of `wargraph view`, and `src/wargraph/games/waragent/eval.py` (accuracy against history: measures,
report figure, `wargraph eval waragent`). Entry point `waragent`; imports no game code."""

from wargraph.kernel.families import Family

FAMILY = Family(
    "waragent",
    scenario_class="wargraph.games.waragent.game:WarAgentScenario",
    graph="wargraph.games.waragent.graph",
    scenarios="wargraph.scenarios",
    description="WarAgent-style historical simulations",
    view_panels="wargraph.view.panels:waragent_panels",
    seat_world="wargraph.games.waragent.seat_world:panels",  # the seat page's board
    measures="wargraph.games.waragent.eval:record_measures",
    report_figure="wargraph.games.waragent.eval:record_figure",
    eval_command="wargraph.games.waragent.eval:eval_waragent",  # accuracy against history
)
