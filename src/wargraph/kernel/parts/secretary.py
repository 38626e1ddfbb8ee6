"""`Secretary`: the check of each proposal, the revision asked after a refusal, the documented
give-up, an optional secretary seat that reviews what the rules accept, and what the actor hears."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.question import Check, Question
from wargraph.kernel.record import round_record
from wargraph.kernel.state import Event

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Secretary:
    """Every proposal passes; nobody reviews."""

    name: str = "secretary"  # author of the secretary's verdicts
    give_up_status: str = "dropped"  # a proposal's status after the give-up

    def max_revisions(self, table: Table) -> int:
        return 0

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        return Check(accepted=proposal)

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        raise NotImplementedError("this secretary refuses nothing, so never asks again")

    def revised(self, table: Table, actor: str, proposal: Any, value: dict[str, Any]) -> Any:
        """The proposal after a revision answer (default: the answer replaces it), read by the
        Orders of the `order` mount that placed the proposal (`world["placed_by"]`, written
        when `order` is mounted more than once), else of this mount's name."""
        placed_by = round_record(table.state.get("world")).get("placed_by") or {}
        mount = placed_by.get(actor) or table.phase
        return table.world.orders_at(mount).proposal(table, actor, value)

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        """The documented give-up after the last refused revision: what is played, and a note
        saying why (the refused items are dropped unless a world says otherwise)."""
        return check.accepted, "; ".join(check.reasons)

    def seat(self, table: Table) -> str | None:
        """A seat (model or person) that reviews proposals the rules accept; None: rules only."""
        return None

    def seats(self, scenario: Scenario) -> list[str]:
        """Every seat `seat` may name in this scenario (drawn as graph edges)."""
        return []

    def review_question(self, table: Table, actor: str, proposal: Any, attempt: int) -> Question:
        raise NotImplementedError("this secretary has no seat")

    def verdict_events(
        self,
        table: Table,
        actor: str,
        status: str,
        attempts: int,
        note: str,
        trail: list,
        proposal: Any,
    ) -> list[Event]:
        """What the actor hears (default: only after a refusal). `proposal` is the one played
        (accepted, or what the give-up made of it)."""
        if not attempts and status != self.give_up_status:
            return []
        if status == self.give_up_status:
            text = f"After {attempts} revision(s) the secretary still refused: {note}."
        else:
            text = f"The secretary accepted your proposal after {attempts} revision(s)."
        data = {"status": status, "revisions": attempts, "notes": note, "trail": trail}
        return [self.verdict(table, actor, text, data)]

    def verdict(
        self, table: Table, actor: str, text: str, data: dict[str, Any], *, author: str = ""
    ) -> Event:
        """The secretary's word to one actor about its proposal."""
        return table.event(
            kind="verdict",
            author=author or self.name,
            text=text,
            audience=[actor],
            data=data,
            key=actor,
        )
