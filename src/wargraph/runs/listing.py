"""`wargraph games`: the games a store holds, read through the saver's API (any backend): those
wargraph commands played and those clients of `wargraph serve --db` started."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from wargraph.store.errors import DamagedCheckpoint, StoreError, describe, is_url
from wargraph.store.lease import holders
from wargraph.store.saver import Saver, open_saver


@dataclass
class GameRow:
    thread_id: str
    scenario: str
    status: str
    round: int
    updated: str
    family: str = "?"
    via: str = "?"  # "cli" (a wargraph command started it) or "serve" (a client of the server)
    copy_of: str = ""  # the thread this game was copied from (a served thread copy), if any
    models: str = ""  # which models played, and from which round when a resume changed them


def _status(tup: Any, held: tuple | None) -> str:
    values = tup.checkpoint.get("channel_values", {}) if tup else {}
    if held is not None:
        return f"playing (pid {held[2]} on {held[1]})"
    if values.get("error"):
        return "error"
    if values.get("done") and values.get("next") not in (None, "__end__"):
        # over, but its closing phases (the questions after the game) did not finish: a
        # model that stopped answering there; resuming finishes them
        return f"stopped in {values['next']} (resumable)"
    if values.get("done"):
        return "done"
    if tup is not None and any(w[1] == "__interrupt__" for w in tup.pending_writes or ()):
        return "waiting for people"
    return "stopped (resumable)"


def list_games(db: str | Path) -> list[GameRow]:
    if not is_url(db) and not Path(db).exists():
        raise StoreError(f"{db}: no such checkpoint database")
    live = holders(db)
    rows = []
    with open_saver(db, create=False) as saver:
        for tid in saver.thread_ids():
            try:
                rows.append(_row(saver, tid, live.get(tid)))
            except DamagedCheckpoint:  # listed as such; the other games are listed as usual
                rows.append(GameRow(tid, "?", "damaged (not loaded)", 0, "?"))
    rows.sort(key=lambda r: r.updated, reverse=True)
    return rows


def _row(saver: Saver, tid: str, held: tuple | None) -> GameRow:
    run = saver.run_of(tid) or {}
    spec = run.get("scenario", {})
    tup = saver.get_tuple({"configurable": {"thread_id": tid, "checkpoint_ns": ""}})
    values = tup.checkpoint.get("channel_values", {}) if tup else {}
    stamp = tup.checkpoint.get("ts", "") if tup else ""
    return GameRow(
        thread_id=tid,
        scenario=str(spec.get("name") or spec.get("title") or "?"),
        status=_status(tup, held),
        round=int(values.get("round", 0) or 0),
        updated=_when(stamp),
        family=str(spec.get("family") or "?"),
        via=str(run.get("origin") or "cli"),
        copy_of=str(run.get("copy_of") or ""),
        models=models_text(run),
    )


class AmbiguousThread(StoreError):
    """The start of several games' thread ids."""


def resolve_thread(db: str | Path, given: str) -> str:
    """The thread id `given` names in the store: itself when a game has that id, else the one
    game whose id starts with it (ids are long; `wargraph games` lists them). An ambiguous
    prefix is refused with the matches; no match returns `given` (the command then says there
    is no such game)."""
    if not given or (not is_url(db) and not Path(db).exists()):
        return given
    try:
        with open_saver(db, create=False) as saver:
            ids = saver.thread_ids()
    except StoreError:
        return given  # the command opens the store itself and says why it cannot
    if given in ids:
        return given
    matches = sorted(t for t in ids if t.startswith(given))
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        shown = ", ".join(matches[:10]) + (
            f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        )
        raise AmbiguousThread(
            f"{describe(db)}: thread {given!r} is the start of {len(matches)} games' ids "
            f"({shown}); give more of it"
        )
    return given


def as_json(row: GameRow) -> dict[str, Any]:
    return {
        "thread_id": row.thread_id,
        "family": row.family,
        "scenario": row.scenario,
        "via": row.via,
        "copy_of": row.copy_of or None,
        "status": row.status,
        "round": row.round,
        "models": row.models,
        "updated": row.updated,
    }


def model_history(run: dict[str, Any]) -> list[dict[str, Any]]:
    """From which round each set of models played a stored game (one entry if never changed).
    Here, not in the runner, so listing games imports no game machinery."""
    ctx = run.get("context") or {}
    first = {
        "from_round": 1,
        "model": ctx.get("model", "embedded"),
        "role_models": dict(ctx.get("role_models") or {}),
    }
    return list(run.get("models") or [first])


def models_text(run: dict[str, Any]) -> str:
    """`openai:x` or, after a resume on other models, `embedded; from round 3: openai:x`
    (seats with their own model as `ROLE=MODEL`)."""
    if not run:
        return "?"
    parts = []
    for i, h in enumerate(model_history(run)):
        own = ", ".join(f"{r}={m}" for r, m in sorted((h.get("role_models") or {}).items()))
        text = str(h.get("model", "?")) + (f" ({own})" if own else "")
        parts.append(text if i == 0 else f"from round {h.get('from_round', '?')}: {text}")
    return "; ".join(parts)


def _when(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp or "?"


__all__ = ["GameRow", "as_json", "describe", "list_games", "model_history", "resolve_thread"]
