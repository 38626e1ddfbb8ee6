"""One game of an experiment: play or resume its thread, then judge and measure its record.

Everything here works on one game and its folder, so a thread of this process or a task on
another machine runs a game the same way."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.plan import GamePlan
from wargraph.evals.experiment.spec import Experiment
from wargraph.evals.judge import Measures, family_measures, judge_question, options_of
from wargraph.models.cache import using
from wargraph.runs.records import RecordError, load_record


class Stopped(Exception):
    """Raised inside a game when the experiment is stopping; the game resumes next time."""


def questions_key(exp: Experiment) -> str:
    blob = json.dumps(
        [[q.id, q.text, options_of(q.options)] for q in exp.questions]
        + [exp.judge_model, exp.judge.require_evidence],
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def measures_key(exp: Experiment) -> str:
    return hashlib.sha256(json.dumps(exp.measures).encode()).hexdigest()[:12]


Keys = tuple[str, str]  # (questions_key, measures_key): what an outcome was extracted with


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)  # atomic: a kill never leaves half an outcome


def stored_outcome(
    out_dir: Path, plan: GamePlan, keys: Keys, *, judged_only: bool = False
) -> dict[str, Any] | None:
    """The game's outcome if it was extracted with the same questions (and measures, unless
    `judged_only`): then nothing needs to run again."""
    data = read_json(out_dir / plan.folder / "outcome.json")
    if not data or data.get("thread_id") != plan.thread_id:
        return None
    if data.get("questions_key") != keys[0]:
        return None
    if not judged_only and data.get("measures_key") != keys[1]:
        return None
    return data


def _finished_record(gdir: Path) -> dict[str, Any] | None:
    try:
        rec = load_record(gdir)
    except RecordError:
        return None
    return rec if rec.get("done") else None


def play_or_resume(
    plan: GamePlan, db: str | Path, gdir: Path, progress: Callable[[str, dict[str, Any]], None]
) -> tuple[dict[str, Any], str]:
    """Play a new game, or continue its thread from the last checkpoint (nothing doubled)."""
    from wargraph.runs.runner import GameError, holds_game, play, resume

    if holds_game(db, plan.thread_id):
        try:
            res = resume(db=db, thread_id=plan.thread_id, out_dir=gdir, progress=progress)
            how = "resumed"
        except GameError as err:
            if "no checkpoint yet" not in str(err):
                raise
            res, how = None, "played"  # registered but stopped before its first step
    else:
        res, how = None, "played"
    if res is None:
        res = play(
            plan.condition.scenario,
            overrides=plan.condition.overrides,
            context=plan.game_context(),
            db=db,
            thread_id=plan.thread_id,
            out_dir=gdir,
            progress=progress,
        )
    if res.interrupts:
        raise GameError("the game waits for a person; experiments run unattended")
    return res.record, how


def plays_on_models(plan: GamePlan) -> bool:
    """Whether a seat of the game (or its default model) calls a model, not a script or a bot."""
    from wargraph.models.chat import parse_model_ref
    from wargraph.models.preflight import seat_models
    from wargraph.runs.runner import check_scenario

    c = plan.condition
    scenario = check_scenario(c.scenario, c.overrides)  # compiled once per process
    refs = seat_models(scenario, plan.game_context())
    return any(parse_model_ref(ref).provider not in ("scripted", "bot") for ref in refs)


def _judged(exp: Experiment, record: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        judge_question(
            record,
            qid=q.id,
            text=q.text,
            options=q.options,
            model=exp.judge_model,
            require_evidence=exp.judge.require_evidence,
        )
        for q in exp.questions
    ]


def outcome_of_game(
    exp: Experiment,
    plan: GamePlan,
    record: dict[str, Any],
    gdir: Path,
    keys: Keys,
    how: str,
    judgements: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Judge a finished record (unless its judgements are given) and compute the family's
    measures."""
    error = str(record.get("error") or "")
    status = "error" if error else "done"
    if judgements is None:  # else judged before with the same questions: kept as they are
        with using(plan.model_cache):  # the judge's answers reused too
            judgements = _judged(exp, record) if status == "done" else []
    measures: Measures = {}
    note = ""
    if exp.measures is not False and status == "done":
        patterns = None if exp.measures is True else list(exp.measures)
        measures, note = family_measures(record, gdir / "record.json", patterns)
    usage = record.get("usage", {})
    per_role = usage.get("per_role", {})
    return {
        "experiment": exp.name,
        "condition": plan.condition.id,
        "label": plan.condition.label,
        "levels": plan.condition.levels,
        "run": plan.run,
        "seed": plan.seed,
        "thread_id": plan.thread_id,
        "fingerprint": plan.fingerprint,
        "folder": plan.folder,
        "questions_key": keys[0],
        "measures_key": keys[1],
        "status": status,
        "error": error,
        "how": how,
        "rounds": record.get("round", 0),
        "answers": {j["id"]: j["answer"] for j in judgements},
        "judgements": judgements,
        "measures": measures,
        "measures_note": note,
        "model_calls": sum(int(r.get("calls", 0)) for r in per_role.values()),
        # answers reused from the model cache: no calls, no tokens paid (wargraph.models.cache)
        "cached_calls": sum(int(r.get("cached", 0)) for r in per_role.values()),
        "tokens": sum(
            int(r.get("prompt_tokens", 0)) + int(r.get("completion_tokens", 0))
            for r in per_role.values()
        ),
        "fallbacks": int(usage.get("fallbacks", 0)),
        # a game finished elsewhere (on a worker as its driver died) and only read back here:
        # its calls were never counted, so 0 calls and tokens are not its cost
        "counts_incomplete": how == "resumed" and not per_role and plays_on_models(plan),
    }


def known_parts(
    exp: Experiment, out_dir: Path, plan: GamePlan, keys: Keys
) -> tuple[dict[str, Any] | None, str, list[dict[str, Any]] | None]:
    """What is already known of a game in the experiment's folder: its finished record (then
    only judging or measuring is left, "rejudged" or "remeasured", with the judgements to
    keep), else None and "played"."""
    record = _finished_record(out_dir / plan.folder)
    if record is None or record.get("thread_id") != plan.thread_id:
        return None, "played", None
    before = stored_outcome(out_dir, plan, keys, judged_only=True)
    if before is not None and exp.questions:
        return record, "remeasured", before.get("judgements") or None
    return record, "rejudged", None


def run_game(
    exp: Experiment,
    plan: GamePlan,
    out_dir: Path,
    db: str | Path,
    keys: Keys,
    progress: Callable[[str, dict[str, Any]], None],
) -> tuple[dict[str, Any], str]:
    gdir = out_dir / plan.folder
    record, how, judged = known_parts(exp, out_dir, plan, keys)
    if record is None:
        record, how = play_or_resume(plan, db, gdir, progress)
    outcome = outcome_of_game(exp, plan, record, gdir, keys, how, judged)
    write_json(gdir / "outcome.json", outcome)
    return outcome, how
