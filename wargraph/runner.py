"""Play, resume and fork games with a SQLite checkpointer; answer human seats; write the records."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph
from langgraph.types import Command

from wargraph.context import GameContext
from wargraph.records import build_record, write_record
from wargraph.scenario import (
    Scenario,
    ScenarioError,
    load_scenario,
    resolve_path,
    validate_data,
)

HumanIO = Callable[[dict[str, Any]], Any]
Progress = Callable[[str, dict[str, Any]], None]
DEFAULT_DB = "wargraph.sqlite"


class GameError(RuntimeError):
    pass


@dataclass
class PlayResult:
    thread_id: str
    values: dict[str, Any]
    record: dict[str, Any]
    out_dir: Path | None
    interrupts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return bool(self.values.get("done")) and not self.interrupts


def family_module(scenario: Scenario):
    """The graph module of the scenario's family, from the registry (plug-ins included)."""
    from wargraph import families

    try:
        return families.graph_module(scenario.family)
    except families.FamilyError as err:
        raise GameError(str(err)) from None


def build_for(scenario: Scenario) -> StateGraph:
    return family_module(scenario).build(scenario)


def _connect(db: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open the checkpoint database, or fail with a message that says which file and why."""
    if create:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    elif not Path(db).exists():
        raise GameError(f"{db}: no such checkpoint database")
    try:
        # Games in threads share one file (experiments, servers): WAL lets readers and one writer
        # work at once, and the busy timeout makes a writer wait its turn instead of failing
        # with "database is locked".
        conn = sqlite3.connect(str(db), check_same_thread=False, timeout=60)
        conn.execute("PRAGMA user_version")  # fails here, clearly, if it is not a database
        _use_wal(conn, timeout=60)
        # WAL + NORMAL survives a killed process (only a power cut may lose the last commit)
        conn.execute("PRAGMA synchronous=NORMAL")
        _runs_table(conn)
    except sqlite3.Error as exc:
        raise GameError(f"{db}: cannot use the checkpoint database ({exc})") from None
    return conn


def _use_wal(conn: sqlite3.Connection, *, timeout: float) -> None:
    """Switch the file to WAL (it stays WAL once set). SQLite refuses the switch at once with
    "database is locked", skipping the busy timeout, while another connection holds a write
    lock, as when games starting together open a new file at the same moment: wait for the
    turn here as the busy timeout would."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


@contextmanager
def sqlite_saver(db: str | Path):
    conn = _connect(db)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()


def _runs_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS wargraph_runs "
        "(thread_id TEXT PRIMARY KEY, scenario TEXT NOT NULL, context TEXT NOT NULL)"
    )
    conn.commit()


def _save_run(conn: sqlite3.Connection, thread_id: str, scenario: Scenario, ctx: GameContext):
    conn.execute(
        "INSERT OR REPLACE INTO wargraph_runs VALUES (?, ?, ?)",
        (thread_id, json.dumps(scenario.model_dump()), json.dumps(dataclasses.asdict(ctx))),
    )
    conn.commit()


def load_run(db: str | Path, thread_id: str) -> tuple[Scenario, GameContext]:
    """The scenario and settings a stored game was started with (for resume and replay)."""
    conn = _connect(db, create=False)
    try:
        row = conn.execute(
            "SELECT scenario, context FROM wargraph_runs WHERE thread_id = ?", (thread_id,)
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        raise GameError(f"{db}: no game with thread id {thread_id!r}")
    ctx = GameContext(**json.loads(row[1]))
    return validate_data(json.loads(row[0]), f"{db}#{thread_id}"), ctx


def list_runs(db: str | Path) -> list[str]:
    if not Path(db).exists():
        return []
    conn = _connect(db, create=False)
    try:
        return [r[0] for r in conn.execute("SELECT thread_id FROM wargraph_runs")]
    finally:
        conn.close()


def pending_interrupts(graph, config) -> list[dict[str, Any]]:
    state = graph.get_state(config, subgraphs=False)
    return [{"id": i.id, "value": i.value} for i in state.interrupts]


def _drive(
    graph,
    first_input: Any,
    config: dict,
    ctx: GameContext,
    human_io: HumanIO | None,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    """Run until the end or until people must answer and no one is there to ask."""
    payload = first_input
    while True:
        for update in graph.stream(
            payload, config, context=ctx, stream_mode="updates", durability="sync"
        ):
            if progress:
                for node, values in update.items():
                    progress(node, values if isinstance(values, dict) else {})
        waiting = pending_interrupts(graph, config)
        if not waiting or human_io is None:
            return waiting
        payload = Command(resume={w["id"]: human_io(w["value"]) for w in waiting})


def play(
    scenario: str | dict[str, Any] | Scenario,
    *,
    overrides: list[str] | dict[str, Any] | None = None,
    context: GameContext | None = None,
    db: str | Path | None = DEFAULT_DB,
    thread_id: str | None = None,
    out_dir: str | Path | None = None,
    human_io: HumanIO | None = None,
    progress: Progress | None = None,
) -> PlayResult:
    """Play a game to its end (or until human seats wait with no `human_io`) and write its records."""
    sc = check_scenario(scenario, overrides) if not isinstance(scenario, Scenario) else scenario
    if isinstance(scenario, Scenario) and overrides:
        sc = load_scenario(scenario, overrides)
    ctx = dataclasses.replace(context or GameContext())
    thread_id = thread_id or uuid.uuid4().hex[:12]
    if out_dir is not None and ctx.trace_path is None:
        ctx.trace_path = str(Path(out_dir) / "trace.jsonl")
    builder = build_for(sc)
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 10_000}
    with _saver(db) as saver:
        if db is not None:
            _save_run(saver.conn, thread_id, sc, ctx)
        graph = builder.compile(checkpointer=saver)
        if graph.get_state(config).values.get("spec"):
            raise GameError(f"thread {thread_id!r} already holds a game; use resume")
        waiting = _drive(graph, {"scenario": sc.model_dump()}, config, ctx, human_io, progress)
        values = graph.get_state(config).values
    return _finish(values, thread_id, ctx, out_dir, waiting)


def resume(
    *,
    db: str | Path,
    thread_id: str,
    out_dir: str | Path | None = None,
    human_io: HumanIO | None = None,
    progress: Progress | None = None,
    answers: dict[str, Any] | None = None,
) -> PlayResult:
    """Continue a stored game from its last checkpoint: nothing lost, nothing doubled."""
    sc, ctx = load_run(db, thread_id)
    if out_dir is not None:
        ctx.trace_path = str(Path(out_dir) / "trace.jsonl")
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 10_000}
    with sqlite_saver(db) as saver:
        graph = build_for(sc).compile(checkpointer=saver)
        state = graph.get_state(config)
        if not state.values:
            raise GameError(f"thread {thread_id!r} has no checkpoint yet; play it again")
        first: Any = Command(resume=answers) if answers else None
        waiting = _drive(graph, first, config, ctx, human_io, progress)
        values = graph.get_state(config).values
    return _finish(values, thread_id, ctx, out_dir, waiting)


@contextmanager
def _saver(db: str | Path | None):
    if db is None:
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    else:
        with sqlite_saver(db) as saver:
            yield saver


def _finish(values, thread_id, ctx, out_dir, waiting) -> PlayResult:
    record = build_record(values, thread_id=thread_id, trace_path=ctx.trace_path)
    if out_dir is not None:
        write_record(record, out_dir)
    return PlayResult(thread_id, values, record, Path(out_dir) if out_dir else None, waiting)


def check_scenario(scenario: str | dict[str, Any], overrides=None) -> Scenario:
    """Validate and build the graph once, so a bad file fails before any model is loaded."""
    sc = load_scenario(scenario, overrides)
    try:
        build_for(sc)
    except ScenarioError as err:
        # the family's own checks (flow phases, decks ...) name the file like the schema's do
        source = str(resolve_path(scenario)) if isinstance(scenario, str) else "<inline scenario>"
        raise ScenarioError(f"{source}: {err}") from None
    return sc
