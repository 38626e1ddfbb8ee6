"""Where Diplomacy lives: `wargraph/worlds/diplomacy/` (the world as parts, the engine, the
measures, the replay hooks of critical state analysis), `graphs/diplomacy.py`,
`wargraph/view/diplomacy.py` (map panels, fork points), `evals/diplomacy.py` (`wargraph eval
diplomacy`), and the options `wargraph play` takes for it. Entry point `diplomacy`; imports no
game code."""

from wargraph.families import Family, Option

_REPLAY = "wargraph.worlds.diplomacy.replay"

FAMILY = Family(
    "diplomacy",
    scenario_class="wargraph.worlds.diplomacy.world:DiplomacyScenario",
    graph="wargraph.graphs.diplomacy",
    scenarios="wargraph.scenarios",
    description="full-press Diplomacy on the real engine",
    view_panels="wargraph.view.diplomacy:panels",
    measures="wargraph.worlds.diplomacy.measures:record_measures",
    # critical state analysis forks at engine phases (F1903M), not round numbers
    critical_state=f"{_REPLAY}:critical_state",
    checkpoint_label=f"{_REPLAY}:checkpoint_label",
    replay_stop=f"{_REPLAY}:replay_stop",
    replay_outcome=f"{_REPLAY}:replay_outcome",
    replay_summary=f"{_REPLAY}:replay_summary",
    replay_files=f"{_REPLAY}:replay_files",
    replay_points="wargraph.view.diplomacy:replay_points",
    play_options=(
        Option("--max-year", "diplomacy.max_year", "last year played", "YEAR"),
        Option("--negotiation-rounds", "diplomacy.negotiation_rounds", "negotiation rounds", "N"),
    ),
    eval_command="wargraph.evals.diplomacy:eval_command",  # scores, orders, relationships
    eval_options=(
        Option(
            "--promises-model", "promises_model", "also judge promises with this model", "MODEL"
        ),
    ),
)
