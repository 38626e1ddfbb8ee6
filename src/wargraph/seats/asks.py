"""What a seat is and what it is asked and answers: `Seat` (its kind, model, profile, limits),
`Ask` (a question put to it) and `Decision` (its answer and where the answer came from)."""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict  # not typing's: pydantic needs it on 3.11 (Studio schemas)


class Seat(TypedDict, total=False):
    """Who answers an ask, resolved from the scenario and the run's context."""

    kind: str  # ai | human | scripted
    model: str
    temperature: float
    max_tokens: int
    seed: int
    review: bool
    retries: int | None  # None: the profile's
    timeout: float | None  # None: the profile's
    profile: str  # small | capable (wargraph.models.profiles); absent: chosen from the model
    context_tokens: int  # the seat's view budget (capable profile); absent: the profile's
    max_faults: int  # failed calls in a row (each after its retries) before the game stops
    trace_path: str | None
    model_cache: str  # where answers are reused (wargraph.models.cache); absent: no cache
    script: list[Any] | dict[str, Any]  # the seat's own answers (wargraph.seats.script)


class Ask(TypedDict):
    id: str  # unique and stable: where in the game the question is asked
    role: str
    phase: str
    round: int
    task: str  # what is asked, in the game's language: plan, combine, adjudicate, orders ...
    system: str  # instructions only (never other agents' text)
    context: str  # the role's view, quoted as data
    question: str
    schema: str  # name in the schema registry
    schema_args: NotRequired[dict[str, Any]]
    fallback: dict[str, Any]  # the documented fallback, valid under the schema
    seat: NotRequired[Seat]
    reviewable: NotRequired[bool]
    memory_slot: NotRequired[str]  # remember the answer under this key (replaces older)
    scripted: NotRequired[dict[str, Any]]  # fixed values the scripted decider uses
    facts: NotRequired[dict[str, Any]]  # public facts a bot seat reads (never shown to a model)
    notes_from: NotRequired[int]  # the seat reads its private notes from this round on
    answer_start: NotRequired[str]  # a prose answer's first words (local models go on from them)
    names: NotRequired[dict[str, list[str]]]  # sides/entities: misspelt side names in prose fixed
    view: NotRequired[dict[str, Any]]  # what the context shows of its texts (views.ViewTally)


class Decision(TypedDict):
    value: dict[str, Any]
    source: str  # model | fallback | human | scripted | script | reviewed | deadline
    note: NotRequired[str]
