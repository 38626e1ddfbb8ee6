"""Conditions (the grid's product and the named conditions) and the games planned from them."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.spec import (
    CONTEXT_FIELDS,
    AxisValues,
    Experiment,
    ExperimentError,
    Level,
)
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError, resolve_path
from wargraph.models.chat import ModelRefError, parse_model_ref


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
    # where model answers are reused (wargraph.models.cache): how the game is paid for, not
    # what it is, so neither in the fingerprint nor in the thread id
    model_cache: str | None = None

    def game_context(self) -> GameContext:
        return GameContext(
            model=self.condition.model,
            role_models=dict(self.condition.role_models),
            seed=self.seed,
            model_cache=self.model_cache,
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


def scenario_path(exp: Experiment, ref: str) -> str:
    """A relative scenario path is looked up next to the experiment file first."""
    local = Path(exp.base_dir) / ref
    if not Path(ref).is_absolute() and local.exists():
        return str(local)
    return ref


def scenario_fingerprint(cond: Condition, seed: int, scenario_text: str) -> str:
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
        c.scenario = scenario_path(exp, c.scenario)
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
            fp = scenario_fingerprint(c, seed, texts[c.scenario])
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
    from wargraph.runs.runner import GameError, check_scenario

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
