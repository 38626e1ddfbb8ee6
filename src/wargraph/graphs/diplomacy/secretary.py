"""The engine as the secretary: it checks a power's orders on a copy of the phase, sends the
refused ones back with its reasons (`diplomacy.order_retries` times), then those units hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.graphs.diplomacy.free_orders import (
    FREE_KEY,
    check_free,
    is_free,
    needs_revision,
    parse_orders,
    revised_orders,
)
from wargraph.graphs.diplomacy.orders import check_answer
from wargraph.graphs.diplomacy.phase import legal_of, saved_of
from wargraph.graphs.diplomacy.scenario import SECRETARY, diplomacy_scenario
from wargraph.graphs.diplomacy.unit_orders import free_question, orders_question
from wargraph.kernel.parts import Secretary
from wargraph.kernel.question import Check, Question
from wargraph.kernel.state import Event

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class EngineSecretary(Secretary):
    """Refused orders go back with the engine's reasons; after the retries the unit holds."""

    name: str = SECRETARY
    give_up_status: str = "held"

    def max_revisions(self, table: Table) -> int:
        return diplomacy_scenario(table).diplomacy.order_retries

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        """The engine checks the orders on a copy of the phase."""
        legal = legal_of(table, actor)
        if is_free(proposal):  # written freely: read, then checked order by order
            orders = parse_orders(proposal[FREE_KEY])
            keyed, refused_free = check_free(saved_of(table), actor, orders, legal)
            again = needs_revision(legal, keyed, refused_free)
            return Check(
                accepted=keyed,
                reasons=[f"{o or k}: {why}" for k, (o, why) in refused_free.items()]
                if again
                else [],
                detail=refused_free,  # recorded either way: the invalid-order count reads it
            )
        accepted, refused = check_answer(saved_of(table), actor, proposal, legal=legal)
        return Check(
            accepted=accepted,
            reasons=[f"{k}: {o or 'no order'}: {why}" for k, (o, why) in refused.items()],
            detail={k: list(v) for k, v in refused.items()},
        )

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        legal = legal_of(table, actor)
        refused = {k: tuple(v) for k, v in (check.detail or {}).items()}
        if is_free(proposal):
            return free_question(
                table, actor, legal, task="revise", refused=refused, attempt=attempt
            )
        sub = {k: legal[k] for k in refused if k in legal}
        return orders_question(table, actor, sub, task="revise", refused=refused, attempt=attempt)

    def revised(self, table: Table, actor: str, proposal: Any, value: dict[str, Any]) -> Any:
        if is_free(proposal):  # the accepted orders stand; the revision's are added
            before, again = parse_orders(proposal[FREE_KEY]), parse_orders(value.get(FREE_KEY))
            legal = legal_of(table, actor)
            return {FREE_KEY: revised_orders(saved_of(table), actor, before, again, legal)}
        return {**proposal, **value}

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        """After the retries the unit holds (dislodged units disband, builds are waived)."""
        held = "; ".join(f"{k} ({o or 'no order'}: {why})" for k, (o, why) in check.detail.items())
        return check.accepted, held

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
        if status == self.give_up_status:
            text = (
                f"After {attempts} revision(s) the secretary still refused: {note}. "
                "Those units hold (dislodged units disband, builds are waived)."
            )
        elif attempts:
            text = f"The secretary accepted your orders after {attempts} revision(s)."
        else:
            return []
        data = {"status": status, "revisions": attempts, "trail": trail}
        return [self.verdict(table, actor, text, data)]
