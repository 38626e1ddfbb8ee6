"""Running an experiment in this process: games in threads, progress, the report."""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.game import (
    Stopped,
    measures_key,
    questions_key,
    run_game,
    stored_outcome,
    write_json,
)
from wargraph.evals.experiment.langsmith_log import log_langsmith
from wargraph.evals.experiment.plan import Condition, GamePlan, plan_games
from wargraph.evals.experiment.progress import ProgressView
from wargraph.evals.experiment.spec import Experiment
from wargraph.evals.judge import options_of


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
    write_json(out / "experiment.json", meta)

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
    view = ProgressView(exp, plans, result.counts["skipped"], show_progress, console)
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
    write_json(out / "experiment.json", meta)
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

