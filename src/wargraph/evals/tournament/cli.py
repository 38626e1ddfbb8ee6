"""`wargraph tournament FILE`: the command line around a tournament."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import wargraph.evals.tournament.play as play
from wargraph.evals.experiment.cli import run_guarded
from wargraph.evals.experiment.preflight import check_models
from wargraph.evals.experiment.spec import ExperimentError
from wargraph.evals.tournament.run import report_only, run_tournament
from wargraph.evals.tournament.spec import load_tournament
from wargraph.models.chat import endpoint_env_with, set_endpoint_concurrency


def run_from_cli(
    file: str | Path,
    *,
    out: str | Path | None = None,
    model: str | None = None,
    db: str | None = None,
    ray: str | None = None,
    cpus_per_game: float = 1.0,
    concurrency: int | None = None,
    calls_per_endpoint: int | None = None,
    only_report: bool = False,
    pages: bool = False,
    console: Any = None,
    cache: bool | str | None = None,
) -> int:
    """`cache`: reuse model answers (as an experiment's). Exit code: 0 done, 1 some games crashed or wait for a person, 2 bad input, 130
    interrupted (run the same command again to resume)."""
    import os

    from rich.console import Console
    from rich.markup import escape

    console = console or Console()

    def body() -> Any:
        t = load_tournament(file, model=model)
        if concurrency is not None:
            if not 1 <= concurrency <= 64:
                raise ExperimentError(f"--concurrency {concurrency}: expected 1 to 64")
            t = t.model_copy(update={"concurrency": concurrency})
        if cache is not None:
            t = t.model_copy(update={"cache": cache})
        if calls_per_endpoint is not None:
            set_endpoint_concurrency(calls_per_endpoint)
            if ray:
                os.environ["WARGRAPH_ENDPOINT_CONCURRENCY"] = endpoint_env_with(calls_per_endpoint)
        if only_report:
            return report_only(t, out, pages=pages)
        with console.status("checking the models ..."):
            s = play.setup(t)
            check_models(
                play.models_of(s, play.schedule(s)), "no game of the tournament was played"
            )

        def announce(text: str) -> None:
            console.print(f"[bold]{t.name}[/]: schedule (seat -> entrant), written before play:")
            console.print(escape(text), highlight=False)

        return run_tournament(
            t,
            out,
            db=db,
            ray=ray,
            cpus_per_game=cpus_per_game,
            console=console,
            announce=announce,
            pages=pages,
        )

    result = run_guarded(console, body)
    if isinstance(result, int):
        return result
    for row in result.standing_lines():
        console.print(escape(row), highlight=False)
    console.print(f"stopped: {escape(result.stopped_by)}")
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if result.people:
        console.print("games waiting for a person (play each, then run the tournament again):")
        for line in result.people:
            console.print("  " + escape(line), highlight=False, soft_wrap=True)
    crashed = result.counts.get("crashed", 0)
    if crashed:
        console.print(f"[red]{crashed} games crashed[/] (see {result.out}/experiment.json)")
    page = Path(result.report).with_suffix(".html")  # report.md and its page
    console.print(f"report: {page if page.exists() else result.report} ({result.report})")
    return 1 if crashed or result.people else 0
