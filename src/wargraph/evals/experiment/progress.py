"""The driver's live view of an experiment: a bar per condition and, under the bars, the model
call the games wait on longest (`wargraph.models.waits`), as `wargraph play`'s spinner shows it."""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import TYPE_CHECKING, Any

from wargraph.evals.experiment.plan import GamePlan

if TYPE_CHECKING:
    from wargraph.evals.experiment.spec import Experiment


class ProgressView:
    """A Rich progress display: one bar per condition and one for the whole experiment."""

    def __init__(
        self, exp: Experiment, plans: list[GamePlan], skipped: int, show: bool, console: Any
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        from wargraph.models import waits

        class WithWaits(Progress):
            def get_renderables(self) -> Any:
                yield from super().get_renderables()
                line = waits.summary(waits.now_waiting())
                if line:  # read at each refresh (10 a second), from the calls' own registry
                    yield Text(f"  {line}", style="dim", overflow="ellipsis", no_wrap=True)

        self.crashed: list[dict[str, str]] = []
        # the embedded model counts its tokens while the line is shown (only then: it costs)
        self._watching = waits.watch() if show else contextlib.nullcontext()
        self.progress = WithWaits(
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
        self.tasks: dict[str, Any] = {}
        self.running: dict[str, str] = {}
        for cid, n in per.items():
            label = next(p.condition.label for p in plans if p.condition.id == cid)
            self.tasks[cid] = self.progress.add_task(f"  {label}", total=n, status="")

    def __enter__(self) -> ProgressView:
        self._watching.__enter__()
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.progress.__exit__(*exc)
        finally:
            self._watching.__exit__(*exc)

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
