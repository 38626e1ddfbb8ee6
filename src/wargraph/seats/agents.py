"""Agent seats: one node per role that asks the seat its questions of the step and keeps what it
decided as its private notes, in the role's own checkpoint namespace (`agent_<role>`), never
passed to others.

The node does the seat's step itself (begin, decide, review, remember) and writes the seat's
state once, as one checkpoint of that namespace through the game's checkpointer, rather than
running a subgraph per step: a subgraph run (its loop, executor, task preparation, config and
callback merging) cost about as much CPU as the rest of a scripted Diplomacy phase. The
checkpoints keep the shape a `checkpoint_ns="agent_<role>"` subgraph wrote (its values, its
parent in `metadata.parents`), so `get_state` of the namespace, `wargraph replay`, pruning and
Studio read a seat as before (`seat_graph` declares that shape)."""

from __future__ import annotations

import contextvars
import copy
import threading
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Annotated, Any, TypedDict, cast

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import ensure_config, run_in_executor
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    empty_checkpoint,
)
from langgraph.checkpoint.base.id import uuid6
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import get_runtime
from langgraph.types import interrupt
from pydantic import BaseModel

from wargraph.kernel.context import GameContext, context_of
from wargraph.kernel.views import render_memory
from wargraph.models.chat import seats_act_together
from wargraph.models.faults import current_thread_id
from wargraph.models.profiles import seat_profile
from wargraph.runs.trace import record_call, served_path
from wargraph.seats.asks import Ask, Decision, Seat
from wargraph.seats.deciders import (
    INTERRUPT_VERSION,
    LLMDecider,
    decider_for,
    parse_answer,
    user_prompt,
    view_fields,
)
from wargraph.seats.schemas import flat_json_schema, schema_for
from wargraph.seats.script import script_decision


def newest_checkpoints(left: dict[str, str] | None, right: dict[str, str] | None) -> dict[str, str]:
    """Each seat's latest checkpoint, by namespace: seats of one step write theirs together."""
    return {**(left or {}), **(right or {})}


def upsert_memory(left: list[dict] | None, right: list[dict] | None) -> list[dict]:
    """Entries are keyed by id; writing an id again replaces it, so a re-run never doubles."""
    out = list(left or [])
    index = {m["id"]: i for i, m in enumerate(out)}
    for m in right or []:
        if m["id"] in index:
            out[index[m["id"]]] = m
        else:
            index[m["id"]] = len(out)
            out.append(m)
    return out


def _latest(left: Any, right: Any) -> Any:
    """The newest value wins: a retried step may write the same asks twice in one step."""
    return right


class AgentState(TypedDict, total=False):
    incoming: Annotated[list[Ask], _latest]  # this step's asks, as the game sends them
    asks: Annotated[list[Ask], _latest]
    answers: Annotated[dict[str, Decision], _latest]
    memory: Annotated[list[dict[str, Any]], upsert_memory]
    script_used: Annotated[dict[str, int], _latest]  # a scripted seat's answers given so far


class ReviewAnswer(BaseModel):
    """The umpire's review of a draft: accept it, or send an edited text."""

    accept: bool = True
    text: str = ""


def seat_notes(memory: list[dict[str, Any]], ask: Ask) -> str:
    """The seat's own notes for this ask: bounded by its memory policy (`notes_from`), without
    what the ask's context already shows (e.g. a diary the world renders into the view)."""
    since = int(ask.get("notes_from", 0) or 0)
    context = ask.get("context", "")
    kept = [
        m
        for m in memory
        if int(m.get("round", 0)) >= since and _body(m.get("text", "")) not in context
    ]
    return render_memory(kept)


def _body(note: str) -> str:
    """A note's text without its `(round N, task)` label."""
    return note.split(") ", 1)[1] if note.startswith("(round ") and ") " in note else note


def _item_text(item: Any) -> str:
    """One list item of an answer. A message ({to, text}) opens with its text, as the event it
    becomes shows it, so the seat's notes can tell it is already in its view (`unseen_notes`)
    and do not repeat it; other items keep their fields' order ("A PAR - BUR")."""
    if not isinstance(item, dict):
        return str(item)
    if isinstance(item.get("text"), str) and len(item) > 1:
        rest = " ".join(f"{k} {v}" for k, v in item.items() if k != "text")
        return f"{item['text']} ({rest})"
    return " ".join(f"{x}" for x in item.values())


def answer_text(value: dict[str, Any]) -> str:
    """Everything an answer says, as one line per field (one field: its text alone), so a seat
    remembers all of its orders, not the first."""
    parts = []
    for k, v in value.items():
        if isinstance(v, list):
            v = "; ".join(_item_text(item) for item in v)
        if isinstance(v, str | int | float | bool) and str(v).strip():
            parts.append((k, str(v).strip()))
    if len(parts) == 1:
        return parts[0][1]
    return "; ".join(f"{k}: {v}" for k, v in parts)


def decide(state: AgentState) -> dict[str, Any]:
    """Ask the seat's decider each question of this step (model calls before any review).

    Calls are traced into this run's trace: a question asked before the game was resumed into
    another folder, or copied to another thread (`wargraph.store.copying`), names the trace of then."""
    answers: dict[str, Decision] = {}
    used = dict(state.get("script_used") or {})
    # a served game names no file (requests may not): the server's folder keeps one per thread
    trace_path = context_of(get_runtime(GameContext)).trace_path or served_path(current_thread_id())
    asks = state.get("asks", [])
    if len(asks) > 1 and all(model_seat(a) for a in asks):
        return {"answers": _decide_together(asks, trace_path, state.get("memory", []))}
    for ask in asks:
        memory = seat_notes(state.get("memory", []), ask)
        seat: Seat = {**ask.get("seat", {}), "trace_path": trace_path}
        schema = schema_for(ask)
        note = ""
        if "script" in seat:
            scripted, note = script_decision(ask, schema, used)
            if scripted is not None:
                answers[ask["id"]] = scripted
        if ask["id"] not in answers:
            answers[ask["id"]] = decider_for(seat).decide(ask, schema, memory=memory)
        if seat.get("kind") in ("scripted", "human") or seat.get("model") == "scripted":
            # No model call to trace, but the prompt is still recorded (asymmetry tests read it);
            # after the answer, since a person's seat re-runs this node on every resume.
            record_call(
                seat.get("trace_path"),
                {
                    "role": ask["role"],
                    "node": ask["phase"],
                    "task": ask["task"],
                    "ask_id": ask["id"],
                    "round": ask["round"],
                    "event": (
                        "script-ended"
                        if note
                        else "script"
                        if "script" in seat
                        else seat.get("kind", "scripted")
                    ),
                    **({"note": note} if note else {}),
                    **view_fields(ask, seat_profile(seat).name),
                    "messages": [
                        {"role": "system", "content": ask["system"]},
                        {
                            "role": "human",
                            "content": user_prompt(ask, memory, flat_json_schema(schema)),
                        },
                    ],
                },
            )
    if any("script" in ask.get("seat", {}) for ask in state.get("asks", [])):
        return {"answers": answers, "script_used": used}
    return {"answers": answers}


def model_seat(ask: Ask) -> bool:
    """A seat a model answers: not a person (asked in turn, by interrupts), a script, a bot or
    the scripted stand-in (instant)."""
    seat = ask.get("seat", {})
    return "script" not in seat and isinstance(decider_for(seat), LLMDecider)


def _decide_together(
    asks: list[Ask], trace_path: str | None, memory: list[dict[str, Any]]
) -> dict[str, Decision]:
    """A model seat's questions of one step asked at once (a Diplomacy power's diary entry and
    its yearly digest): none sees another's answer, so asked one after the other they only cost
    a latency more each. The first is asked in this thread, the others in threads of their own,
    each in a copy of this context (the game's thread id, the run)."""

    def one(ask: Ask) -> Decision:
        seat: Seat = {**ask.get("seat", {}), "trace_path": trace_path}
        notes = seat_notes(memory, ask)
        return decider_for(seat).decide(ask, schema_for(ask), memory=notes)

    first, *rest = asks
    with ThreadPoolExecutor(max_workers=len(rest), thread_name_prefix="seat-ask") as pool:
        futures = [pool.submit(contextvars.copy_context().run, one, ask) for ask in rest]
        answers = {first["id"]: one(first)}
        return {**answers, **{a["id"]: f.result() for a, f in zip(rest, futures, strict=True)}}


def review(state: AgentState) -> dict[str, Any]:
    """With `review: true`, a person accepts or edits a reviewable draft before it is recorded.
    A draft a person wrote (the seat played by a person) is theirs already: not reviewed."""
    answers = dict(state.get("answers", {}))
    for ask in state.get("asks", []):
        if not (ask.get("reviewable") and ask.get("seat", {}).get("review")):
            continue
        draft = answers[ask["id"]]
        if draft.get("source") == "human":
            continue
        error = ""
        verdict: ReviewAnswer | None = None
        while verdict is None:
            reply = interrupt(
                {
                    "version": INTERRUPT_VERSION,
                    "seat": ask["role"],
                    "ask_id": ask["id"] + ".review",
                    "round": ask["round"],
                    "phase": ask["phase"],
                    "task": "review",
                    "question": "Accept this draft, or send an edited text.",
                    "draft": draft["value"],
                    "schema": copy.deepcopy(flat_json_schema(ReviewAnswer)),
                    "error": error,
                }
            )
            try:
                verdict = parse_answer(reply, ReviewAnswer)
            except ValueError as err:
                error = str(err)
        if not verdict.accept and verdict.text.strip():
            value = dict(draft["value"])
            text_field = next((k for k, v in value.items() if isinstance(v, str)), "text")
            value[text_field] = verdict.text.strip()
            answers[ask["id"]] = {"value": value, "source": "reviewed"}
    return {"answers": answers}


def remember(state: AgentState) -> dict[str, Any]:
    """Keep what this seat decided as its private notes (diaries replace their slot)."""
    entries = []
    for ask in state.get("asks", []):
        ans = state.get("answers", {}).get(ask["id"])
        if not ans:
            continue
        text = answer_text(ans["value"])
        if not text:
            continue
        entries.append(
            {
                "id": ask.get("memory_slot") or ask["id"],
                "round": ask["round"],
                "task": ask["task"],
                "text": f"(round {ask['round']}, {ask['task']}) {text[:600]}",
            }
        )
    # The asks themselves stay in the game's checkpoint of the step that asked them; the seat
    # keeps only their ids (all `begin` compares), so its history does not copy every prompt.
    done = [{"id": a["id"]} for a in state.get("asks", [])]
    return {"memory": entries, "asks": done}


def begin(state: AgentState, asks: list[Ask]) -> str:
    """Where this step's asks start, from the seat's saved state: asks it has not seen are
    decided afresh ("decide"); the same asks mean the game is resuming this step (a person
    answering, a crash, a retry): drafts saved before a person's review go on to "review", and
    a finished step (its asks kept as ids only) hands back its answers ("done")."""
    saved = state.get("asks", [])
    if [a["id"] for a in saved] != [a["id"] for a in asks]:
        return "decide"
    answered = state.get("answers", {})
    if any(a["id"] not in answered for a in asks):
        return "decide"  # a person's seat stopped inside `decide`: its answers replay
    return "review" if any("task" in a for a in saved) else "done"


class ReviewPending(Exception):
    """A person must review this step's drafts: the seat's state to save before the interrupt
    goes up, so that resuming asks no model again."""

    def __init__(self, state: AgentState, stop: GraphInterrupt) -> None:
        super().__init__("a person reviews the seat's drafts")
        self.state = state
        self.stop = stop


def seat_step(state: AgentState, asks: list[Ask]) -> tuple[dict[str, Decision], AgentState | None]:
    """The seat's step on its saved `state`: this step's answers, and the state to save after
    it (None when the step had finished before and nothing changed). Raises `ReviewPending`
    (drafts to save) or `GraphInterrupt` (a person's seat: its answers replay on resume)."""
    where = begin(state, asks)
    if where == "done":
        return dict(state.get("answers", {})), None
    current = cast(AgentState, {**state, "asks": asks})
    if where == "decide":
        current = cast(AgentState, {**current, **decide(current)})
    try:
        current = cast(AgentState, {**current, **review(current)})
    except GraphInterrupt as stop:
        if where == "review":
            raise  # the drafts are saved already
        raise ReviewPending(current, stop) from None
    noted = remember(current)
    current["memory"] = upsert_memory(current.get("memory"), noted["memory"])
    current["asks"] = noted["asks"]
    return dict(current.get("answers", {})), current


# What a seat's checkpoint holds (AgentState without `incoming`, which is never saved).
SEAT_VALUES = ("asks", "answers", "memory", "script_used")


def _step_node(state: AgentState) -> dict[str, Any]:
    """`seat_graph`'s one node: the seat's step (the game's agent node runs `seat_step`
    itself, and saves what this node would return)."""
    _, after = seat_step(state, state.get("incoming", []))
    return {**(after or {}), "incoming": []}


def build_agent() -> StateGraph:
    g = StateGraph(AgentState)
    g.add_node("decide", _step_node)
    g.add_edge(START, "decide")
    g.add_edge("decide", END)
    return g


# The shape of a seat's checkpoints, as LangGraph reads them: a `checkpointer=True` subgraph,
# namespaced by the node's name (`agent_<role>`). The agent node refers to it, so LangGraph
# finds it as that node's subgraph (`get_state` of a seat's namespace, Studio's drawing and a
# waiting seat's state); the game never runs it.
seat_graph: CompiledStateGraph = build_agent().compile(checkpointer=True)


# The checkpoint each seat last wrote through a saver of this process, by thread and namespace.
# The seat's next step takes it from here rather than reading, unsealing and decoding it again
# before its request leaves (issue 43), when the game's state records that very checkpoint (an
# id names one content); only on the sync path (the runner's, one writer per game under its
# lease). What is stored is unchanged: a killed game resumes from the store.
_WRITTEN: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], CheckpointTuple]] = (
    weakref.WeakKeyDictionary()
)
# Seats kept per saver: a study plays many games on one saver, and a finished game's seats would
# otherwise stay here for the saver's life. The oldest written goes first (an evicted seat is
# read from the store again, as before this cache).
WRITTEN_KEPT = 512
_WRITTEN_LOCK = threading.Lock()  # the seats of a wave write from threads of their own


def _written(saver: Any) -> dict[tuple[str, str], CheckpointTuple] | None:
    try:
        return _WRITTEN.setdefault(saver, {})
    except TypeError:  # a saver that takes no weak reference: read from it every time
        return None


class SeatStore:
    """A seat's state: the latest checkpoint of its namespace, read and written through the
    game's checkpointer (none: the seat keeps nothing between steps, as a subgraph then did)."""

    def __init__(self, config: RunnableConfig, recorded: str | None) -> None:
        self.recorded = recorded  # the seat's checkpoint as of the game's state (None: none yet)
        # the saver a game lends its nodes, as it lends a subgraph's (a name langgraph.constants
        # exports for that); where the step runs from the runtime's execution info
        self.saver: BaseCheckpointSaver | None = config.get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER)
        info = get_runtime(GameContext).execution_info
        if info is None or info.thread_id is None:
            self.saver = None
        *outer, own = (info.checkpoint_ns if info else "").split("|")
        # the node's namespace less its task id, as a `checkpointer=True` subgraph keeps one
        # history per thread; its parent is the game's checkpoint this step runs under
        self.ns = "|".join([*outer, own.split(":")[0]])
        self.parents = {"|".join(outer): info.checkpoint_id} if info else {}
        self.config: RunnableConfig = {
            CONF: {"thread_id": str(info.thread_id) if info else None, "checkpoint_ns": self.ns},
            # what a run names (langgraph-api's `run_id`) goes into the checkpoint's metadata
            "metadata": dict(config.get("metadata") or {}),
        }
        self.saved: CheckpointTuple | None = None

    def state(self, saved: CheckpointTuple | None) -> AgentState:
        self.saved = saved
        if saved is None:
            return {}
        values = saved.checkpoint["channel_values"]
        return {k: values[k] for k in SEAT_VALUES if k in values}  # type: ignore[return-value]

    def current(self, latest: CheckpointTuple | None) -> bool:
        """Whether the namespace's latest checkpoint is the seat's state for this step: the one
        the game's state records, or one written under the game's checkpoint this step runs
        under (drafts before a review, or a finished step the game had not stored). Otherwise
        the game was forked or replayed from an earlier state: the seat's state is the one
        recorded then (none: the seat had not played yet). A seat saved before its checkpoints
        were recorded (a subgraph's, with its `incoming` channel) is taken as it is."""
        if latest is None or latest.checkpoint["id"] == self.recorded:
            return True
        if latest.metadata.get("parents") == self.parents:
            return True
        return self.recorded is None and "incoming" in latest.checkpoint["channel_versions"]

    def at_recorded(self) -> RunnableConfig:
        return {CONF: {**self.config[CONF], "checkpoint_id": self.recorded}}

    def load(self) -> AgentState:
        if self.saver is None:
            return self.state(None)
        kept = (_written(self.saver) or {}).get(self._key())
        if kept is not None and self.recorded and kept.checkpoint["id"] == self.recorded:
            return self.state(kept)
        latest = self.saver.get_tuple(self.config)
        if self.current(latest):
            return self.state(latest)
        return self.state(self.saver.get_tuple(self.at_recorded()) if self.recorded else None)

    async def aload(self) -> AgentState:
        if self.saver is None:
            return self.state(None)
        latest = await self.saver.aget_tuple(self.config)
        if self.current(latest):
            return self.state(latest)
        if self.recorded is None:
            return self.state(None)
        return self.state(await self.saver.aget_tuple(self.at_recorded()))

    def checkpoint(
        self, state: AgentState
    ) -> tuple[RunnableConfig, Checkpoint, CheckpointMetadata, ChannelVersions]:
        """The seat's next checkpoint: every value, a new version for each that changed (only
        those are stored again)."""
        assert self.saver is not None
        before = self.saved.checkpoint if self.saved else None
        old = before["channel_values"] if before else {}
        versions = dict(before["channel_versions"]) if before else {}
        values = {k: state[k] for k in SEAT_VALUES if k in state}  # type: ignore[literal-required]
        changed = {k: v for k, v in values.items() if k not in old or old[k] != v}
        new_versions = {k: self.saver.get_next_version(versions.get(k), None) for k in changed}
        versions.update(new_versions)
        step = int(self.saved.metadata.get("step", -1)) + 1 if self.saved else 0
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=step))
        checkpoint["ts"] = datetime.now(UTC).isoformat()
        checkpoint["channel_values"] = values
        checkpoint["channel_versions"] = versions
        checkpoint["updated_channels"] = sorted(changed)
        config: RunnableConfig = {**self.config, CONF: dict(self.config[CONF])}
        if self.saved:
            config[CONF]["checkpoint_id"] = self.saved.config[CONF]["checkpoint_id"]
        metadata: CheckpointMetadata = {"source": "loop", "step": step, "parents": self.parents}
        return config, checkpoint, metadata, new_versions

    def held(self) -> dict[str, str]:
        """What the game's state records of a step that had finished before (its checkpoint
        written, then the process stopped before the game stored the step): that checkpoint."""
        return {self.ns: self.saved.checkpoint["id"]} if self.saved is not None else {}

    def save(self, state: AgentState) -> dict[str, str]:
        """Write the seat's state; what the game's state records of it (`seat_checkpoints`)."""
        if self.saver is None:
            return {}
        config, checkpoint, metadata, versions = self.checkpoint(state)
        kept = _written(self.saver)
        if kept is not None:
            kept.pop(self._key(), None)  # until it is written
        self.saver.put(config, copy.copy(checkpoint), metadata, versions)
        if kept is not None:
            at: RunnableConfig = {CONF: {**self.config[CONF], "checkpoint_id": checkpoint["id"]}}
            with _WRITTEN_LOCK:
                kept[self._key()] = CheckpointTuple(at, checkpoint, metadata, config)
                while len(kept) > WRITTEN_KEPT:  # insertion order: the oldest is first
                    kept.pop(next(iter(kept)))
        return {self.ns: checkpoint["id"]}

    def _key(self) -> tuple[str, str]:
        return str(self.config[CONF]["thread_id"]), self.ns

    async def asave(self, state: AgentState) -> dict[str, str]:
        if self.saver is None:
            return {}
        config, checkpoint, metadata, versions = self.checkpoint(state)
        await self.saver.aput(config, checkpoint, metadata, versions)
        return {self.ns: checkpoint["id"]}


def agent_node_name(role: str) -> str:
    return f"agent_{role}"


def make_agent_node(role: str) -> Runnable:
    """The seat's node: its asks of this step, decided by the seat (`seat_step`), the seat's
    state saved once when the step ends or stops for a person's review: a crash inside it only
    repeats the step (the same answers for a seeded decider). Sync and async (`invoke` and
    `ainvoke` of the game): under `ainvoke` the seat's checkpoint goes through the saver's
    async methods (a server's checkpointer may have no others) and the step runs in a worker
    thread (its model calls are sync)."""

    def asked(payload: dict[str, Any]) -> list[Ask]:
        step = payload.get("asks", [])
        # every ask of the step may be in flight at once (a seat asks its questions together)
        seats_act_together(len(step))
        return [a for a in step if a["role"] == role]

    def recorded(payload: dict[str, Any]) -> str | None:
        return (payload.get("seat_checkpoints") or {}).get(agent_node_name(role))

    def answered(
        asks: list[Ask], answers: dict[str, Decision], saved: dict[str, str]
    ) -> dict[str, Any]:
        missing = [a["id"] for a in asks if a["id"] not in answers]
        if missing:  # never record another step's answers
            raise RuntimeError(f"seat {role} returned no answer for {missing}")
        pending = {"pending": {a["id"]: answers[a["id"]] for a in asks}}
        return {**pending, "seat_checkpoints": saved} if saved else pending

    def agent(payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        asks = asked(payload)
        store = SeatStore(config, recorded(payload))
        state = store.load()
        try:
            answers, after = seat_step(state, asks)
        except ReviewPending as pending:
            store.save(pending.state)
            raise pending.stop from None
        return answered(asks, answers, store.save(after) if after is not None else store.held())

    async def aagent(payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        asks = asked(payload)
        store = SeatStore(config, recorded(payload))
        state = await store.aload()
        try:
            answers, after = await run_in_executor(config, seat_step, state, asks)
        except ReviewPending as pending:
            await store.asave(pending.state)
            raise pending.stop from None
        saved = await store.asave(after) if after is not None else store.held()
        return answered(asks, answers, saved)

    # a node with a sync and a native async side (a plain function's async side would be the
    # sync one in a thread)
    return SeatNode(agent, aagent, agent_node_name(role))


SyncStep = Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]
AsyncStep = Callable[[dict[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]


class SeatNode(RunnableLambda):
    """An agent node, whose subgraph (as LangGraph finds a node's subgraph: among its `deps`)
    is `seat_graph`, the shape of the seat's checkpoints. Called as LangGraph calls a node made
    of a plain function (the game's step has set the config's context): without a callback run
    of its own, which cost ~0.2 ms a seat step."""

    def __init__(self, step: SyncStep, astep: AsyncStep, name: str) -> None:
        super().__init__(step, afunc=astep, name=name)
        self.step, self.astep = step, astep

    @property
    def deps(self) -> list[Runnable[Any, Any]]:
        return [seat_graph]

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.step(input, ensure_config(config))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.astep(input, ensure_config(config))
