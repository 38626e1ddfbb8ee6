"""Run folders as tables: `load(DIR)` reads every game under DIR into pandas data frames.

DIR is any folder wargraph wrote: one game's (`runs/THREAD`), an experiment's, a tournament's,
a replay's, or a folder of many of them. Every `record.json` under it is one game; beside it,
`trace.jsonl` gives the model calls and `outcome.json` (experiments, tournaments) the game's
condition, answers and measures. Three frames, joined by `folder` (the game's folder relative
to DIR) and `thread_id`:

- `games`: one row per game: family, scenario title, rounds, finished or not, error, token
  use and calls, and the outcome's fields (`condition`, `run`, `answers:<question>`,
  `measures:<name>` ...);
- `events`: one row per event of every game (round, author, kind, text, who saw it, data as
  JSON text);
- `calls`: one row per line of every game's trace (`event` is `call`, `fault` or `fallback`;
  role, model, tokens, latency, prompt and output).

pandas is optional for wargraph: this module alone needs it (`pip install pandas`).

    >>> from wargraph.results import load
    >>> r = load("runs/experiments/azuristan_personas")
    >>> r.games.groupby("condition")["tokens"].mean()
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wargraph.evals.report_page import flat_row
from wargraph.runs.records import RecordError, load_record
from wargraph.runs.trace import read_trace
from wargraph.runs.userfiles import UserFileError, read_json

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]

__all__ = ["Results", "ResultsError", "load"]


MAX_OUTCOME_BYTES = 50_000_000  # an experiment's outcome.json is a few kB
EVENT_COLUMNS = ["folder", "thread_id", "id", "round", "author", "kind", "text", "audience", "data"]


class ResultsError(ValueError):
    """DIR holds no games, or pandas is missing."""


@dataclass
class Results:
    """The games, events and model calls of every game under a folder."""

    games: pd.DataFrame
    events: pd.DataFrame
    calls: pd.DataFrame


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ResultsError(
            "wargraph.results needs pandas, which wargraph does not install itself: "
            "pip install pandas"
        ) from None
    return pandas


def _game_row(record: dict[str, Any], folder: str, outcome: dict[str, Any]) -> dict[str, Any]:
    spec = record.get("scenario") or {}
    usage = record.get("usage") or {}
    per_role = usage.get("per_role") or {}
    prompt = sum(int(r.get("prompt_tokens", 0)) for r in per_role.values())
    completion = sum(int(r.get("completion_tokens", 0)) for r in per_role.values())
    row: dict[str, Any] = {
        "folder": folder,
        "thread_id": record.get("thread_id", ""),
        "family": spec.get("family", ""),
        "title": spec.get("title", ""),
        "round": record.get("round", 0),
        "done": bool(record.get("done")),
        "error": record.get("error", ""),
        "events": len(record.get("events") or []),
        "model_calls": sum(int(r.get("calls", 0)) for r in per_role.values()),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tokens": prompt + completion,
        "latency_s": round(sum(float(r.get("latency_s", 0.0)) for r in per_role.values()), 4),
        "faults": sum(int(r.get("faults", 0)) for r in per_role.values()),
        "fallbacks": usage.get("fallbacks", 0),
    }
    # the outcome's own fields (condition, run, answers, measures ...), never over the record's
    skip = {"judgements", "folder", "thread_id", "error"}
    for key, value in flat_row({k: v for k, v in outcome.items() if k not in skip}).items():
        row.setdefault(key, value)
    return row


def _event_rows(record: dict[str, Any], folder: str) -> list[dict[str, Any]]:
    rows = []
    for e in record.get("events") or []:
        audience = e.get("audience")
        rows.append(
            {
                "folder": folder,
                "thread_id": record.get("thread_id", ""),
                "id": e.get("id", ""),
                "round": e.get("round"),
                "author": e.get("author", ""),
                "kind": e.get("kind", ""),
                "text": str(e.get("text", "")),
                "audience": ", ".join(map(str, audience))
                if isinstance(audience, list)
                else audience,
                "data": json.dumps(e["data"], ensure_ascii=False, default=str)
                if e.get("data")
                else "",
            }
        )
    return rows


def _call_rows(trace: Path, folder: str, thread_id: str) -> list[dict[str, Any]]:
    rows = []
    for entry in read_trace(trace):
        row: dict[str, Any] = {"folder": folder, "thread_id": thread_id}
        for key, value in entry.items():
            # prompts are lists of messages: one JSON text cell, not a nested object
            row[key] = (
                value
                if value is None or isinstance(value, str | int | float | bool)
                else json.dumps(value, ensure_ascii=False, default=str)
            )
        rows.append(row)
    return rows


def load(folder: str | Path) -> Results:
    """Every game under `folder` (its own record.json, or any below it) as three data frames.
    Raises ResultsError for a folder with no games (naming it) or when pandas is missing; a
    record that cannot be read is skipped with a warning naming it."""
    import warnings

    pd = _pandas()
    root = Path(folder)
    if not root.is_dir():
        raise ResultsError(f"{root}: no such folder (give a run, experiment or tournament folder)")
    games: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for path in sorted(root.rglob("record.json")):
        game_dir = path.parent
        where = game_dir.relative_to(root).as_posix()
        try:
            record = load_record(path)
        except RecordError as err:
            warnings.warn(f"skipped {path}: {err}", stacklevel=2)
            continue
        outcome: Any = {}
        if os.path.lexists(game_dir / "outcome.json"):
            try:  # a regular file under a bound: /dev/zero or a FIFO in its place is skipped
                outcome = read_json(game_dir / "outcome.json", MAX_OUTCOME_BYTES)
            except UserFileError as err:
                warnings.warn(f"skipped the outcome of {where}: {err}", stacklevel=2)
        games.append(_game_row(record, where, outcome if isinstance(outcome, dict) else {}))
        events += _event_rows(record, where)
        calls += _call_rows(game_dir / "trace.jsonl", where, str(record.get("thread_id", "")))
    if not games:
        raise ResultsError(f"{root}: no games here (no record.json in it or below it)")
    return Results(
        games=pd.DataFrame(games),
        events=pd.DataFrame(events, columns=EVENT_COLUMNS),
        calls=pd.DataFrame(calls, columns=None if calls else ["folder", "thread_id", "event"]),
    )
