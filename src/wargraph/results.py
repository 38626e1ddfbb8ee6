"""Run folders as tables: `load(DIR)` reads every game under DIR into pandas data frames.

DIR is any folder wargraph wrote: one game's (`runs/THREAD`), an experiment's, a tournament's,
a replay's, or a folder of many of them. Every `record.json` under it is one game; beside it,
`trace.jsonl` gives the model calls and `outcome.json` (experiments, tournaments) the game's
condition, answers and measures. Three frames, joined by `folder` (the game's folder relative
to DIR) and `thread_id`:

- `games`: one row per game: family, scenario title, rounds, finished or not, error, token
  use and calls, and the outcome's fields named as the experiment's outcomes.csv names them
  (`condition`, `run`, each axis, `answer:<question>`, `quote:<question>`, `measure:<name>` ...);
- `events`: one row per event of every game (round, author, kind, text, who saw it, data as
  JSON text);
- `calls`: one row per line of every game's trace (`event` is `call`, `fault`, `fallback`,
  `scripted` ...; `CALL_COLUMNS`: role, task, model, prompt_tokens, completion_tokens, tokens,
  latency_s, prompt (the messages as JSON text) and output, always there, empty where a line
  has none).

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
    for key, value in _outcome_columns(outcome).items():
        row.setdefault(key, value)
    return row


# An experiment's outcomes.csv names these columns in the singular (answer:conflict,
# measure:supply_centres) and its axes plainly: the frame uses the CSV's names.
_CSV_PREFIXES = {"answers": "answer", "measures": "measure"}


def _outcome_columns(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome's fields as columns, named as outcomes.csv names them."""
    row: dict[str, Any] = {}
    for key, value in outcome.items():
        if key in ("folder", "thread_id", "error"):
            continue
        if key == "judgements":
            for judged in value if isinstance(value, list) else []:
                if isinstance(judged, dict) and "id" in judged:
                    quotes = judged.get("quotes") or []
                    lines = [str(q.get("line", "")) for q in quotes if isinstance(q, dict)]
                    row[f"quote:{judged['id']}"] = " / ".join(lines)
        elif key == "levels" and isinstance(value, dict):
            row.update(flat_row(value))  # each axis its own column, as in the CSV
        elif key in _CSV_PREFIXES and isinstance(value, dict):
            row.update(flat_row(value, _CSV_PREFIXES[key] + ":"))
        else:
            row.update(flat_row({key: value}))
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


CALL_COLUMNS = [
    "folder", "thread_id", "event", "role", "task", "ask_id", "round", "model",
    "prompt_tokens", "completion_tokens", "tokens", "latency_s", "prompt", "output",
]  # fmt: skip
"""The calls frame's columns, always there (a scripted game's lines have no model or tokens:
empty cells, not a missing column); a trace line's other fields follow them."""


def _call_rows(trace: Path, folder: str, thread_id: str) -> list[dict[str, Any]]:
    rows = []
    for entry in read_trace(trace):
        row: dict[str, Any] = {"folder": folder, "thread_id": thread_id}
        for key, value in entry.items():
            # the prompt's messages as one JSON text cell, under the name the docs give it
            name = "prompt" if key == "messages" else key
            row[name] = (
                value
                if value is None or isinstance(value, str | int | float | bool)
                else json.dumps(value, ensure_ascii=False, default=str)
            )
        used = [row.get(k) for k in ("prompt_tokens", "completion_tokens")]
        if any(isinstance(n, int) for n in used):
            row["tokens"] = sum(n for n in used if isinstance(n, int))
        rows.append(row)
    return rows


def _calls_frame(pd: Any, calls: list[dict[str, Any]]) -> pd.DataFrame:
    """The calls frame: the documented columns first, then any other a trace line has."""
    extra: list[str] = []
    for row in calls:
        extra += [k for k in row if k not in CALL_COLUMNS and k not in extra]
    return pd.DataFrame(calls, columns=CALL_COLUMNS + extra)


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
        calls=_calls_frame(pd, calls),
    )
