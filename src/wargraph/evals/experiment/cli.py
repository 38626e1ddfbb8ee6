"""`wargraph experiment FILE`: the command line around running an experiment."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TypeVar

from wargraph.evals.experiment.plan import conditions_of
from wargraph.evals.experiment.preflight import preflight_experiment
from wargraph.evals.experiment.run import run_experiment
from wargraph.evals.experiment.spec import ExperimentError, load_experiment
from wargraph.kernel.scenario import ScenarioError
from wargraph.models.chat import (
    ModelRefError,
    endpoint_concurrency,
    endpoint_env_with,
    set_endpoint_concurrency,
)
from wargraph.seats.terminal import safe
from wargraph.store.errors import StoreError, describe

T = TypeVar("T")


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler or `kill`) stops the experiment as Ctrl-C does: games stop after
    their current step and everything finished is kept."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_guarded(console: Any, body: Callable[[], T]) -> T | int:
    """`body()` (it reads a file and plays games) with the command line's two early ends: a
    known error is one line (exit code 2); Ctrl-C or SIGTERM stops after the games' current
    steps and keeps everything finished (exit code 130: the same command resumes). Returns
    body's result, or the exit code."""
    from wargraph.runs.runner import GameError

    try:
        with _terminate_as_interrupt():
            return body()
    except (ExperimentError, ScenarioError, GameError, ModelRefError, StoreError) as err:
        console.print(f"[bold red]error:[/] {safe(err)}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        import shlex
        import sys

        again = shlex.join(["wargraph", *sys.argv[1:]])
        console.print(
            "[yellow]interrupted[/]: finished games and checkpoints are kept; run the same "
            f"command again to resume: {safe(again)}",
            soft_wrap=True,
        )
        return 130


def run_from_cli(
    file: str | Path,
    *,
    runs: int | None = None,
    model: str | None = None,
    out: str | Path | None = None,
    console: Any = None,
    db: str | None = None,
    ray: str | None = None,
    cpus_per_game: float = 1.0,
    concurrency: int | None = None,
    calls_per_endpoint: int | None = None,
    pages: bool = False,
    cache: bool | str | None = None,
) -> int:
    """`wargraph experiment FILE`: returns the exit code (0 done, 1 some games crashed,
    2 bad input, 130 interrupted — run again to resume). `db`: the checkpoint store (a
    `postgresql://` URL or a SQLite file); `ray`: run each game as a task on that Ray cluster
    ("auto": this machine's cluster, or a local one). `concurrency`: games at once in this
    process (overrides the file); `calls_per_endpoint`: model calls at once per
    OpenAI-compatible endpoint, per process (else WARGRAPH_ENDPOINT_CONCURRENCY, default
    max(8, the seats a game asks at once)); `pages`: each game's page, after the games;
    `cache`: reuse model answers (true: in the games' store; or a file or URL), overriding the
    file's `cache:`."""
    from rich.console import Console

    console = console or Console()

    def body() -> Any:
        exp = load_experiment(file, runs=runs, model=model)
        if concurrency is not None:
            if not 1 <= concurrency <= 64:
                raise ExperimentError(f"--concurrency {concurrency}: expected 1 to 64")
            exp = exp.model_copy(update={"concurrency": concurrency})
        if cache is not None:
            exp = exp.model_copy(update={"cache": cache})
        if calls_per_endpoint is not None:
            set_endpoint_concurrency(calls_per_endpoint)
            if ray:  # Ray's worker processes on this machine inherit the variable
                os.environ["WARGRAPH_ENDPOINT_CONCURRENCY"] = endpoint_env_with(calls_per_endpoint)
        out_dir = Path(out) if out else Path("runs") / "experiments" / exp.name
        with console.status("checking the models ..."):
            preflight_experiment(exp)
        n = len(conditions_of(exp)) * exp.runs
        where = f"as Ray tasks on {ray}" if ray else f"{exp.concurrency} at a time"
        where += f", at most {endpoint_concurrency()} calls at once per endpoint"
        store = f", store {describe(db)}" if db else ""
        console.print(
            f"[bold]{safe(exp.name)}[/]: {n} games ({exp.runs} runs x {n // exp.runs} "
            f"conditions) on {safe(exp.model)}, {safe(where + store)} -> {safe(out_dir)}/"
        )
        if ray:
            from wargraph.evals.experiment.cluster import run_experiment_on_ray

            return run_experiment_on_ray(
                exp,
                out_dir,
                address=ray,
                db=db,
                cpus_per_game=cpus_per_game,
                console=console,
                pages=pages,
            )
        return run_experiment(exp, out_dir, console=console, db=db, pages=pages)

    result = run_guarded(console, body)
    if isinstance(result, int):
        return result
    c = result.counts
    console.print(
        f"[green]done[/] in {result.elapsed_s:.0f} s: {c['played']} played, {c['resumed']} "
        f"resumed, {c['rejudged']} re-judged, {c['remeasured']} re-measured, {c['skipped']} "
        "already finished"
        + (f", [red]{c['crashed']} crashed[/]" if c["crashed"] else "")
        + (f", {c['game errors']} ended in an error" if c["game errors"] else "")
    )
    reused = sum(int(o.get("cached_calls", 0) or 0) for o in result.outcomes)
    if reused:  # how much of the games the model cache paid for
        made = sum(int(o.get("model_calls", 0) or 0) for o in result.outcomes)
        console.print(f"model calls: {made} made, {reused} answers reused from the cache")
    if result.report:
        page = Path(result.report).with_suffix(".html")  # report.md and its page
        console.print(f"report: {page if page.exists() else result.report} ({result.report})")
    if result.langsmith:
        console.print(f"LangSmith: {result.langsmith}")
    return 1 if c["crashed"] else 0
