"""Experiments: one scenario played many times over a grid of conditions, judged and reported.

An experiment file (YAML) names a scenario, overrides for every game (`set`, the `--set`
syntax as a mapping), a grid of conditions (axes of named levels; the conditions are their
product) and/or explicit `conditions`, runs per condition, seeds, models, outcome questions
and a concurrency limit. A level is a mapping of `--set` keys, plus the reserved keys
`scenario` (another scenario), `model`, `role_models.<ROLE>` and `context.<setting>`:

    name: azuristan_personas
    scenario: azuristan_crimsonia
    set: {rounds: 1}
    runs: 20
    grid:
      pairing:
        dove-dove: {players.azuristan.persona: dove, players.crimsonia.persona: dove}
        hawk-hawk: {players.azuristan.persona: hawk, players.crimsonia.persona: hawk}
      trigger: {key: waragent.trigger, values: [historical, none]}   # shorthand axis
    questions:
      - {id: conflict, text: "Did armed conflict occur?"}              # yes/no
      - {id: status, text: "...", options: [a, b]}                     # multiple choice

Every game has its own thread in ONE SQLite checkpoint store (`<out>/checkpoints.sqlite`) and
its own folder (`<out>/games/<condition>/<run>-<fingerprint>/`). The thread id and folder carry a
fingerprint of everything that defines the game (scenario file, overrides, models, seed,
settings), so running the same file again skips finished games, resumes interrupted ones from
their last checkpoint, and a changed condition gets new games instead of stale ones. Changed
questions re-judge the stored records without replaying them.

The package holds one concern per module: `spec` (the file), `plan` (conditions and games),
`game` (one game: play or resume, judge, measure), `run` (this process, games in threads),
`progress` (the live view), `lock` (one run per folder), `stores` (SQLite or PostgreSQL, a
lease per game), `cluster` (games as Ray tasks), `langsmith_log` and `cli`.
"""

from wargraph.evals.experiment.cli import run_from_cli
from wargraph.evals.experiment.cluster import run_experiment_on_ray
from wargraph.evals.experiment.game import (
    Keys,
    Stopped,
    measures_key,
    outcome_of_game,
    play_or_resume,
    questions_key,
    run_game,
    stored_outcome,
)
from wargraph.evals.experiment.langsmith_log import langsmith_parts, log_langsmith
from wargraph.evals.experiment.plan import (
    Condition,
    GamePlan,
    check_condition,
    conditions_of,
    plan_games,
)
from wargraph.evals.experiment.run import (
    ExperimentResult,
    Hooks,
    experiment_meta,
    run_experiment,
)
from wargraph.evals.experiment.spec import (
    CONTEXT_FIELDS,
    RESERVED,
    AxisValues,
    ContextSpec,
    Experiment,
    ExperimentError,
    JudgeSpec,
    QuestionSpec,
    load_experiment,
    resolve_experiment,
    shipped_experiments,
)

__all__ = [
    "CONTEXT_FIELDS",
    "RESERVED",
    "AxisValues",
    "Condition",
    "ContextSpec",
    "Experiment",
    "ExperimentError",
    "ExperimentResult",
    "GamePlan",
    "Hooks",
    "JudgeSpec",
    "Keys",
    "QuestionSpec",
    "Stopped",
    "check_condition",
    "conditions_of",
    "experiment_meta",
    "langsmith_parts",
    "load_experiment",
    "log_langsmith",
    "measures_key",
    "outcome_of_game",
    "plan_games",
    "play_or_resume",
    "questions_key",
    "resolve_experiment",
    "run_experiment",
    "run_experiment_on_ray",
    "run_from_cli",
    "run_game",
    "shipped_experiments",
    "stored_outcome",
]
