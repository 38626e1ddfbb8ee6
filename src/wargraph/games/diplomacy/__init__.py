"""Where Diplomacy lives: `src/wargraph/games/diplomacy/` (the world as parts, the engine, the
measures, the replay hooks of critical state analysis), `src/wargraph/games/diplomacy/graph.py`,
`src/wargraph/games/diplomacy/panels.py` (map panels, fork points), `src/wargraph/games/diplomacy/eval.py` (`wargraph eval
diplomacy`), and the options `wargraph play` takes for it. Entry point `diplomacy`; imports no
game code."""

from wargraph.kernel.families import Family, Option

_REPLAY = "wargraph.games.diplomacy.replay"

FAMILY = Family(
    "diplomacy",
    scenario_class="wargraph.games.diplomacy.world:DiplomacyScenario",
    graph="wargraph.games.diplomacy.graph",
    scenarios="wargraph.scenarios",
    description="full-press Diplomacy on the real engine",
    view_panels="wargraph.games.diplomacy.panels:panels",
    measures="wargraph.games.diplomacy.measures:record_measures",
    # critical state analysis forks at engine phases (F1903M), not round numbers
    critical_state=f"{_REPLAY}:critical_state",
    checkpoint_label=f"{_REPLAY}:checkpoint_label",
    replay_stop=f"{_REPLAY}:replay_stop",
    replay_outcome=f"{_REPLAY}:replay_outcome",
    replay_summary=f"{_REPLAY}:replay_summary",
    replay_files=f"{_REPLAY}:replay_files",
    replay_points="wargraph.games.diplomacy.panels:replay_points",
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
    eval_command="wargraph.games.diplomacy.eval:eval_command",  # scores, orders, relationships
    eval_options=(
        Option(
            "--promises-model", "promises_model", "also judge promises with this model", "MODEL"
        ),
    ),
)
