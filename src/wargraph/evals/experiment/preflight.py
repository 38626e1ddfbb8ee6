"""Before an experiment plays: every distinct model of every condition (and the judge's) is asked
once (wargraph.models.preflight), so a study whose model cannot answer is one line naming the
model, its URL and the conditions that use it, and no game is played. Without it, each game
of a dead condition would be played, crash and be reported as a crashed game of that
condition."""

from __future__ import annotations

from wargraph.evals.experiment.plan import conditions_of, scenario_path
from wargraph.evals.experiment.spec import Experiment, ExperimentError
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.models.chat import parse_model_ref
from wargraph.models.preflight import PREFLIGHT_TIMEOUT_S, problem, seat_models, where


def models_of(exp: Experiment) -> dict[str, list[str]]:
    """Each distinct model reference the experiment plays, with who plays it
    ("condition LABEL: seat, seat" and "the judge")."""
    users: dict[str, list[str]] = {}
    for cond in conditions_of(exp):
        sc = load_scenario(scenario_path(exp, cond.scenario), cond.overrides)
        ctx = GameContext(model=cond.model, role_models=dict(cond.role_models), **cond.context)
        for ref, seats in seat_models(sc, ctx).items():
            users.setdefault(ref, []).append(f"condition {cond.label}: {', '.join(seats)}")
    if exp.questions:
        users.setdefault(exp.judge_model, []).append("the judge")
    return users


def preflight_experiment(exp: Experiment, timeout: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Every model the experiment plays asked once; an ExperimentError for the first that
    cannot answer."""
    check_models(models_of(exp), "no game of the experiment was played", timeout)


def check_models(
    users: dict[str, list[str]], after: str, timeout: float = PREFLIGHT_TIMEOUT_S
) -> None:
    """Each model reference of `users` (reference -> who plays it) asked once; an
    ExperimentError naming the first that cannot answer, who plays it, and `after`."""
    for text, who in users.items():
        ref = parse_model_ref(text)
        why = problem(ref, timeout)
        if why:
            shown = "; ".join(who[:3]) + (f"; and {len(who) - 3} more" if len(who) > 3 else "")
            raise ExperimentError(f"model {text} ({shown}) at {where(ref)}: {why}; {after}")
