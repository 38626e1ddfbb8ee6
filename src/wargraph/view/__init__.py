"""See a game: one self-contained HTML page that explains, phase by phase, what each seat was
shown, what it answered, and who knew what (`wargraph view RUN_DIR`).

    from wargraph.view import write_view
    write_view(Path("runs/a"))            # -> runs/a/view.html
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from wargraph.runs.records import RecordError, load_record
from wargraph.runs.trace import TraceError, read_trace
from wargraph.view.pack import pack
from wargraph.view.page import page
from wargraph.view.panels import panels_for
from wargraph.view.payload import build_payload

__all__ = [
    "ViewError",
    "build_view",
    "ensure_view",
    "ensure_views",
    "fresh_view",
    "view_html",
    "write_stored_view",
    "write_view",
]


class ViewError(ValueError):
    """A folder or stored game that cannot be shown; the message says which and why."""


def build_view(
    record: dict[str, Any],
    trace: list[dict[str, Any]],
    *,
    db: str | None = None,
    replay: bool = True,
) -> dict[str, Any]:
    """The page's data for a record and its trace (see `wargraph.view.payload`); `replay`
    shows each round's `wargraph replay` command (for games in a store the CLI can open)."""
    return build_payload(record, trace, db=db, panels=panels_for(record), replay=replay)


def view_html(record: dict[str, Any], trace: list[dict[str, Any]], *, db: str | None = None) -> str:
    payload = build_view(record, trace, db=db)
    return page(payload["title"], pack(payload))


def _write(html: str, out: Path) -> Path:
    from wargraph.runs.rundir import OutputError, write_set

    try:
        write_set(out.parent, {out.name: html})
    except OutputError as exc:
        raise ViewError(str(exc)) from None
    return out


def write_view(
    run_dir: str | Path, out: str | Path | None = None, *, db: str | None = None
) -> Path:
    """Write the view of the game in `run_dir` (its record.json and trace.jsonl) to `out`
    (default `run_dir/view.html`) and return its path. `db` is the store named in the page's
    replay commands (default wargraph.sqlite)."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise ViewError(f"{folder}: not a game folder (expected a folder holding record.json)")
    try:
        record = load_record(folder)
    except RecordError as exc:
        raise ViewError(str(exc)) from None
    try:
        trace = read_trace(folder / "trace.jsonl", strict=True)
    except TraceError as exc:
        raise ViewError(str(exc)) from None
    target = Path(out) if out is not None else folder / "view.html"
    return _write(view_html(record, trace, db=db), target)


def stored_record(
    db: str, thread_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]], Path | None]:
    """A stored game's record (as the runner would write it now), its trace and the folder it
    wrote its files to (None when it wrote none)."""
    from wargraph.runs.records import build_record
    from wargraph.runs.runner import GameError, game_graph, load_run
    from wargraph.store.errors import StoreError
    from wargraph.store.saver import open_saver

    try:
        sc, ctx = load_run(db, thread_id)
        with open_saver(db, create=False) as saver:
            config = {"configurable": {"thread_id": thread_id}}
            values = game_graph(sc, saver).get_state(config).values
    except (GameError, StoreError) as exc:
        raise ViewError(str(exc)) from None
    if not values:
        raise ViewError(f"thread {thread_id!r} has no checkpoint yet")
    trace_path = ctx.trace_path if ctx.trace_path and Path(ctx.trace_path).is_file() else None
    record = build_record(values, thread_id=thread_id, trace_path=trace_path)
    folder = Path(trace_path).parent if trace_path else None
    try:
        trace = read_trace(trace_path, strict=True) if trace_path else []
    except TraceError as exc:
        raise ViewError(str(exc)) from None
    return record, trace, folder


def write_stored_view(db: str, thread_id: str, out: str | Path | None = None) -> Path:
    """The view of a game in a store (`wargraph view --thread ID --db DB`): by default
    `view.html` in the folder the game wrote its files to, else `runs/THREAD/view.html`."""
    record, trace, folder = stored_record(db, thread_id)
    target = Path(out) if out is not None else (folder or Path("runs") / thread_id) / "view.html"
    return _write(view_html(record, trace, db=db), target)


def fresh_view(run_dir: str | Path) -> Path | None:
    """`run_dir/view.html` when it is there and newer than the game's record, else None."""
    folder = Path(run_dir)
    target, record = folder / "view.html", folder / "record.json"
    try:
        if target.is_file() and target.stat().st_mtime >= record.stat().st_mtime:
            return target
    except OSError:
        pass
    return None


def ensure_view(run_dir: str | Path, *, db: str | None = None) -> Path | None:
    """`run_dir/view.html`, written unless it is newer than the game's record; None when the
    folder holds no readable game (reports link what exists and go on)."""
    folder = Path(run_dir)
    fresh = fresh_view(folder)
    if fresh is not None:
        return fresh
    try:
        return write_view(folder, db=db)
    except (ViewError, OSError):
        return None


def ensure_views(
    folders: list[Path], *, db: str | None = None, workers: int | None = None
) -> list[Path | None]:
    """`ensure_view` for each folder (in order), the missing pages written in up to `workers`
    forked processes (default: one per core). A page is CPU under one interpreter lock (a
    Diplomacy page draws its maps), so a report of many games writes them on every core. Where
    forking is not safe (not Linux, other threads running) they are written here, one by one."""
    todo = [i for i, f in enumerate(folders) if fresh_view(f) is None]
    n = min(workers or os.cpu_count() or 1, len(todo))
    if n < 2 or len(todo) < 4 or sys.platform != "linux" or threading.active_count() > 1:
        return [ensure_view(f, db=db) for f in folders]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(n, mp_context=mp.get_context("fork"), initializer=_quiet_worker)
    try:
        pages = pool.map(_page_in_worker, [(folders[i], db) for i in todo])
        written = dict(zip(todo, pages, strict=True))
    except BaseException:
        # Ctrl-C (or any failure) stops the pages now: queued pages are dropped and the workers
        # ended, rather than the pool's exit waiting for every page still to write.
        procs = list((pool._processes or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        raise
    pool.shutdown()
    return [written[i] if i in written else fresh_view(f) for i, f in enumerate(folders)]


def _quiet_worker() -> None:
    """A page worker leaves Ctrl-C to its parent, which ends it: no traceback per worker."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _page_in_worker(job: tuple[Path, str | None]) -> Path | None:
    return ensure_view(job[0], db=job[1])
