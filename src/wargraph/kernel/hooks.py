"""The signatures of a family's hooks: one Protocol per hook, and the check that a family's
function can be called the way wargraph calls it (its positional arguments, every other parameter
defaulted; an eval command's keyword options are checked by name in `families`), made when the
family is first used, so a hook with the wrong parameters is an error naming the family, the
field and the reference before any game runs, not a TypeError in the middle of one."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

Record = dict[str, Any]
Values = Mapping[str, Any]


class Build(Protocol):
    """A graph module's `build(scenario) -> StateGraph`."""

    def __call__(self, scenario: Any, /) -> Any: ...


class ViewPanels(Protocol):
    """`view_panels(record, phases, lines) -> {phase index: [panel, ...]}`."""

    def __call__(
        self, record: Record, phases: list[tuple[int, str]], lines: Any, /
    ) -> dict[int, list[dict[str, Any]]]: ...


class SeatWorld(Protocol):
    """`seat_world(scenario, values, seat) -> [panel, ...]`: what a person's seat page shows of
    the world, only what that seat may know."""

    def __call__(self, scenario: Any, values: Values, seat: str, /) -> list[dict[str, Any]]: ...


class Measures(Protocol):
    """`measures(record, path) -> nested dict of numbers and booleans` (`scores` ranks games)."""

    def __call__(self, record: Record, path: Any, /) -> dict[str, Any]: ...


class ReportFigure(Protocol):
    """`report_figure(record_path, figure_path, title)` writes a PNG at `figure_path`."""

    def __call__(self, record_path: Path, figure_path: Path, title: str, /) -> Any: ...


class CriticalState(Protocol):
    """`critical_state(phase) -> predicate(snapshot) -> bool` (ValueError: no such moment)."""

    def __call__(self, phase: str, /) -> Callable[[Any], bool]: ...


class CheckpointLabel(Protocol):
    """`checkpoint_label(values) -> str | None`: a checkpoint's name in messages."""

    def __call__(self, values: Values, /) -> str | None: ...


class ReplayStop(Protocol):
    """`replay_stop(start, values, phases) -> bool`: when a replayed run ends."""

    def __call__(self, start: Values, values: Values, phases: int, /) -> bool: ...


class ReplayOutcome(Protocol):
    """`replay_outcome(start, end) -> dict`: what one replayed run changed."""

    def __call__(self, start: Values, end: Values, /) -> dict[str, Any]: ...


class ReplaySummary(Protocol):
    """`replay_summary(outcomes) -> dict`: the distribution over runs."""

    def __call__(self, outcomes: list[dict[str, Any]], /) -> dict[str, Any]: ...


class ReplayFiles(Protocol):
    """`replay_files(start, end, run_dir) -> [Path]`: a run's own files."""

    def __call__(self, start: Values, end: Values, run_dir: Path, /) -> list[Path]: ...


class ReplayPoints(Protocol):
    """`replay_points(record, phases) -> {phase index: label} | None`."""

    def __call__(
        self, record: Record, phases: list[tuple[int, str]], /
    ) -> dict[int, str] | None: ...


class EvalCommand(Protocol):
    """`eval_command(records, out, **options)`: `wargraph eval <family> RECORD... --out DIR`."""

    def __call__(self, records: list[Path], out: Path, /, **options: Any) -> Any: ...


class Strategy(Protocol):
    """A bot's `strategy(ask, rng) -> answer | None`."""

    def __call__(self, ask: Mapping[str, Any], rng: Any, /) -> dict[str, Any] | None: ...


HOOKS: dict[str, type] = {
    "graph": Build,
    "view_panels": ViewPanels,
    "seat_world": SeatWorld,
    "measures": Measures,
    "report_figure": ReportFigure,
    "critical_state": CriticalState,
    "checkpoint_label": CheckpointLabel,
    "replay_stop": ReplayStop,
    "replay_outcome": ReplayOutcome,
    "replay_summary": ReplaySummary,
    "replay_files": ReplayFiles,
    "replay_points": ReplayPoints,
    "eval_command": EvalCommand,
    "bot": Strategy,
}


def _called_with(protocol: type) -> tuple[list[str], str]:
    """The positional parameter names wargraph passes, and the call as text."""
    params = list(inspect.signature(protocol.__call__).parameters.values())[1:]  # no self
    positional = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    shown = ", ".join(positional + [f"**{p.name}" for p in params if p.kind is p.VAR_KEYWORD])
    return positional, f"({shown})"


def mismatch(field: str, fn: Callable[..., Any]) -> str | None:
    """Why `fn` cannot be called as the `field` hook is called (None: it can). Every positional
    argument must be accepted and every other parameter must have a default."""
    positional, shown = _called_with(HOOKS[field])
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # a builtin or C function: nothing to read, trusted as it is
    try:
        sig.bind(*positional)
    except TypeError as err:
        return f"takes {sig} but is called as {field}{shown} ({err})"
    return None
