"""The experiment file: its schema, validation with one-line errors, and loading."""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from wargraph.models.chat import ModelRefError, parse_model_ref

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
    # None: each seat's model profile's (60 s and 2 retries small, 300 s capable: a slow
    # endpoint's answers are waited for, not thrown away)
    call_timeout: float | None = Field(default=None, gt=0)
    retries: int | None = Field(default=None, ge=0, le=10)


class AxisValues(BaseModel):
    """Shorthand axis: one `--set` key over several values (level names are the values)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1)
    values: list[Any] = Field(min_length=1)


Level = dict[str, Any]
Workers = Literal["auto", "threads", "processes"]  # where games run (`experiment.procs`)


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
    # where games run: threads of this process, or worker processes (games of scripted seats
    # and bots use every core); auto: processes when no seat or judge calls a model
    workers: Workers = "auto"
    questions: list[QuestionSpec] = Field(default_factory=list)
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    # the family's own measures (WarAgent accuracy, Diplomacy scores and rates): true for the
    # default set (two levels of names), false for none, or a list of glob patterns
    measures: bool | list[str] = True
    compare: list[tuple[str, str]] = Field(default_factory=list)
    langsmith: bool = True  # log as a LangSmith experiment when LANGSMITH_API_KEY is set
    # reuse model answers (wargraph.models.cache): true keeps them in the games' store, or a
    # SQLite file / postgresql:// URL (relative paths: from where wargraph runs)
    cache: bool | str = False

    # where relative scenario paths are looked up (the experiment file's folder)
    base_dir: str = Field(default=".", exclude=True)
    # the file's own `runs` when `--runs` replaced it (the report says which count was played)
    _file_runs: int | None = PrivateAttr(default=None)

    @property
    def file_runs(self) -> int | None:
        return self._file_runs

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


def format_validation(source: str, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        where = ".".join(
            str(p) for p in e["loc"] if not str(p).startswith(("function-", "AxisValues"))
        )
        msg = e["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {where}: {msg}" if where else f"{source}: {msg}")
    return "\n".join(dict.fromkeys(lines))


def shipped_experiments() -> dict[str, Path]:
    return shipped_files("experiments")


def shipped_files(folder: str) -> dict[str, Path]:
    """The YAML files shipped in `src/wargraph/evals/<folder>/`, by name (experiments, tournaments)."""
    root = importlib.resources.files("wargraph.scenarios") / folder
    try:
        return {Path(p.name).stem: Path(str(p)) for p in root.iterdir() if p.name.endswith(".yaml")}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def shipped_instead(path: Path, folder: str, shipped: dict[str, Path]) -> Path | None:
    """`src/wargraph/evals/<folder>/NAME.yaml` as the README writes it, run outside a checkout (no such file
    here): the shipped file of that name, said in a note; else None."""
    import warnings

    from wargraph.kernel.scenario import ScenarioNote

    parts = path.parts
    if len(parts) < 3 or parts[-3:-1] != ("scenarios", folder) or path.stem not in shipped:
        return None
    kind = folder.removesuffix("s")
    warnings.warn(
        f"{path} is not in this folder: running the shipped {kind} {path.stem!r} "
        f"(`wargraph {kind} {path.stem}` names it from anywhere)",
        ScenarioNote,
        stacklevel=2,
    )
    return shipped[path.stem]


def resolve_experiment(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.exists():
        return path
    shipped = shipped_experiments()
    if path.suffix in (".yaml", ".yml"):
        instead = shipped_instead(path, "experiments", shipped)
        if instead is not None:
            return instead
        hint = (
            f"; the shipped experiment {path.stem!r} is named without its folder"
            if path.stem in shipped
            else ""
        )
        raise ExperimentError(
            f"{name_or_path}: no such experiment file{hint} "
            f"(shipped: {', '.join(sorted(shipped)) or 'none'})"
        )
    if str(name_or_path) in shipped:
        return shipped[str(name_or_path)]
    raise ExperimentError(
        f"{name_or_path}: no such file and no shipped experiment of that name "
        f"(shipped: {', '.join(sorted(shipped)) or 'none'})"
    )


def read_fields(path: Path, kind: str, error: type[Exception]) -> dict[str, Any]:
    """The mapping at the top of a YAML file (an experiment, a tournament); `error` with one
    line naming the file and what is wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(f"{path}:{at}: YAML syntax error: {getattr(err, 'problem', err)}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{path}: not a readable text file ({err})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: expected a mapping of {kind} fields at the top level")
    return data


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
        data = read_fields(path, "experiment", ExperimentError)
        data.setdefault("name", path.stem)
    data["base_dir"] = base
    file_runs = data.get("runs", 1)
    if runs is not None:
        if runs < 1:
            raise ExperimentError(f"--runs {runs}: give at least one run per condition")
        data["runs"] = runs
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as err:
        raise ExperimentError(format_validation(where, err)) from None
    if runs is not None and file_runs != runs:
        exp._file_runs = file_runs
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
