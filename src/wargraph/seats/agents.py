"""Agent seats: one node per role running its own subgraph, whose private memory persists in the
role's own checkpoint namespace (`compile(checkpointer=True)`) and is never passed to others."""

from __future__ import annotations

import contextvars
import copy
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import get_runtime
from langgraph.types import Command, RetryPolicy, interrupt
from pydantic import BaseModel

from wargraph.kernel.context import GameContext, context_of
from wargraph.kernel.views import render_memory
from wargraph.models.chat import seats_act_together
from wargraph.models.faults import current_thread_id
from wargraph.runs.trace import record_call, served_path
from wargraph.seats.asks import Ask, Decision, Seat
from wargraph.seats.deciders import (
    INTERRUPT_VERSION,
    LLMDecider,
    decider_for,
    parse_answer,
    user_prompt,
)
from wargraph.seats.schemas import flat_json_schema, schema_for
from wargraph.seats.script import script_decision


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
    if len(asks) > 1 and all(_model_seat(a) for a in asks):
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


def _model_seat(ask: Ask) -> bool:
    """A seat a model answers: not a person (asked in turn, by interrupts), a script, a bot or
    the scripted stand-in (instant)."""
    seat = ask.get("seat", {})
    return "script" not in seat and isinstance(decider_for(seat), LLMDecider)


def _decide_together(
    asks: list[Ask], trace_path: str | None, memory: list[dict[str, Any]]
) -> dict[str, Decision]:
    """A model seat's questions of one step asked at once (a Diplomacy power's diary entry and
    its yearly digest): none sees another's answer, so asked one after the other they only cost
    a latency more each. Each runs in a copy of this context (the game's thread id, the run)."""

    def one(ask: Ask) -> Decision:
        seat: Seat = {**ask.get("seat", {}), "trace_path": trace_path}
        notes = seat_notes(memory, ask)
        return decider_for(seat).decide(ask, schema_for(ask), memory=notes)

    with ThreadPoolExecutor(max_workers=len(asks), thread_name_prefix="seat-ask") as pool:
        futures = [pool.submit(contextvars.copy_context().run, one, ask) for ask in asks]
        return {ask["id"]: f.result() for ask, f in zip(asks, futures, strict=True)}


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


def begin(state: AgentState) -> Command:
    """Start this step's asks, or let an unfinished step go on. The seat is always entered here
    (`enter`): asks the seat has not seen start `decide` afresh; the same asks mean the game is
    resuming this step (a person answering, a crash, a retry), so whatever task was open runs on
    beside this node and nothing is restarted; a finished step hands back its answers."""
    incoming = state.get("incoming", [])
    if [a["id"] for a in state.get("asks", [])] == [a["id"] for a in incoming]:
        return Command(update={"incoming": []}, goto=END)
    return Command(update={"asks": incoming, "answers": {}, "incoming": []}, goto="decide")


def build_agent() -> StateGraph:
    g = StateGraph(AgentState)
    g.add_node("begin", begin, destinations=("decide", END))
    # A failed call is retried here, inside the seat's one subgraph call per step.
    g.add_node("decide", decide, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.5))
    g.add_node("review", review)
    g.add_node("remember", remember)
    g.add_edge(START, "begin")
    g.add_edge("decide", "review")
    g.add_edge("review", "remember")
    g.add_edge("remember", END)
    return g


# One compiled subgraph serves every seat: `checkpointer=True` namespaces its persisted state by
# the calling node's name (`agent_<role>`), so each role's memory stays its own.
agent_graph = build_agent().compile(checkpointer=True)


def enter(asks: list[Ask]) -> Command:
    """What the seat's subgraph is invoked with: always a `Command` to `begin` carrying this
    step's asks (public API only). A `checkpointer=True` subgraph keeps the seat's history in its
    own namespace and, when the game resumes, continues from its last checkpoint; a plain input
    would then be ignored and a finished earlier step's answers handed back. A Command is applied
    in both cases, and `begin` decides from the seat's own saved asks."""
    return Command(update={"incoming": asks}, goto="begin")


def agent_node_name(role: str) -> str:
    return f"agent_{role}"


def make_agent_node(role: str) -> Runnable:
    """The seat's node: its asks of this step through the seat's subgraph. Sync and async
    (`invoke` and `ainvoke` of the game): the subgraph is called the way the game runs, so under
    `ainvoke` its checkpoints go through the saver's async methods (a server's checkpointer may
    have no others); the rest is shared."""

    def asked(payload: dict[str, Any]) -> list[Ask]:
        step = payload.get("asks", [])
        # every ask of the step may be in flight at once (a seat asks its questions together)
        seats_act_together(len(step))
        return [a for a in step if a["role"] == role]

    def answered(asks: list[Ask], out: dict[str, Any]) -> dict[str, Any]:
        answers = out.get("answers", {})
        missing = [a["id"] for a in asks if a["id"] not in answers]
        if missing:
            # Never record another step's answers; a second subgraph call here would save the
            # seat's memory under another namespace, so fail loudly.
            raise RuntimeError(f"seat {role} returned no answer for {missing}")
        return {"pending": {a["id"]: answers[a["id"]] for a in asks}}

    # Saved once, when the seat's step ends or stops for a person: a crash inside it only
    # repeats the step (the same answers for a seeded decider); 1 write instead of 5.
    def agent(payload: dict[str, Any]) -> dict[str, Any]:
        asks = asked(payload)
        return answered(asks, agent_graph.invoke(enter(asks), durability="exit"))

    async def aagent(payload: dict[str, Any]) -> dict[str, Any]:
        asks = asked(payload)
        return answered(asks, await agent_graph.ainvoke(enter(asks), durability="exit"))

    # a node with a sync and a native async side (a plain function's async side would be the
    # sync one in a thread)
    return RunnableLambda(agent, afunc=aagent, name=agent_node_name(role))
