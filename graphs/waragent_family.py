"""Where the WarAgent simulations live: `wargraph/worlds/waragent/`, `graphs/waragent.py`, the
board panels of `wargraph view`, and `evals/waragent.py` (accuracy against history: measures,
report figure, `wargraph eval waragent`). Entry point `waragent`; imports no game code."""

from wargraph.families import Family

FAMILY = Family(
    "waragent",
    scenario_class="wargraph.worlds.waragent.game:WarAgentScenario",
    graph="wargraph.graphs.waragent",
    scenarios="wargraph.scenarios",
    description="WarAgent-style historical simulations",
    view_panels="wargraph.view.panels:waragent_panels",
    measures="wargraph.evals.waragent:record_measures",
    report_figure="wargraph.evals.waragent:record_figure",
    eval_command="wargraph.evals.waragent:eval_waragent",  # accuracy against history
)
