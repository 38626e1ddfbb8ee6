"""The driver's live view of an experiment."""

from __future__ import annotations

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
        self.tasks: dict[str, Any] = {}
        self.running: dict[str, str] = {}
        for cid, n in per.items():
            label = next(p.condition.label for p in plans if p.condition.id == cid)
            self.tasks[cid] = self.progress.add_task(f"  {label}", total=n, status="")

    def __enter__(self) -> ProgressView:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
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
