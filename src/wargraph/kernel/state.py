"""The game state shared by every family: the append-only event record, the world, pending moves.

Checkpoints stay small: the record and the world are `DeltaChannel`s (a checkpoint stores what
a step wrote, and the whole value only every few updates), and what a run starts from is read
once by `setup` and not kept (the validated scenario is kept once, as `spec`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

from langgraph.channels import DeltaChannel, EphemeralValue
from typing_extensions import TypedDict  # not typing's: pydantic needs it on 3.11 (Studio schemas)

EVERYONE = "*"


class Event(TypedDict):
    """One entry of the game record. `audience` is ["*"] or the roles/teams that may see it."""

    id: str
    round: int
    phase: str
    kind: str  # message, plan, action, order, narration, inject, summary, verdict, answer ...
    author: str
    audience: list[str]
    text: str
    data: NotRequired[dict[str, Any]]


class BadStateEdit(ValueError):
    """A state edit (`update_state` through the LangGraph API or Studio) whose state does not
    fit the game: nothing is written, and the server answers 422 with this message instead of
    a bare 500."""


def add_events(left: list[Event] | None, right: list[Event] | Event | None) -> list[Event]:
    """Append events, skipping ids already recorded: a re-run step never doubles the record.
    Anything but events (a state edit's `"events": "notalist"`) is a BadStateEdit."""
    left = list(left or [])
    if right is None:
        return left
    if isinstance(right, dict):
        right = [right]
    if not isinstance(right, list | tuple) or not all(
        isinstance(e, dict) and isinstance(e.get("id"), str) for e in right
    ):
        raise BadStateEdit("events: a list of events, each a mapping with a text id")
    seen = {e["id"] for e in left}
    for e in right:
        if e["id"] not in seen:
            left.append(e)
            seen.add(e["id"])
    return left


def add_event_batches(left: list[Event] | None, batches: Sequence[Any]) -> list[Event]:
    """`add_events` over a batch of writes (a DeltaChannel replays stored writes in batches;
    deduplicating by id gives the same record however they are batched)."""
    out = list(left or [])
    for batch in batches:
        out = add_events(out, batch)
    return out


CLEAR = "__clear__"


def merge_pending(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Parallel branches each add their own key; `{CLEAR: True}` empties it for the next phase."""
    if right is None:
        return dict(left or {})
    if right.get(CLEAR):
        return {k: v for k, v in right.items() if k != CLEAR}
    return {**(left or {}), **right}


def merge_world(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """World updates are shallow merges so a phase only writes what it changed."""
    return {**(left or {}), **(right or {})}


def merge_world_batches(left: dict[str, Any] | None, batches: Sequence[Any]) -> dict[str, Any]:
    out = dict(left or {})
    for batch in batches:
        out = merge_world(out, batch)
    return out


# Updates between two stored copies of the whole record / world: a load replays at most this many
# steps' writes, and a game stores its record whole about once per this many updates.
SNAPSHOT_EVERY = 20


class GameInput(TypedDict, total=False):
    """What a run starts from: a shipped scenario name, a path or an inline scenario, plus `--set`.
    Read by `setup` in the run's first step and then dropped (ephemeral): the game keeps the
    validated scenario once, as `spec`, instead of every checkpoint carrying it twice."""

    scenario: Annotated[str | dict[str, Any], EphemeralValue(object)]
    overrides: Annotated[dict[str, Any], EphemeralValue(dict)]
    rounds: Annotated[int, EphemeralValue(int)]


def latest_of(left: Any, batches: Sequence[Any]) -> Any:
    return batches[-1] if batches else left


class GameState(TypedDict, total=False):
    # The validated scenario (model_dump), set by `setup` and written again as each round
    # starts (the same value): a DeltaChannel that stores it whole with each write
    # (snapshot_frequency=1), so it is in one checkpoint per round instead of every one, and a
    # load walks back at most one round to find it.
    spec: Annotated[dict[str, Any], DeltaChannel(latest_of, snapshot_frequency=1)]
    round: int
    phase: str
    events: Annotated[
        list[Event], DeltaChannel(add_event_batches, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    world: Annotated[
        dict[str, Any], DeltaChannel(merge_world_batches, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    pending: Annotated[dict[str, Any], merge_pending]
    done: bool
    error: str


def make_event(
    *,
    round: int,
    phase: str,
    kind: str,
    author: str,
    text: str,
    audience: list[str] | None = None,
    data: dict[str, Any] | None = None,
    key: str = "",
) -> Event:
    """Ids are derived from where the event happens, so replays and resumes dedupe exactly."""
    eid = f"r{round}.{phase}.{kind}.{author}" + (f".{key}" if key else "")
    ev: Event = {
        "id": eid,
        "round": round,
        "phase": phase,
        "kind": kind,
        "author": author,
        "audience": list(audience) if audience else [EVERYONE],
        "text": text,
    }
    if data:
        ev["data"] = data
    return ev
