"""Running an experiment in this process: games in threads, progress, the report."""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.game import (
    Keys,
    Stopped,
    measures_key,
    questions_key,
    run_game,
    stored_outcome,
    write_json,
)
from wargraph.evals.experiment.langsmith_log import log_langsmith
from wargraph.evals.experiment.lock import folder_lock
from wargraph.evals.experiment.plan import Condition, GamePlan, plan_games
from wargraph.evals.experiment.procs import choose, game_processes
from wargraph.evals.experiment.progress import ProgressView
from wargraph.evals.experiment.spec import Experiment, Workers
from wargraph.evals.experiment.stores import check_store
from wargraph.evals.judge import options_of
from wargraph.models import cache as model_cache
from wargraph.store.lease import GameHeld


@dataclass
class Hooks:
    """Test and tooling hooks. `game_done(outcome, how)` runs in the main thread after each
    game that was played, resumed, re-judged or re-measured; `node(plan, node)` in the game's thread after
    each graph step (so games run in threads, never in worker processes, when it is given).
    Raising KeyboardInterrupt from either stops the experiment as Ctrl-C does."""

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
    # thread id -> pid of the worker that finished it (Ray tasks, worker processes)
    workers: dict[str, int] = field(default_factory=dict)

    @property
    def new_games(self) -> int:
        return self.counts["played"] + self.counts["resumed"]


@dataclass
class Run:
    """One run of an experiment as a driver sees it: the games, those still to play, and the
    outcomes gathered so far (the same whether games run in threads or as Ray tasks)."""

    exp: Experiment
    out: Path
    plans: list[GamePlan]
    keys: Keys
    meta: dict[str, Any]
    result: ExperimentResult
    todo: list[GamePlan]
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def done(
        self, plan: GamePlan, outcome: dict[str, Any], how: str, view: ProgressView, hooks: Hooks
    ) -> None:
        self.outcomes[plan.thread_id] = outcome
        self.result.counts[how] += 1
        if outcome["status"] == "error":
            self.result.counts["game errors"] += 1
        view.finished(plan, outcome["status"])
        if hooks.game_done:
            hooks.game_done(outcome, how)

    def crashed(self, plan: GamePlan, error: str, view: ProgressView) -> None:
        self.result.counts["crashed"] += 1
        view.finished(plan, "crashed", error)


def out_path(exp: Experiment, out_dir: str | Path | None) -> Path:
    return Path(out_dir or Path("runs") / "experiments" / exp.name)


def start_run(exp: Experiment, out: Path, plans: list[GamePlan]) -> Run:
    """Write the experiment's description and sort its games into finished and to do (call
    it holding the folder's lock)."""
    keys = (questions_key(exp), measures_key(exp))
    meta = experiment_meta(exp, plans)
    write_json(out / "experiment.json", meta)
    run = Run(exp, out, plans, keys, meta, ExperimentResult(out_dir=out), todo=[])
    for plan in plans:
        stored = stored_outcome(out, plan, keys)
        if stored is not None:
            run.outcomes[plan.thread_id] = stored
            run.result.counts["skipped"] += 1
        else:
            run.todo.append(plan)
    return run


def finish_run(
    run: Run, crashed: list[dict[str, str]], report: bool, pages: bool = False
) -> ExperimentResult:
    """Outcomes in plan order, the description with counts, the report (with `pages`, each
    game's page, written now that the games are over) and LangSmith."""
    result, meta = run.result, run.meta
    result.outcomes = [run.outcomes[p.thread_id] for p in run.plans if p.thread_id in run.outcomes]
    result.elapsed_s = time.perf_counter() - run.started
    meta["counts"] = dict(result.counts)
    meta["elapsed_s"] = round(result.elapsed_s, 1)
    meta["crashed"] = crashed
    write_json(run.out / "experiment.json", meta)
    if report:
        from wargraph.evals.report import write_report

        result.report = write_report(run.out, meta, result.outcomes, pages=pages)
    if run.exp.langsmith:
        result.langsmith = log_langsmith(meta, result.outcomes)
    return result


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
    db: str | Path | None = None,
    held_wait_s: float = 1.0,
    plans: list[GamePlan] | None = None,
    pages: bool = False,
    workers: Workers | None = None,
) -> ExperimentResult:
    """Run every game not yet finished, `concurrency` at a time, then write the report (and
    with `pages` each game's page, after the games).

    Games run in threads (the embedded model serialises its calls behind its lock, so games
    interleave; an OpenAI-compatible endpoint takes calls concurrently up to its limit), or,
    when no seat calls a model, in worker processes that use every core (`workers`, default
    the experiment's: `wargraph.evals.experiment.procs`). On
    Ctrl-C (or a hook's KeyboardInterrupt) running games stop after their current step, their
    checkpoints stay, and KeyboardInterrupt is raised again: run the experiment again to resume.
    `db`: the checkpoint store (default `<out>/checkpoints.sqlite`; a `postgresql://` URL
    shares it with other machines). A second run on the same folder is refused while one runs.
    `plans`: the games to play, when another planner made them (a tournament's schedule).
    """
    out = out_path(exp, out_dir)
    plans = plan_games(exp) if plans is None else plans
    store = db if db is not None else out / "checkpoints.sqlite"
    check_store(store)
    plans = with_cache(exp, plans, store)
    with folder_lock(out):
        run = start_run(exp, out, plans)
        return _run_threads(
            run,
            store,
            concurrency,
            hooks or Hooks(),
            show_progress,
            console,
            grace_s,
            report,
            held_wait_s,
            pages,
            workers or exp.workers,
        )


def with_cache(exp: Experiment, plans: list[GamePlan], store: str | Path) -> list[GamePlan]:
    """The plans with the experiment's model cache (`cache:`; wargraph.models.cache), opened
    first so that a bad location fails once, in one line, before any game."""
    answers = model_cache.location(exp.cache, store)
    if not answers:
        return plans
    model_cache.check(answers)
    return [replace(p, model_cache=answers) for p in plans]


def _run_threads(
    run: Run,
    db: str | Path,
    concurrency: int | None,
    hooks: Hooks,
    show_progress: bool,
    console: Any,
    grace_s: float,
    report: bool,
    held_wait_s: float,
    pages: bool = False,
    workers: Workers = "threads",
) -> ExperimentResult:
    exp, out, keys = run.exp, run.out, run.keys
    todo: queue.Queue[GamePlan] = queue.Queue()
    for plan in run.todo:
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
                if procs is not None:
                    outcome, how, pid = procs.play(exp, plan, out, db, keys)
                    run.result.workers[plan.thread_id] = pid
                else:
                    outcome, how = run_game(exp, plan, out, db, keys, progress)
                messages.put(("done", plan, outcome, how))
            except Stopped:
                messages.put(("stopped", plan))
                return
            except KeyboardInterrupt:
                messages.put(("interrupt", plan))
                return
            except GameHeld:
                # another driver is playing it: try again later, when it is done there and
                # only its record is left to take from the store
                todo.put(plan)
                stop.wait(held_wait_s)
            except Exception as exc:  # one broken game never stops the others
                messages.put(("failed", plan, f"{type(exc).__name__}: {exc}"))

    n_workers = max(1, min(concurrency or exp.concurrency, pending or 1))
    by_thread = {p.thread_id: p for p in run.todo}

    def step_in_process(thread_id: str, node: str) -> None:
        messages.put(("node", by_thread[thread_id], node))

    steps = step_in_process if show_progress else None  # nobody to show a step to: not sent

    threads = [
        threading.Thread(target=worker, daemon=True, name=f"game-{i}") for i in range(n_workers)
    ]
    view = ProgressView(exp, run.plans, run.result.counts["skipped"], show_progress, console)
    ended: set[str] = set()  # a worker process's last steps may come after its game's end
    # a node hook runs in the game's thread, so it keeps the games in threads
    n_procs = 0 if hooks.node else choose(workers, exp, run.todo, n_workers)
    with game_processes(n_procs, steps) as procs:
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
                        if plan.thread_id not in ended:
                            view.node(plan, msg[2])
                    elif kind == "done":
                        finished += 1
                        ended.add(plan.thread_id)
                        run.done(plan, msg[2], msg[3], view, hooks)
                    elif kind == "failed":
                        finished += 1
                        ended.add(plan.thread_id)
                        run.crashed(plan, msg[2], view)
                    elif kind == "interrupt":
                        raise KeyboardInterrupt
                    elif kind == "stopped":
                        finished += 1
        except BaseException:
            stop.set()  # running games stop after their current step; their checkpoints stay
            if procs is not None:
                procs.stop.set()
            deadline = time.monotonic() + grace_s
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
            raise
        for t in threads:
            t.join()
    return finish_run(run, view.crashed, report, pages)


def experiment_meta(exp: Experiment, plans: list[GamePlan]) -> dict[str, Any]:
    conds: dict[str, Condition] = {}
    for p in plans:
        conds.setdefault(p.condition.id, p.condition)
    return {
        "name": exp.name,
        "description": exp.description,
        "scenario": exp.scenario,
        "runs": exp.runs,
        "file_runs": exp.file_runs,  # the file's runs when --runs replaced them, else None
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
