"""Colonel Blotto: forces across fronts under a budget. The family's entry alone (reading it
imports no game code); beside it `world`, `graph`, `panels`, `bots`; its
templates in `wargraph/prompts/blotto/`, its scenario in `wargraph/scenarios/blotto/`."""

from wargraph.kernel.families import Bot, Family

_BOTS = "wargraph.graphs.blotto.bots"

FAMILY = Family(
    "blotto",
    scenario_class="wargraph.graphs.blotto.world:BlottoScenario",
    graph="wargraph.graphs.blotto.graph",
    scenarios="wargraph.scenarios.blotto",
    prompts="wargraph.prompts.blotto",
    description="Colonel Blotto: forces across fronts under a budget",
    view_panels="wargraph.graphs.blotto.panels:panels",
    seat_world="wargraph.graphs.blotto.panels:seat_world",  # the seat page's board
    measures="wargraph.graphs.blotto.world:record_measures",
    bots=(
        Bot("fixed", f"{_BOTS}:fixed_split", "the same uneven split every round"),
        Bot("even", f"{_BOTS}:even", "forces spread evenly over the fronts"),
        Bot("best_response", f"{_BOTS}:best_response", "answers the other side's last split"),
    ),
)
