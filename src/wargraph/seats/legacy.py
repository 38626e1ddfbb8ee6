"""A seat's step that stopped for a person under wargraph before the seat's own node (commit
7106707): then each step ran as the seat's subgraph (begin, decide, review, remember), and the
person's question was raised by the subgraph's `decide` or `review` task. Its interrupt id is
the hash of that task's namespace, which the seat's node alone never has: an answer sent under
it (`wargraph resume`'s answers, the seat page, a LangGraph client: all read the id from the
game's state) would not reach the question, and the person would be asked again.

Such a step is finished as it was started, by the seat's subgraph of then, resumed from its
saved checkpoint: the same namespaces, so the same interrupt ids; the seat's notes are in that
checkpoint. The steps after it are the seat's node's (`agents.make_agent_node`): the game's state
records the checkpoint the subgraph leaves, and the node reads the seat's notes from it."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, RetryPolicy

from wargraph.seats.asks import Ask

if TYPE_CHECKING:
    from wargraph.seats.agents import AgentState


class Node(Protocol):
    """A step of the seat's subgraph (`agents.decide`, `review`, `remember`)."""

    def __call__(self, state: AgentState) -> dict[str, Any]: ...


def paused_in_subgraph(saved: CheckpointTuple | None) -> bool:
    """Whether the seat's latest checkpoint is a subgraph's of before 7106707 stopped inside a
    step for a person (its `decide` or `review` task's interrupt among its pending writes). The
    seat's node never writes pending writes, and an `incoming` channel only as it carries the
    versions of a subgraph's checkpoint on."""
    if saved is None or "incoming" not in saved.checkpoint["channel_versions"]:
        return False
    return any(
        isinstance(value, list | tuple) and any(isinstance(i, Interrupt) for i in value)
        for _, _, value in saved.pending_writes or ()
    )


def _begin(state: AgentState) -> Command:
    """The subgraph's entry of then: the same asks mean the step was stopped inside (its open
    task runs on beside this one); other asks start `decide` afresh."""
    incoming = state.get("incoming", [])
    if [a["id"] for a in state.get("asks", [])] == [a["id"] for a in incoming]:
        return Command(update={"incoming": []}, goto=END)
    return Command(update={"asks": incoming, "answers": {}, "incoming": []}, goto="decide")


@cache
def subgraph(
    state: type[AgentState], decide: Node, review: Node, remember: Node
) -> CompiledStateGraph:
    """The seat's subgraph of then, on the seat's steps of now (`wargraph.seats.agents`, whose
    `decide`, `review` and `remember` are those of then): compiled once, when an old paused step
    first needs it."""
    g = StateGraph(state)
    g.add_node("begin", _begin, destinations=("decide", END))
    g.add_node("decide", decide, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.5))
    g.add_node("review", review)
    g.add_node("remember", remember)
    g.add_edge(START, "begin")
    g.add_edge("decide", "review")
    g.add_edge("review", "remember")
    g.add_edge("remember", END)
    # namespaced by the calling node's name (`agent_<role>`), as it was
    return g.compile(checkpointer=True)


def _entry(asks: list[Ask]) -> Command:
    return Command(update={"incoming": asks}, goto="begin")


def finish(graph: CompiledStateGraph, asks: list[Ask], config: RunnableConfig) -> dict[str, Any]:
    """The stopped step run on by the subgraph under the seat's node's config (a person's answer
    reaches it by its id of then); the subgraph's state after it. Raises the interrupt again
    while the person has not answered."""
    return graph.invoke(_entry(asks), config, durability="exit")


async def afinish(
    graph: CompiledStateGraph, asks: list[Ask], config: RunnableConfig
) -> dict[str, Any]:
    return await graph.ainvoke(_entry(asks), config, durability="exit")
