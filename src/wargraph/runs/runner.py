"""Play and resume games on a checkpoint store (SQLite or PostgreSQL, `wargraph.store.saver`), one
writer per game (`wargraph.store.lease`); answer human seats; write the records."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

import wargraph.runs.rundir as rundir
import wargraph.runs.trace as trace
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import (
    Scenario,
    ScenarioError,
    load_scenario,
    resolve_path,
    validate_data,
)
from wargraph.kernel.script_shape import check_script
from wargraph.runs.listing import model_history
from wargraph.runs.records import build_record, write_record
from wargraph.store.errors import StoreError, describe, is_url
from wargraph.store.lease import Lease, lease
from wargraph.store.saver import Saver, open_saver

if TYPE_CHECKING:  # the game machinery loads with the first game's family
    from wargraph.kernel.graphkit import GameGraph

HumanIO = Callable[[dict[str, Any]], Any]
Progress = Callable[[str, dict[str, Any]], None]
DEFAULT_DB = "wargraph.sqlite"


# One error family: `except GameError` also catches a store that cannot be used, a game
# another process holds and an output folder that cannot take the game's files.
GameError = StoreError


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


def family_module(scenario: Scenario) -> ModuleType:
    """The graph module of the scenario's family, from the registry (plug-ins included)."""
    import wargraph.kernel.families as families

    try:
        return families.graph_module(scenario.family)
    except families.FamilyError as err:
        raise GameError(str(err)) from None


def build_for(scenario: Scenario) -> GameGraph:
    return family_module(scenario).build(scenario)


def game_graph(scenario: Scenario, saver: Any) -> Any:
    """The scenario's compiled game on `saver`. Building and compiling cost ~7 ms of CPU, a good
    share of a scripted game when many run in one process: the compiled graph is kept per
    scenario (family module and rules) and each game gets a copy on its own saver."""
    module = family_module(scenario)
    return _compiled(module, scenario.model_dump_json()).copy({"checkpointer": saver})


@lru_cache(maxsize=32)
def _compiled(module: Any, scenario_json: str) -> Any:
    return module.build(validate_data(json.loads(scenario_json), "<scenario>")).compile()


def _run_of(saver: Saver, thread_id: str) -> tuple[Scenario, GameContext] | None:
    run = saver.run_of(thread_id)
    if run is None:
        return None
    where = f"{describe(saver.wargraph.db)}#{thread_id}"
    fields = GameContext.__dataclass_fields__
    ctx = GameContext(**{k: v for k, v in run["context"].items() if k in fields})
    return validate_data(run["scenario"], where), ctx


def check_profiles(ctx: GameContext) -> None:
    """Refuse an unknown profile name or call timeout before anything is written
    (wargraph.models.profiles.ProfileError, a ModelRefError: one line)."""
    from wargraph.models.profiles import ProfileError, profile_named

    for name in [ctx.profile, *ctx.role_profiles.values()]:
        if name is not None:
            profile_named(name)
    if ctx.call_timeout is not None and not ctx.call_timeout > 0:
        raise ProfileError(f"call timeout {ctx.call_timeout}: expected seconds above 0")


def load_run(db: str | Path, thread_id: str) -> tuple[Scenario, GameContext]:
    """The scenario and settings a stored game was started with (for resume and replay)."""
    with open_saver(db, create=False) as saver:
        found = _run_of(saver, thread_id)
    if found is None:
        raise GameError(f"{describe(db)}: no game with thread id {thread_id!r}")
    return found


def list_runs(db: str | Path) -> list[str]:
    """The thread ids of the games a store holds (a missing SQLite file holds none)."""
    if not is_url(db) and not Path(db).exists():
        return []
    with open_saver(db, create=False) as saver:
        return saver.thread_ids()


def holds_game(db: str | Path, thread_id: str) -> bool:
    """Whether the store holds a game on `thread_id` (a missing SQLite file holds none). Reads
    that thread's first checkpoint only, where `list_runs` reads every game's: an experiment
    asks this before each of its games."""
    if not is_url(db) and not Path(db).exists():
        return False
    with open_saver(db, create=False) as saver:
        return saver.run_of(thread_id) is not None


def _waiting(state: Any) -> list[dict[str, Any]]:
    return [{"id": i.id, "value": i.value} for i in state.interrupts]


def _drive(
    graph: Any,
    first_input: Any,
    config: RunnableConfig,
    ctx: GameContext,
    human_io: HumanIO | None,
    progress: Progress | None,
    held: Lease | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run until the end or until people must answer and no one is there to ask; the questions
    still open and the game's state then (read once: a state read replays recent writes)."""
    payload = first_input
    while True:
        for update in graph.stream(
            payload, config, context=ctx, stream_mode="updates", durability="sync"
        ):
            if held is not None:
                held.check()  # taken over after a stall: stop writing at once
            if progress:
                for node, values in update.items():
                    progress(node, values if isinstance(values, dict) else {})
        state = graph.get_state(config, subgraphs=False)
        waiting = _waiting(state)
        if not waiting or human_io is None:
            return waiting, state.values
        payload = Command(resume={w["id"]: human_io(w["value"]) for w in waiting})


@contextmanager
def _held(
    db: str | Path, thread_id: str, command: str, *, create: bool = True
) -> Iterator[tuple[Saver, Lease]]:
    """The game's lease, then its store: one writer per game, refused before anything is
    written."""
    with (
        lease(db, thread_id, command=command, create=create) as held,
        open_saver(db, create=create) as saver,
    ):
        yield saver, held


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
    """Play a game to its end (or until human seats wait with no `human_io`) and write its records.

    A thread that already holds a game, or that another process is playing, is refused before
    anything is written; the scenario and settings are stored with the game's first checkpoint."""
    sc = check_scenario(scenario, overrides) if not isinstance(scenario, Scenario) else scenario
    if isinstance(scenario, Scenario) and overrides:
        sc = load_scenario(scenario, overrides)
    ctx = dataclasses.replace(context or GameContext())
    sc.check_seats("--human", ctx.humans)
    sc.check_seats("--role-model", ctx.role_models)
    sc.check_seats("--role-profile", ctx.role_profiles)
    sc.check_seats("--script", ctx.scripts)
    for role, script in ctx.scripts.items():
        check_script(script, f"--script {role}")
    check_profiles(ctx)
    thread_id = thread_id or uuid.uuid4().hex[:12]
    if out_dir is not None:
        rundir.check(out_dir)  # before the lease or any model call: a bad folder fails at once
        if ctx.trace_path is None:
            ctx.trace_path = str(Path(out_dir) / "trace.jsonl")
    config = thread_config(thread_id, seats_at_once(sc))
    games: AbstractContextManager[tuple[Any, Lease | None]]
    if db is None:
        from langgraph.checkpoint.memory import InMemorySaver

        games = contextlib.nullcontext((InMemorySaver(), None))
    else:
        games = _held(db, thread_id, "play")
    with games as (saver, held):
        graph = game_graph(sc, saver)
        if graph.get_state(config).values.get("spec"):
            raise GameError(f"thread {thread_id!r} already holds a game; use resume")
        if out_dir is not None:
            rundir.claim(out_dir, thread_id, new_game=True)
        trace.start(ctx.trace_path)
        if db is not None:
            saver.register_run(
                thread_id, {"scenario": sc.model_dump(), "context": dataclasses.asdict(ctx)}
            )
        waiting, values = _drive(
            graph, {"scenario": sc.model_dump()}, config, ctx, human_io, progress, held
        )
        return _finish(values, thread_id, ctx, out_dir, waiting, db)


def resume(
    *,
    db: str | Path,
    thread_id: str,
    out_dir: str | Path | None = None,
    human_io: HumanIO | None = None,
    progress: Progress | None = None,
    answers: dict[str, Any] | None = None,
    model: str | None = None,
    role_models: dict[str, str] | None = None,
) -> PlayResult:
    """Continue a stored game from its last checkpoint: nothing lost, nothing doubled.

    Without `out_dir` the game's files go where it wrote them before; into another folder, the
    trace so far is copied along (one trace per game). With `model` / `role_models` the game
    goes on with another default model or other models for some seats: the change is stored
    with the game's run (`models`: from which round each set of models played, shown by
    `wargraph games`) and every call in the trace names its model."""
    config = thread_config(thread_id)
    with _held(db, thread_id, "resume", create=False) as (saver, held):
        found = _run_of(saver, thread_id)
        if found is None:
            raise GameError(f"{describe(db)}: no game with thread id {thread_id!r}")
        sc, ctx = found
        earlier = ctx.trace_path
        if out_dir is None and earlier is not None:
            out_dir = Path(earlier).parent
        if out_dir is not None:
            rundir.claim(out_dir, thread_id, new_game=False)
            ctx.trace_path = str(Path(out_dir) / "trace.jsonl")
            rundir.adopt_trace(Path(out_dir), earlier)
        saver.verify_thread(thread_id)
        config = thread_config(thread_id, seats_at_once(sc))
        graph = game_graph(sc, saver)
        state = graph.get_state(config)
        if not state.values:
            raise GameError(f"thread {thread_id!r} has no checkpoint yet; play it again")
        if model or role_models:
            _switch_models(saver, thread_id, ctx, state.values, model, role_models or {})
        first: Any = Command(resume=answers) if answers else None
        waiting, values = _drive(graph, first, config, ctx, human_io, progress, held)
        return _finish(values, thread_id, ctx, out_dir, waiting, db)


def _switch_models(
    saver: Saver,
    thread_id: str,
    ctx: GameContext,
    values: dict[str, Any],
    model: str | None,
    role_models: dict[str, str],
) -> None:
    """Go on with other models: the run stored with the next checkpoint carries them and the
    history of which models played from which round."""
    run = saver.run_of(thread_id) or {}
    history = model_history(run)
    if model:
        ctx.model = model
    ctx.role_models = {**ctx.role_models, **role_models}
    history.append(
        {
            "from_round": int(values.get("round", 0) or 0),
            "model": ctx.model,
            "role_models": dict(ctx.role_models),
        }
    )
    saver.register_run(thread_id, {**run, "context": dataclasses.asdict(ctx), "models": history})


# Threads LangGraph may run one step's tasks in (`max_concurrency`; its default, the thread
# pool's cores + 4, is six on two cores: a phase of seven seats then had at most six calls in
# flight). Threads start only when a step has that many tasks; each waits on I/O, not the GIL.
STEP_WORKERS = 32


def step_workers(seats: int = 0) -> int:
    """Enough workers for every seat of a step at once, and the checkpoint writes beside them."""
    return max(STEP_WORKERS, seats + 8)


def thread_config(thread_id: str, seats: int = 0) -> RunnableConfig:
    """The run configuration of one game's thread; a whole game runs in one invocation, so the
    step limit is high, and every seat a step asks runs at once (`step_workers`)."""
    return {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": 10_000,
        "max_concurrency": step_workers(seats),
    }


def seats_at_once(sc: Scenario) -> int:
    """The most seats a step of this game may ask at once (every role: an upper bound), which
    the endpoint limit's default then lets into flight together (`wargraph.models.chat`)."""
    from wargraph.models.chat import seats_act_together

    n = len(sc.roles)
    seats_act_together(n)
    return n


def _finish(
    values: dict[str, Any],
    thread_id: str,
    ctx: GameContext,
    out_dir: str | Path | None,
    waiting: list[dict[str, Any]],
    db: str | Path | None = None,
) -> PlayResult:
    """Records written while the lease is still held: no other run writes beside them. The
    record names its store (`db`), so its view forks the game from there."""
    record = build_record(values, thread_id=thread_id, trace_path=ctx.trace_path)
    if db is not None:
        record["db"] = describe(db) if is_url(db) else os.path.abspath(db)
    if out_dir is not None:
        write_record(record, out_dir)
    return PlayResult(thread_id, values, record, Path(out_dir) if out_dir else None, waiting)


def check_scenario(
    scenario: str | dict[str, Any] | Scenario,
    overrides: list[str] | dict[str, Any] | None = None,
) -> Scenario:
    """Validate and build the graph once, so a bad file fails before any model is loaded."""
    sc = load_scenario(scenario, overrides)
    try:
        _compiled(family_module(sc), sc.model_dump_json())
    except ScenarioError as err:
        # the family's own checks (flow phases, decks ...) name the file like the schema's do
        source = str(resolve_path(scenario)) if isinstance(scenario, str) else "<inline scenario>"
        raise ScenarioError(f"{source}: {err}") from None
    return sc
