"""Colonel Blotto: forces across fronts under a budget. The family's entry alone (reading it
imports no game code); beside it `world`, `graph`, `panels`, `bots`, `prompts/`, `scenarios/`."""

from wargraph.kernel.families import Bot, Family

_BOTS = "wargraph.games.blotto.bots"

FAMILY = Family(
    "blotto",
    scenario_class="wargraph.games.blotto.world:BlottoScenario",
    graph="wargraph.games.blotto.graph",
    scenarios="wargraph.games.blotto.scenarios",
    prompts="wargraph.games.blotto.prompts",
    description="Colonel Blotto: forces across fronts under a budget",
    view_panels="wargraph.games.blotto.panels:panels",
    seat_world="wargraph.games.blotto.panels:seat_world",  # the seat page's board
    measures="wargraph.games.blotto.world:record_measures",
    bots=(
        Bot("fixed", f"{_BOTS}:fixed_split", "the same uneven split every round"),
        Bot("even", f"{_BOTS}:even", "forces spread evenly over the fronts"),
        Bot("best_response", f"{_BOTS}:best_response", "answers the other side's last split"),
    ),
)
