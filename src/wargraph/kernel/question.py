"""What a phase asks a seat (`Question`) and what the secretary makes of a proposal (`Check`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.seats.asks import Seat

# The phase kinds a world answers for; a node mounted under another name keeps its kind.
NEGOTIATE, SUMMARIZE, ORDER, SECRETARY, ADJUDICATE = (
    "negotiate",
    "summarize",
    "order",
    "secretary_validate",
    "adjudicate",
)


@dataclass(frozen=True)
class Question:
    """What a phase asks one seat: the question, the answer schema (a registry name) and the
    documented fallback. `task` names the ask in the game's language (plan, orders, act,
    revise ...), enters its id and is what the phase waits for. The seat's context (its view of
    the game) is filled in by the table when the question is asked, and so is its system prompt
    unless the question names another (a secretary's, the control's)."""

    task: str
    question: str
    schema: str
    fallback: dict[str, Any]
    system: str | None = None  # None: the seat's own (`World.cast.system`)
    schema_args: dict[str, Any] | None = None
    scripted: dict[str, Any] | None = None
    facts: dict[str, Any] | None = None  # public facts for a bot seat (wargraph.seats.bots)
    reviewable: bool = False
    memory_slot: str | None = None
    max_tokens: int | None = None  # room for the answer to finish (a cut-off JSON is invalid)
    seat_as: str | None = None  # whose seat settings answer (e.g. a team's leader)
    seat: Seat | None = None  # overrides of the seat (e.g. the secretary's model)
    notes: bool = True  # show the seat's private notes (False: the context already shows them)
    # The first words of a prose answer (a local model goes on from them: a small model that
    # starts "Azuristan will" writes a plan instead of imitating the quoted context)
    answer_start: str | None = None


@dataclass(frozen=True)
class Check:
    """The secretary's reading of a proposal: the proposal as accepted so far and the reasons
    it is refused (empty: accepted)."""

    accepted: Any
    reasons: list[str] = field(default_factory=list)
    detail: Any = None  # what the world needs to ask for a revision (e.g. refused units)

    @property
    def ok(self) -> bool:
        return not self.reasons


def side_name(name: str) -> str:
    """A seat's name as prose writes it: "azuristan" -> "Azuristan" (a name with capitals
    stays as the scenario spells it)."""
    return name.replace("_", " ").title() if name.islower() else name
