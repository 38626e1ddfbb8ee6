"""Full-press Diplomacy on the real engine. This package holds the family's code: the engine
boundary (`engine`, `rules`), the World as one module per part (`world`), `measures`, `replay`
(critical state analysis), `graph` (build), `panels` (map panels, fork points), `bots`;
beside it `wargraph/evals/diplomacy.py` (`wargraph eval diplomacy`), `wargraph/prompts/diplomacy/`
and `wargraph/scenarios/diplomacy/`. This module holds only its entry,
`FAMILY`: reading it imports no game code."""

from wargraph.kernel.families import Bot, Family, Option

_REPLAY = "wargraph.graphs.diplomacy.replay"
_BOTS = "wargraph.graphs.diplomacy.bots"

FAMILY = Family(
    "diplomacy",
    scenario_class="wargraph.graphs.diplomacy.world:DiplomacyScenario",
    graph="wargraph.graphs.diplomacy.graph",
    scenarios="wargraph.scenarios.diplomacy",
    prompts="wargraph.prompts.diplomacy",
    description="full-press Diplomacy on the real engine",
    view_panels="wargraph.graphs.diplomacy.panels:panels",
    seat_world="wargraph.graphs.diplomacy.seat_world:panels",  # the seat page's board
    measures="wargraph.graphs.diplomacy.measures:record_measures",
    # critical state analysis forks at engine phases (F1903M), not round numbers
    critical_state=f"{_REPLAY}:critical_state",
    checkpoint_label=f"{_REPLAY}:checkpoint_label",
    replay_stop=f"{_REPLAY}:replay_stop",
    replay_outcome=f"{_REPLAY}:replay_outcome",
    replay_summary=f"{_REPLAY}:replay_summary",
    replay_files=f"{_REPLAY}:replay_files",
    replay_points="wargraph.graphs.diplomacy.panels:replay_points",
    play_options=(
        Option("--max-year", "diplomacy.max_year", "last year played", "YEAR"),
        Option("--negotiation-rounds", "diplomacy.negotiation_rounds", "negotiation rounds", "N"),
        Option(
            "--orders",
            "diplomacy.orders",
            "constrained (pick legal orders) or free (models write orders; measured)",
            "MODE",
        ),
    ),
    eval_command="wargraph.evals.diplomacy:eval_command",  # scores, orders, relationships
    eval_options=(
        Option(
            "--promises-model", "promises_model", "also judge promises with this model", "MODEL"
        ),
    ),
    bots=(
        Bot("greedy", f"{_BOTS}:greedy", "moves on the nearest unowned centres, supports its own"),
        Bot("hold", f"{_BOTS}:hold", "holds every unit"),
        Bot("random_legal", f"{_BOTS}:random_legal", "a random legal order per unit"),
    ),
)
