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
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import itertools
import json
import os
import queue
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from wargraph.context import GameContext
from wargraph.evals.judge import family_measures, judge_question, options_of
from wargraph.models import ModelRefError, parse_model_ref
from wargraph.records import RecordError, load_record
from wargraph.scenario import ScenarioError, resolve_path

RESERVED = ("scenario", "model", "role_models", "context")
CONTEXT_FIELDS = ("temperature", "max_tokens", "call_timeout", "retries")


class ExperimentError(ValueError):
    """An experiment file that cannot run; the message names the file, the field and the fix."""


# --- the file -----------------------------------------------------------------------------------


class QuestionSpec(BaseModel):
    """An outcome question: yes/no when `options` is empty, else multiple choice."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    text: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)

    @field_validator("options", mode="before")
    @classmethod
    def _yaml_yes_no(cls, value: Any) -> Any:
        """YAML reads bare yes/no as booleans; options are words."""
        if isinstance(value, list):
            return [("yes" if v else "no") if isinstance(v, bool) else str(v) for v in value]
        return value

    @field_validator("options")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value) or any(not v.strip() for v in value):
            raise ValueError("options must be distinct, non-empty words")
        if len(value) == 1:
            raise ValueError("give at least two options (or none for yes/no)")
        return value


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None  # None: the experiment's model
    require_evidence: bool = False  # an answer quoting no record line counts as undetermined


class ContextSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=200, gt=0, le=8192)
    call_timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=2, ge=0, le=10)


class AxisValues(BaseModel):
    """Shorthand axis: one `--set` key over several values (level names are the values)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1)
    values: list[Any] = Field(min_length=1)


Level = dict[str, Any]


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""
    description: str = ""
    scenario: str = Field(min_length=1)
    set: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, Any] = Field(default_factory=dict)  # axis -> levels or {key, values}
    conditions: dict[str, Any] = Field(default_factory=dict)
    runs: int = Field(default=1, ge=1, le=10_000)
    seed: int = 0
    seeds: list[int] | None = None
    model: str = "embedded"
    role_models: dict[str, str] = Field(default_factory=dict)
    context: ContextSpec = Field(default_factory=ContextSpec)
    concurrency: int = Field(default=2, ge=1, le=64)
    questions: list[QuestionSpec] = Field(default_factory=list)
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    # the family's own measures (WarAgent accuracy, Diplomacy scores and rates): true for the
    # default set (two levels of names), false for none, or a list of glob patterns
    measures: bool | list[str] = True
    compare: list[tuple[str, str]] = Field(default_factory=list)
    langsmith: bool = True  # log as a LangSmith experiment when LANGSMITH_API_KEY is set

    # where relative scenario paths are looked up (the experiment file's folder)
    base_dir: str = Field(default=".", exclude=True)

    @model_validator(mode="after")
    def _check(self) -> Experiment:
        for i, q in enumerate(self.questions):
            q.id = q.id or f"q{i + 1}"
            if not re.fullmatch(r"[A-Za-z0-9_-]+", q.id):
                raise ValueError(f"questions.{i}.id: use letters, digits, - and _ (got {q.id!r})")
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"questions: ids must be distinct (got {ids})")
        if self.seeds is not None and len(self.seeds) < self.runs:
            raise ValueError(
                f"seeds: {len(self.seeds)} seeds for {self.runs} runs; give one seed per run "
                "or drop `seeds` to use seed, seed+1, ..."
            )
        for axis, spec in list(self.grid.items()):
            self.grid[axis] = _axis_spec(axis, spec)
        for name, level in self.conditions.items():
            _check_level(f"conditions.{name}", level)
        return self

    @property
    def judge_model(self) -> str:
        return self.judge.model or self.model


def _check_level(where: str, level: Any) -> None:
    if not isinstance(level, dict):
        raise ValueError(
            f"{where}: a level is a mapping of --set keys (e.g. {{players.a.persona: hawk}}), "
            f"not {type(level).__name__}"
        )


def _axis_spec(axis: str, spec: Any) -> AxisValues | dict[str, Level]:
    """An axis is {level name: level} or the shorthand {key: K, values: [...]}."""
    if isinstance(spec, AxisValues):
        return spec
    if isinstance(spec, dict) and set(spec) == {"key", "values"} and isinstance(spec["key"], str):
        if not isinstance(spec["values"], list) or not spec["values"]:
            raise ValueError(f"grid.{axis}.values: give a list of at least one value")
        return AxisValues(key=spec["key"], values=spec["values"])
    if not isinstance(spec, dict) or not spec:
        raise ValueError(
            f"grid.{axis}: an axis needs at least one level ({{name: {{key: value}}}}) "
            "or the form {key: K, values: [...]}"
        )
    levels = {}
    for name, level in spec.items():
        level = {} if level is None else level
        _check_level(f"grid.{axis}.{name}", level)
        levels[str(name)] = level
    return levels


def _format_validation(source: str, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        where = ".".join(
            str(p) for p in e["loc"] if not str(p).startswith(("function-", "AxisValues"))
        )
        msg = e["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {where}: {msg}" if where else f"{source}: {msg}")
    return "\n".join(dict.fromkeys(lines))


def shipped_experiments() -> dict[str, Path]:
    root = importlib.resources.files("wargraph.evals") / "experiments"
    try:
        return {Path(p.name).stem: Path(str(p)) for p in root.iterdir() if p.name.endswith(".yaml")}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def resolve_experiment(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.exists():
        return path
    if path.suffix in (".yaml", ".yml"):
        raise ExperimentError(f"{name_or_path}: no such experiment file")
    shipped = shipped_experiments()
    if str(name_or_path) in shipped:
        return shipped[str(name_or_path)]
    raise ExperimentError(
        f"{name_or_path}: no such file and no shipped experiment of that name "
        f"(shipped: {', '.join(sorted(shipped)) or 'none'})"
    )


def load_experiment(
    source: str | Path | dict[str, Any],
    *,
    runs: int | None = None,
    model: str | None = None,
) -> Experiment:
    """Read and validate an experiment; `runs` and `model` override the file (quick checks).

    `model` replaces every model of the file: the default, the per-role and per-condition
    models and the judge's, so `--model scripted` checks a whole experiment in seconds."""
    if isinstance(source, dict):
        data, where, base = dict(source), "<experiment>", "."
    else:
        path = resolve_experiment(source)
        where, base = str(path), str(path.parent)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            at = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ExperimentError(
                f"{path}:{at}: YAML syntax error: {getattr(err, 'problem', err)}"
            ) from None
        except (UnicodeDecodeError, IsADirectoryError) as err:
            raise ExperimentError(f"{path}: not a readable text file ({err})") from None
        if not isinstance(data, dict):
            raise ExperimentError(
                f"{path}: expected a mapping of experiment fields at the top level"
            )
        data.setdefault("name", path.stem)
    data["base_dir"] = base
    if runs is not None:
        if runs < 1:
            raise ExperimentError(f"--runs {runs}: give at least one run per condition")
        data["runs"] = runs
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as err:
        raise ExperimentError(_format_validation(where, err)) from None
    if not exp.name:
        exp.name = "experiment"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", exp.name):
        raise ExperimentError(
            f"{where}: name: use letters, digits, '.', '-' and '_' (got {exp.name!r})"
        )
    if model is not None:
        _force_model(exp, model)
    for ref in [exp.model, exp.judge_model, *exp.role_models.values()]:
        try:
            parse_model_ref(ref)
        except ModelRefError as err:
            raise ExperimentError(f"{where}: {err}") from None
    return exp


def _force_model(exp: Experiment, model: str) -> None:
    try:
        parse_model_ref(model)
    except ModelRefError as err:
        raise ExperimentError(f"--model: {err}") from None
    exp.model = model
    exp.judge.model = model
    exp.role_models = dict.fromkeys(exp.role_models, model)
    exp.set = _levels_with_model(exp.set, model)
    exp.conditions = {k: _levels_with_model(v, model) for k, v in exp.conditions.items()}
    for axis, levels in list(exp.grid.items()):
        if isinstance(levels, dict):
            exp.grid[axis] = {k: _levels_with_model(v, model) for k, v in levels.items()}
        elif (
            levels.key == "model"
            or levels.key.endswith(".model")
            or levels.key.startswith("role_models.")
        ):
            exp.grid[axis] = AxisValues(key=levels.key, values=[model])


def _levels_with_model(level: Level, model: str) -> Level:
    out = dict(level)
    for key in list(out):
        if key == "model" or key.endswith(".model") or key.startswith("role_models."):
            out[key] = model
        elif key == "role_models" and isinstance(out[key], dict):
            out[key] = dict.fromkeys(out[key], model)
    return out


# --- conditions and games -----------------------------------------------------------------------


@dataclass
class Condition:
    id: str  # file-name safe
    label: str
    levels: dict[str, str]  # axis -> level name
    scenario: str
    overrides: dict[str, Any]
    model: str
    role_models: dict[str, str]
    context: dict[str, Any]


@dataclass
class GamePlan:
    condition: Condition
    run: int
    seed: int
    fingerprint: str
    thread_id: str
    folder: str  # relative to the experiment's out dir

    def game_context(self) -> GameContext:
        return GameContext(
            model=self.condition.model,
            role_models=dict(self.condition.role_models),
            seed=self.seed,
            **self.condition.context,
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _axis_levels(spec: AxisValues | dict[str, Level]) -> list[tuple[str, Level]]:
    if isinstance(spec, AxisValues):
        return [(str(v), {spec.key: v}) for v in spec.values]
    return [(str(name), level) for name, level in spec.items()]


def _split_level(where: str, level: Level, cond: dict[str, Any]) -> None:
    """Sort a level's keys into scenario overrides and the reserved run settings."""
    for key, value in level.items():
        key = str(key)
        if key == "scenario":
            cond["scenario"] = str(value)
        elif key == "model":
            cond["model"] = str(value)
        elif key == "role_models":
            if not isinstance(value, dict):
                raise ExperimentError(f"{where}.role_models: expected a mapping ROLE: MODEL")
            cond["role_models"].update({str(k): str(v) for k, v in value.items()})
        elif key.startswith("role_models."):
            cond["role_models"][key.split(".", 1)[1]] = str(value)
        elif key.startswith("context."):
            name = key.split(".", 1)[1]
            if name not in CONTEXT_FIELDS:
                raise ExperimentError(
                    f"{where}.{key}: unknown setting (known: {', '.join(CONTEXT_FIELDS)})"
                )
            cond["context"][name] = value
        else:
            cond["overrides"][key] = value


def conditions_of(exp: Experiment) -> list[Condition]:
    """The grid's product (axes in file order), then the explicit conditions; one default
    condition when there are neither."""
    named: list[tuple[str, dict[str, str], list[tuple[str, Level]]]] = []
    if exp.grid:
        axes = [(axis, _axis_levels(spec)) for axis, spec in exp.grid.items()]
        for combo in itertools.product(*[levels for _, levels in axes]):
            levels = {axis: name for (axis, _), (name, _) in zip(axes, combo, strict=True)}
            label = "+".join(name for name, _ in combo)
            named.append(
                (
                    label,
                    levels,
                    [(f"grid.{a}.{n}", lv) for (a, _), (n, lv) in zip(axes, combo, strict=True)],
                )
            )
    for name, level in exp.conditions.items():
        named.append((str(name), {"condition": str(name)}, [(f"conditions.{name}", level)]))
    if not named:
        named.append(("default", {}, []))
    out, seen = [], set()
    for label, levels, parts in named:
        cond: dict[str, Any] = {
            "scenario": exp.scenario,
            "overrides": {},
            "model": exp.model,
            "role_models": dict(exp.role_models),
            "context": exp.context.model_dump(),
        }
        for where, level in [("set", exp.set), *parts]:
            _split_level(where, level, cond)
        cid = _slug(label)
        if cid in seen:
            raise ExperimentError(f"two conditions are both named {label!r}; rename one")
        seen.add(cid)
        out.append(Condition(id=cid, label=label, levels=levels, **cond))
    return out


def _scenario_path(exp: Experiment, ref: str) -> str:
    """A relative scenario path is looked up next to the experiment file first."""
    local = Path(exp.base_dir) / ref
    if not Path(ref).is_absolute() and local.exists():
        return str(local)
    return ref


def _fingerprint(cond: Condition, seed: int, scenario_text: str) -> str:
    blob = json.dumps(
        {
            "scenario": hashlib.sha256(scenario_text.encode()).hexdigest(),
            "overrides": cond.overrides,
            "model": cond.model,
            "role_models": cond.role_models,
            "context": cond.context,
            "seed": seed,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def plan_games(exp: Experiment, *, check: bool = True) -> list[GamePlan]:
    """Every game of the experiment, in a stable order (run-major, so an interrupted
    experiment has every condition about equally far along)."""
    conds = conditions_of(exp)
    texts: dict[str, str] = {}
    for c in conds:
        c.scenario = _scenario_path(exp, c.scenario)
        if c.scenario not in texts:
            try:
                texts[c.scenario] = resolve_path(c.scenario).read_text(encoding="utf-8")
            except ScenarioError as err:
                raise ExperimentError(f"condition {c.label}: {err}") from None
        if check:
            check_condition(c)
    names = {c.id for c in conds} | {c.label for c in conds}
    for a, b in exp.compare:
        for n in (a, b):
            if n not in names:
                raise ExperimentError(
                    f"compare: unknown condition {n!r} (conditions: "
                    f"{', '.join(c.label for c in conds)})"
                )
    plans = []
    for run in range(exp.runs):
        seed = exp.seeds[run] if exp.seeds is not None else exp.seed + run
        for c in conds:
            fp = _fingerprint(c, seed, texts[c.scenario])
            plans.append(
                GamePlan(
                    condition=c,
                    run=run,
                    seed=seed,
                    fingerprint=fp,
                    thread_id=f"{exp.name}.{c.id}.{run:03d}.{fp}",
                    folder=f"games/{c.id}/{run:03d}-{fp}",
                )
            )
    return plans


def check_condition(c: Condition) -> None:
    """Fail before any game is played: the scenario with its overrides loads and builds, its
    models parse, per-role models name real seats, and no seat waits for a person."""
    from wargraph.runner import GameError, check_scenario

    try:
        sc = check_scenario(c.scenario, c.overrides)
    except (ScenarioError, GameError, ImportError) as err:
        raise ExperimentError(f"condition {c.label}: {err}") from None
    for ref in [c.model, *c.role_models.values()]:
        try:
            parse_model_ref(ref)
        except ModelRefError as err:
            raise ExperimentError(f"condition {c.label}: {err}") from None
    seats = set(sc.roles) | set(getattr(sc, "teams", {}) or {})
    unknown = sorted(set(c.role_models) - seats)
    if unknown:
        raise ExperimentError(
            f"condition {c.label}: role_models names unknown seat(s) {unknown} "
            f"(seats: {', '.join(sorted(seats))})"
        )
    people = sorted(name for name, r in sc.roles.items() if r.kind == "human")
    if people:
        raise ExperimentError(
            f"condition {c.label}: seat(s) {people} are played by people; an experiment runs "
            f"unattended (set e.g. players.{people[0]}.kind=ai)"
        )


# --- running --------------------------------------------------------------------------------------


class Stopped(Exception):
    """Raised inside a game when the experiment is stopping; the game resumes next time."""


@dataclass
class Hooks:
    """Test and tooling hooks. `game_done(outcome, how)` runs in the main thread after each
    game that was played, resumed, re-judged or re-measured; `node(plan, node)` in the game's thread after
    each graph step. Raising KeyboardInterrupt from either stops the experiment as Ctrl-C does."""

    game_done: Callable[[dict[str, Any], str], None] | None = None
    node: Callable[[GamePlan, str], None] | None = None


@dataclass
class ExperimentResult:
    out_dir: Path
    counts: Counter = field(default_factory=Counter)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None
    elapsed_s: float = 0.0
    langsmith: str | None = None

    @property
    def new_games(self) -> int:
        return self.counts["played"] + self.counts["resumed"]


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


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)  # atomic: a kill never leaves half an outcome


def stored_outcome(
    out_dir: Path, plan: GamePlan, keys: Keys, *, judged_only: bool = False
) -> dict[str, Any] | None:
    """The game's outcome if it was extracted with the same questions (and measures, unless
    `judged_only`): then nothing needs to run again."""
    data = _read_json(out_dir / plan.folder / "outcome.json")
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
    plan: GamePlan, db: Path, gdir: Path, progress: Callable[[str, dict[str, Any]], None]
) -> tuple[dict[str, Any], str]:
    """Play a new game, or continue its thread from the last checkpoint (nothing doubled)."""
    from wargraph.runner import GameError, list_runs, play, resume

    if plan.thread_id in list_runs(db):
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
        judgements = [
            judge_question(
                record,
                qid=q.id,
                text=q.text,
                options=q.options,
                model=exp.judge_model,
                require_evidence=exp.judge.require_evidence,
            )
            for q in exp.questions
            if status == "done"
        ]
    measures, note = ({}, "")
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
        "tokens": sum(
            int(r.get("prompt_tokens", 0)) + int(r.get("completion_tokens", 0))
            for r in per_role.values()
        ),
        "fallbacks": int(usage.get("fallbacks", 0)),
    }


def run_game(
    exp: Experiment,
    plan: GamePlan,
    out_dir: Path,
    db: Path,
    keys: Keys,
    progress: Callable[[str, dict[str, Any]], None],
) -> tuple[dict[str, Any], str]:
    gdir = out_dir / plan.folder
    record = _finished_record(gdir)
    how, judged = "rejudged", None
    if record is None or record.get("thread_id") != plan.thread_id:
        record, how = play_or_resume(plan, db, gdir, progress)
    else:
        before = stored_outcome(out_dir, plan, keys, judged_only=True)
        if before is not None and exp.questions:
            how, judged = "remeasured", before.get("judgements") or None
    outcome = outcome_of_game(exp, plan, record, gdir, keys, how, judged)
    _write_json(gdir / "outcome.json", outcome)
    return outcome, how


def run_experiment(
    exp: Experiment,
    out_dir: str | Path | None = None,
    *,
    concurrency: int | None = None,
    hooks: Hooks | None = None,
    show_progress: bool = True,
    console: Any = None,
    grace_s: float = 30.0,
    report: bool = True,
) -> ExperimentResult:
    """Run every game not yet finished, `concurrency` at a time, then write the report.

    Games run in threads (the embedded model serialises its calls behind its lock, so games
    interleave; an OpenAI-compatible endpoint takes calls concurrently up to its limit). On
    Ctrl-C (or a hook's KeyboardInterrupt) running games stop after their current step, their
    checkpoints stay, and KeyboardInterrupt is raised again: run the experiment again to resume.
    """
    start = time.perf_counter()
    hooks = hooks or Hooks()
    out = Path(out_dir or Path("runs") / "experiments" / exp.name)
    plans = plan_games(exp)
    out.mkdir(parents=True, exist_ok=True)
    db = out / "checkpoints.sqlite"
    keys = (questions_key(exp), measures_key(exp))
    meta = experiment_meta(exp, plans)
    _write_json(out / "experiment.json", meta)

    result = ExperimentResult(out_dir=out)
    outcomes: dict[str, dict[str, Any]] = {}
    todo: queue.Queue[GamePlan] = queue.Queue()
    for plan in plans:
        stored = stored_outcome(out, plan, keys)
        if stored is not None:
            outcomes[plan.thread_id] = stored
            result.counts["skipped"] += 1
        else:
            todo.put(plan)
    pending = todo.qsize()
    stop = threading.Event()
    messages: queue.Queue[tuple] = queue.Queue()

    def worker() -> None:
        while not stop.is_set():
            try:
                plan = todo.get_nowait()
            except queue.Empty:
                return

            def progress(node: str, _values: dict[str, Any], plan: GamePlan = plan) -> None:
                if hooks.node:
                    hooks.node(plan, node)
                if stop.is_set():
                    raise Stopped()
                messages.put(("node", plan, node))

            messages.put(("start", plan))
            try:
                outcome, how = run_game(exp, plan, out, db, keys, progress)
                messages.put(("done", plan, outcome, how))
            except Stopped:
                messages.put(("stopped", plan))
                return
            except KeyboardInterrupt:
                messages.put(("interrupt", plan))
                return
            except Exception as exc:  # one broken game never stops the others
                messages.put(("failed", plan, f"{type(exc).__name__}: {exc}"))

    n_workers = max(1, min(concurrency or exp.concurrency, pending or 1))
    threads = [
        threading.Thread(target=worker, daemon=True, name=f"game-{i}") for i in range(n_workers)
    ]
    view = _ProgressView(exp, plans, result.counts["skipped"], show_progress, console)
    try:
        with view:
            for t in threads:
                t.start()
            finished = 0
            while finished < pending:
                try:
                    msg = messages.get(timeout=0.2)
                except queue.Empty:
                    if not any(t.is_alive() for t in threads) and messages.empty():
                        break
                    continue
                kind, plan = msg[0], msg[1]
                if kind == "start":
                    view.started(plan)
                elif kind == "node":
                    view.node(plan, msg[2])
                elif kind == "done":
                    finished += 1
                    outcomes[plan.thread_id] = msg[2]
                    result.counts[msg[3]] += 1
                    if msg[2]["status"] == "error":
                        result.counts["game errors"] += 1
                    view.finished(plan, msg[2]["status"])
                    if hooks.game_done:
                        hooks.game_done(msg[2], msg[3])
                elif kind == "failed":
                    finished += 1
                    result.counts["crashed"] += 1
                    view.finished(plan, "crashed", msg[2])
                elif kind == "interrupt":
                    raise KeyboardInterrupt
                elif kind == "stopped":
                    finished += 1
    except BaseException:
        stop.set()  # running games stop after their current step; their checkpoints stay
        deadline = time.monotonic() + grace_s
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        raise
    for t in threads:
        t.join()
    result.outcomes = [outcomes[p.thread_id] for p in plans if p.thread_id in outcomes]
    result.elapsed_s = time.perf_counter() - start
    meta["counts"] = dict(result.counts)
    meta["elapsed_s"] = round(result.elapsed_s, 1)
    meta["crashed"] = view.crashed
    _write_json(out / "experiment.json", meta)
    if report:
        from wargraph.evals.report import write_report

        result.report = write_report(out, meta, result.outcomes)
    if exp.langsmith:
        result.langsmith = log_langsmith(meta, result.outcomes)
    return result


def experiment_meta(exp: Experiment, plans: list[GamePlan]) -> dict[str, Any]:
    conds: dict[str, Condition] = {}
    for p in plans:
        conds.setdefault(p.condition.id, p.condition)
    return {
        "name": exp.name,
        "description": exp.description,
        "scenario": exp.scenario,
        "runs": exp.runs,
        "seed": exp.seed,
        "model": exp.model,
        "judge_model": exp.judge_model,
        "concurrency": exp.concurrency,
        "axes": list(exp.grid) + (["condition"] if exp.conditions else []),
        "conditions": [
            {
                "id": c.id,
                "label": c.label,
                "levels": c.levels,
                "scenario": c.scenario,
                "overrides": c.overrides,
                "model": c.model,
                "role_models": c.role_models,
            }
            for c in conds.values()
        ],
        "questions": [
            {"id": q.id, "text": q.text, "options": options_of(q.options)} for q in exp.questions
        ],
        "compare": [list(pair) for pair in exp.compare],
        "games": len(plans),
    }


class _ProgressView:
    """A Rich progress display: one bar per condition and one for the whole experiment."""

    def __init__(self, exp, plans, skipped: int, show: bool, console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.crashed: list[dict[str, str]] = []
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.fields[status]}"),
            console=console,
            disable=not show,
        )
        per: Counter = Counter(p.condition.id for p in plans)
        self.total = self.progress.add_task(
            f"[bold]{exp.name}", total=len(plans), completed=skipped, status=""
        )
        self.tasks = {}
        self.running: dict[str, str] = {}
        for cid, n in per.items():
            label = next(p.condition.label for p in plans if p.condition.id == cid)
            self.tasks[cid] = self.progress.add_task(f"  {label}", total=n, status="")

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def started(self, plan: GamePlan) -> None:
        self.running[plan.thread_id] = f"run {plan.run}: setup"
        self._status(plan)

    def node(self, plan: GamePlan, node: str) -> None:
        self.running[plan.thread_id] = f"run {plan.run}: {node}"
        self._status(plan)

    def finished(self, plan: GamePlan, status: str, error: str = "") -> None:
        self.running.pop(plan.thread_id, None)
        if status == "crashed":
            self.crashed.append({"thread_id": plan.thread_id, "error": error})
        self.progress.advance(self.total)
        self.progress.advance(self.tasks[plan.condition.id])
        self._status(plan)

    def _status(self, plan: GamePlan) -> None:
        mine = [s for t, s in self.running.items() if f".{plan.condition.id}." in t]
        self.progress.update(self.tasks[plan.condition.id], status=", ".join(mine))
        self.progress.update(self.total, status=f"{len(self.running)} running")


# --- LangSmith --------------------------------------------------------------------------------------


def langsmith_parts(meta: dict[str, Any], outcomes: list[dict[str, Any]]):
    """Examples (one per game), a target returning the game's outcomes, and an evaluator that
    turns answers and measures into feedback. Built offline; only `log_langsmith` connects."""
    by_key = {(o["condition"], o["run"]): o for o in outcomes}
    examples = [
        {
            "inputs": {
                "condition": o["condition"],
                "run": o["run"],
                "seed": o["seed"],
                "levels": o["levels"],
            },
            "metadata": {"thread_id": o["thread_id"], "experiment": meta["name"]},
        }
        for o in outcomes
    ]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        o = by_key[(inputs["condition"], inputs["run"])]
        return {"status": o["status"], "answers": o["answers"], "measures": o["measures"]}

    def evaluator(outputs: dict[str, Any]) -> dict[str, Any]:
        results = []
        for qid, answer in (outputs.get("answers") or {}).items():
            score = {"yes": 1.0, "no": 0.0}.get(answer)
            results.append({"key": qid, "value": answer, "score": score})
        for name, value in (outputs.get("measures") or {}).items():
            results.append({"key": name, "score": float(value)})
        return {"results": results}

    return examples, target, evaluator


def log_langsmith(meta: dict[str, Any], outcomes: list[dict[str, Any]]) -> str | None:
    """Log the experiment to LangSmith, only when LANGSMITH_API_KEY is set (else nothing
    connects). A failure is reported and never fails the experiment."""
    if not os.environ.get("LANGSMITH_API_KEY") or not outcomes:
        return None
    try:
        from langsmith import Client, evaluate

        examples, target, evaluator = langsmith_parts(meta, outcomes)
        client = Client()
        digest = hashlib.sha256(
            json.dumps([e["inputs"] for e in examples], sort_keys=True).encode()
        ).hexdigest()[:8]
        name = f"wargraph-{meta['name']}-{digest}"
        if not client.has_dataset(dataset_name=name):
            ds = client.create_dataset(name, description=meta.get("description") or meta["name"])
            client.create_examples(
                dataset_id=ds.id,
                inputs=[e["inputs"] for e in examples],
                metadata=[e["metadata"] for e in examples],
            )
        res = evaluate(
            target,
            data=name,
            evaluators=[evaluator],
            experiment_prefix=meta["name"],
            metadata={"scenario": meta["scenario"], "model": meta["model"]},
            upload_results=True,
        )
        return str(getattr(res, "experiment_name", name))
    except Exception as exc:  # offline, bad key, API change: the local report still stands
        return f"not logged ({type(exc).__name__}: {str(exc)[:200]})"


# --- command line ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM (a scheduler or `kill`) stops the experiment as Ctrl-C does: games stop after
    their current step and everything finished is kept."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_from_cli(
    file: str | Path,
    *,
    runs: int | None = None,
    model: str | None = None,
    out: str | Path | None = None,
    console: Any = None,
) -> int:
    """`wargraph experiment FILE`: returns the exit code (0 done, 1 some games crashed,
    2 bad input, 130 interrupted — run again to resume)."""
    from rich.console import Console

    from wargraph.runner import GameError

    console = console or Console()
    try:
        exp = load_experiment(file, runs=runs, model=model)
        out_dir = Path(out) if out else Path("runs") / "experiments" / exp.name
        n = len(conditions_of(exp)) * exp.runs
        console.print(
            f"[bold]{exp.name}[/]: {n} games ({exp.runs} runs x {n // exp.runs} conditions) on "
            f"{exp.model}, {exp.concurrency} at a time -> {out_dir}/"
        )
        with _terminate_as_interrupt():
            result = run_experiment(exp, out_dir, console=console)
    except (ExperimentError, ScenarioError, GameError, ModelRefError) as err:
        console.print(f"[bold red]error:[/] {err}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted[/]: finished games and checkpoints are kept; run the same "
            "command again to resume."
        )
        return 130
    c = result.counts
    console.print(
        f"[green]done[/] in {result.elapsed_s:.0f} s: {c['played']} played, {c['resumed']} "
        f"resumed, {c['rejudged']} re-judged, {c['remeasured']} re-measured, {c['skipped']} "
        "already finished"
        + (f", [red]{c['crashed']} crashed[/]" if c["crashed"] else "")
        + (f", {c['game errors']} ended in an error" if c["game errors"] else "")
    )
    if result.report:
        console.print(f"report: {result.report}")
    if result.langsmith:
        console.print(f"LangSmith: {result.langsmith}")
    return 1 if c["crashed"] else 0
