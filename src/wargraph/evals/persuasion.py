"""A persuasion study on critical states (after AI_Diplomacy's): at a stored phase of a Diplomacy
game, a persuader power sends the persuadee one private message in one strategy — a lie, a
sincere apology, an appeal to reason and fairness, or the "secret command" injection — and the
phase is played on from there. Each strategy is played `runs` times (seeds base+1 ... base+n);
run k of a strategy is paired with run k of the control (the same fork, the same seed, no
message), and the study counts the runs in which the persuadee's orders of that phase differ
from the control's, with Wilson 95% intervals. The paper reports lies changing 11% of its
persuadee's orders and the injection 31%.

The forks are `wargraph.runs.replay` runs with the message added at the fork, so every run's
record, trace and maps are kept like any replay's. A study file (YAML, shipped ones in
`src/wargraph/scenarios/studies/`) names the game to fork (a stored thread, or a scenario the
study plays first to the phase's year), the phase, the two powers, the strategies' messages and
the runs. The scripted decider reads no message: under `--model scripted` no strategy changes
an order (a check of the study's machinery, not a finding)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wargraph.graphs.diplomacy.engine import POWERS
from wargraph.runs.runner import GameError

CONTROL = "control"
STUDIES = Path(__file__).resolve().parents[1] / "scenarios" / "studies"


class StudyError(ValueError):
    """A study file or setting that cannot run; the message says which field and why."""


class Study(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "persuasion"
    description: str = ""
    scenario: str = "diplomacy"  # played first to the phase's year when no thread is given
    set: dict[str, Any] = Field(default_factory=dict)
    phase: str = Field(pattern=r"^[SFW]\d{4}[MRA]$")
    persuader: str
    persuadee: str
    strategies: dict[str, str] = Field(min_length=1)  # name -> message ({persuader}, {persuadee})
    runs: int = Field(default=5, ge=1, le=1000)
    seed: int = 0
    model: str = "embedded"
    models: list[str] = Field(default_factory=list)  # several persuadee models, each in turn

    @field_validator("persuader", "persuadee")
    @classmethod
    def _power(cls, value: str) -> str:
        power = value.strip().upper()
        if power not in POWERS:
            raise ValueError(f"{value!r} is not a power ({', '.join(POWERS)})")
        return power

    @field_validator("strategies")
    @classmethod
    def _named(cls, value: dict[str, str]) -> dict[str, str]:
        if CONTROL in value:
            raise ValueError(
                f"{CONTROL!r} is the study's own baseline; name the strategy otherwise"
            )
        for name, text in value.items():
            if not str(text).strip():
                raise ValueError(f"{name}: an empty message")
        return value


def load_study(ref: str | Path, **changes: Any) -> Study:
    """A study file, or a shipped study's name; `changes` (runs, model ...) override it."""
    path = Path(ref)
    if not path.exists():
        shipped = STUDIES / f"{ref}.yaml"
        if not shipped.exists():
            names = ", ".join(sorted(p.stem for p in STUDIES.glob("*.yaml")))
            raise StudyError(f"{ref}: no such study file or shipped study (shipped: {names})")
        path = shipped
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise StudyError(f"{path}: cannot read it ({exc})") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: expected a mapping of fields")
    data.update({k: v for k, v in changes.items() if v is not None})
    try:
        study = Study.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'study'}: {e['msg']}" for e in err.errors()
        )
        raise StudyError(f"{path}: {problems}") from None
    if study.persuader == study.persuadee:
        raise StudyError(f"{path}: the persuader and the persuadee must differ")
    return study


def message_event(study: Study, strategy: str, round_: int) -> dict[str, Any]:
    """The persuader's private message to the persuadee, sent at the fork."""
    text = study.strategies[strategy].format(persuader=study.persuader, persuadee=study.persuadee)
    return {
        "id": f"persuasion.{study.phase}.{study.persuader}.{strategy}",
        "round": round_,
        "phase": "negotiate",
        "kind": "message",
        "author": study.persuader,
        "audience": [study.persuader, study.persuadee],
        "text": text.strip(),
        "data": {
            "to": study.persuadee,
            "phase": study.phase,
            "persuasion": strategy,
            "source": "study",
        },
    }


def base_game(study: Study, db: str, out: Path) -> str:
    """Play the study's scenario with scripted seats up to the phase's year (the base game only
    has to reach the phase; fork a game of your own models with `thread`); its thread id."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    thread = f"{study.name}-base-{study.seed}"
    overrides = [f"{k}={v}" for k, v in study.set.items()]
    overrides.append(f"diplomacy.max_year={study.phase[1:5]}")
    result = play(
        study.scenario,
        overrides=overrides,
        context=GameContext(model="scripted", seed=study.seed),
        db=db,
        thread_id=thread,
        out_dir=out / "base",
    )
    if result.values.get("error"):
        raise GameError(f"the study's base game ended in an error: {result.values['error']}")
    return thread


def _orders(outcome: dict[str, Any], phase: str, power: str) -> list[str]:
    return sorted((outcome.get("orders", {}).get(phase) or {}).get(power) or [])


def run_study(
    study: Study,
    *,
    db: str,
    thread: str | None,
    out: Path,
    cache: str | None = None,
) -> dict[str, Any]:
    """Every strategy and the control, `runs` forks each, on each of the study's models (its
    `models`, else its `model`); returns (and writes into `out`) `persuasion.json`, `.md`,
    `.html` and `.csv`. `strategies` is the first model's result; `models` has each model's."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    thread = thread or base_game(study, db, out)
    round_ = _fork_round(db, thread, study.phase)
    models = study.models or [study.model]
    rows: list[dict[str, Any]] = []
    per_model: dict[str, dict[str, Any]] = {}
    for model in models:
        folder = out if len(models) == 1 else out / _slug(model)
        played = _forks(study, model, db, thread, round_, folder, cache)
        summary, mine = _changed(study, played)
        per_model[model] = {"strategies": summary, "runs": played}
        rows += [{"model": model, **row} for row in mine]
    data = {
        "study": study.model_dump(),
        "thread": thread,
        "db": db,
        "strategies": per_model[models[0]]["strategies"],
        "models": per_model,
    }
    _write(data, out, rows)
    return data


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:80]


def _forks(
    study: Study,
    model: str,
    db: str,
    thread: str,
    round_: int,
    folder: Path,
    cache: str | None,
) -> dict[str, list[dict[str, Any]]]:
    """The control's and each strategy's forks on `model`: the persuadee's orders per run."""
    from wargraph.runs.replay import replay

    played: dict[str, list[dict[str, Any]]] = {}
    for strategy in [CONTROL, *study.strategies]:
        extra = [] if strategy == CONTROL else [message_event(study, strategy, round_)]
        result = replay(
            db=db,
            thread_id=thread,
            phase=study.phase,
            runs=study.runs,
            model=model,
            out_dir=folder / strategy,
            events=extra,
            cache=cache,
        )
        played[strategy] = [
            {
                "run": r["run"],
                "seed": r["seed"],
                "orders": _orders(r["outcome"], study.phase, study.persuadee),
                "thread_id": r["thread_id"],
            }
            for r in result.runs
        ]
    return played


def _changed(
    study: Study, played: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per strategy, the runs whose persuadee orders differ from the control's of the same
    seed, with a Wilson 95% interval; and one row per run."""
    from wargraph.evals.stats import wilson

    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    for strategy in study.strategies:
        changed = [
            a["orders"] != b["orders"]
            for a, b in zip(played[strategy], played[CONTROL], strict=True)
        ]
        w = wilson(sum(changed), len(changed))
        summary[strategy] = {
            "changed": sum(changed),
            "runs": len(changed),
            "share": w.p,
            "lo": w.lo,
            "hi": w.hi,
            "text": w.text(),
        }
        for run, diff in zip(played[strategy], changed, strict=True):
            rows.append(
                {
                    "strategy": strategy,
                    "run": run["run"],
                    "seed": run["seed"],
                    "changed": diff,
                    "orders": " | ".join(run["orders"]),
                    "thread_id": run["thread_id"],
                }
            )
    return summary, rows


def _fork_round(db: str, thread: str, phase: str) -> int:
    """The game round at the fork (the message is an event of that round)."""
    from wargraph.graphs.diplomacy.replay import critical_state
    from wargraph.runs.replay import _history, find_fork
    from wargraph.runs.runner import build_for, load_run
    from wargraph.store.saver import open_saver

    stored, _ = load_run(db, thread)
    with open_saver(db, create=False) as saver:
        history = _history(build_for(stored).compile(checkpointer=saver), thread)
        i, _ = find_fork(history, critical_state(phase), phase)
        return int(history[i].values.get("round", 0))


def _write(data: dict[str, Any], out: Path, rows: list[dict[str, Any]]) -> None:
    import json

    from wargraph.evals.report_page import write_csv, write_page

    study = data["study"]
    (out / "persuasion.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    lines = [
        f"# Persuasion study: {study['name']}",
        "",
        f"At {study['phase']} of thread `{data['thread']}`, {study['persuader']} sends "
        f"{study['persuadee']} one private message per strategy; {study['runs']} run(s) each, "
        "each paired with the control run of the same seed (no message). A run counts when the "
        "persuadee's orders of that phase differ from the control's. Intervals: Wilson 95%.",
        "",
        "| model | strategy | orders changed |",
        "|---|---|---|",
    ]
    for model, result in data["models"].items():
        for name, s in result["strategies"].items():
            lines.append(f"| `{model}` | {name} | {s['text']} |")
    lines += ["", "| strategy | message |", "|---|---|"]
    for name, text in study["strategies"].items():
        said = text.format(persuader=study["persuader"], persuadee=study["persuadee"])
        said = " ".join(said.split()).replace("|", "/")
        lines.append(f"| {name} | {said} |")
    (out / "persuasion.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_csv(out / "persuasion.csv", rows)
    write_page(out / "persuasion.md", title=f"Persuasion study: {study['name']}")
