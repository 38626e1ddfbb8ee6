"""The waragent family's entry (`wargraph.families`): where each of its parts lives. Kept apart
from the graph module so that reading it imports no game code."""

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
