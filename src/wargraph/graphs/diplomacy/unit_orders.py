"""Orders, one per unit: the question a power answers (its units with their legal orders, one
enum per unit for a model and free text for a person, holds as the documented fallback) and
the proposal its answer makes. Revisions ask the same question about the refused units."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.graphs.diplomacy.engine import order_type
from wargraph.graphs.diplomacy.free_orders import FREE_KEY, scripted_orders
from wargraph.graphs.diplomacy.geography import unit_blocks
from wargraph.graphs.diplomacy.orders import hold_orders
from wargraph.graphs.diplomacy.phase import info_of, legal_of, position_of
from wargraph.graphs.diplomacy.scenario import diplomacy_scenario
from wargraph.graphs.diplomacy.view import NOTE_SLOT, unit_blocks_text
from wargraph.kernel.parts import Orders
from wargraph.kernel.question import Question
from wargraph.kernel.state import Event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt
from wargraph.seats.bots import is_bot
from wargraph.seats.schemas import prepare_schema

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class UnitOrders(Orders):
    """Each power alive with something to order answers its legal orders, keyed by unit."""

    task: str = "orders"

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        if writes_free(table, actor):
            return free_question(table, actor, legal_of(table, actor), task=self.task)
        return orders_question(table, actor, legal_of(table, actor), task=self.task)

    def prepare(self, table: Table) -> None:
        """Each power's legal orders, unit blocks and answer model at this position, computed
        while the seats talk (`wargraph.kernel.ahead`): the order step and the seats' calls find
        them made (on a slow machine they were ~10 ms of the order step and ~1.3 ms of each
        power's call, between two waves)."""
        for power in self.actors(table):
            legal = legal_of(table, power)
            if writes_free(table, power):
                continue
            unit_blocks_text(table, power)
            if not _person(table, power):  # a person's form is made with its preset
                prepare_schema("diplomacy_orders", {"legal": legal})

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return dict(value)

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        return []  # the orders are recorded with their results when the engine adjudicates


def orders_question(
    table: Table,
    power: str,
    legal: dict[str, list[str]],
    *,
    task: str,
    refused: dict[str, Any] | None = None,
    attempt: int = 0,
) -> Question:
    """The orders of `legal`'s units (all of them, or after a refusal the `refused` ones with
    the engine's reasons)."""
    s = diplomacy_scenario(table)
    v = table.variant(power)
    info = info_of(table)
    people = _person(table, power)
    if refused:
        lines = "\n".join(f"{k}: {o or '(none)'}: {why}" for k, (o, why) in refused.items())
        question = render_prompt(
            "diplomacy_revise_question",
            v,
            power=power,
            phase=info.name,
            refused=quote(lines),
            after=_after_retries(info.type, legal),
            keys=", ".join(legal),
            attempt=attempt,
            limit=s.diplomacy.order_retries,
        )
    else:
        question = render_prompt(
            f"diplomacy_orders_question_{info.type}",
            v,
            power=power,
            phase=info.name,
            keys=", ".join(legal),
            count=len(legal),
        )
    blocks = unit_blocks_text(table, power)
    fallback = _fallback_orders(table, power, legal)
    return Question(
        task=task,
        question=(blocks + "\n\n" if blocks else "")
        + question
        + (_legal_lists(legal, people=people) if info.type == "A" else ""),
        schema="diplomacy_orders_text" if people else "diplomacy_orders",
        # a person's form starts from what happens without an answer (hold, waive a build, the
        # engine's own disbands: one different unit per slot)
        schema_args={"legal": legal, "preset": fallback} if people else {"legal": legal},
        fallback=fallback,
        memory_slot=NOTE_SLOT,
        notes=False,
        max_tokens=_orders_tokens(legal),
        facts=_bot_facts(table, power, legal),
    )


def _person(table: Table, power: str) -> bool:
    """A person plays the power: its orders are a form of free text with its legal orders."""
    return str(table.seat(power).get("kind", "ai")) == "human"


def _after_retries(phase_type: str, legal: dict[str, list[str]]) -> str:
    """What happens to a key still refused after the last attempt, in the phase's own terms (a
    build slot is waived, not "held")."""
    if phase_type == "R":
        return "the unit disbands"
    if phase_type == "A":
        if any("WAIVE" in orders for orders in legal.values()):
            return "the build slot is waived"
        return "the engine disbands a unit of its choosing"
    return "the unit holds"


def _orders_tokens(legal: dict[str, list[str]]) -> int:
    chars = sum(len(k) + max((len(o) for o in opts), default=8) + 8 for k, opts in legal.items())
    return chars // 2 + 24


def _fallback_orders(table: Table, power: str, legal: dict[str, list[str]]) -> dict[str, str]:
    """The documented fallback: hold, disband when dislodged, waive builds, civil-disorder
    disbands (one per key, in key order)."""
    holds = hold_orders(position_of(table).game, power, legal=legal)
    return dict(zip(legal, holds, strict=False))


def _bot_facts(table: Table, power: str, legal: dict[str, list[str]]) -> dict[str, Any] | None:
    """What a bot seat reads (wargraph.seats.bots): its units with their nearest unowned centres and
    legal orders. Public board facts, and only on a bot's ask (a model's checkpoint stays lean)."""
    if not is_bot(table.seat(power).get("model")):
        return None
    blocks = position_of(table).derived(
        ("bot", power), lambda game: unit_blocks(game, power, n_foreign=0, legal=legal)
    )
    return {"power": power, "phase_type": info_of(table).type, "units": blocks}


def _legal_lists(legal: dict[str, list[str]], *, people: bool = False) -> str:
    """Adjustments have no unit blocks with legal orders: list the options of each slot. For a
    person under a heading of its own (the seat page folds it away: its selects list them)."""
    lines = "\n".join(f"{k}: {' | '.join(opts)}" for k, opts in legal.items())
    return f"\n\n# The options of each slot\n{lines}" if people else "\n" + lines


def writes_free(table: Table, power: str) -> bool:
    """Free orders (`diplomacy.orders: free`) are asked of models only: a person keeps the
    form with one field per unit, a bot picks among the legal orders it reads."""
    seat = table.seat(power)
    if diplomacy_scenario(table).diplomacy.orders != "free":
        return False
    return str(seat.get("kind", "ai")) != "human" and not is_bot(seat.get("model"))


def free_question(
    table: Table,
    power: str,
    legal: dict[str, list[str]],
    *,
    task: str,
    refused: dict[str, Any] | None = None,
    attempt: int = 0,
) -> Question:
    """Free orders: the power's units as in constrained mode, its orders written as a list of
    strings; after a refusal, the refused orders and the units without one, with the reasons."""
    s = diplomacy_scenario(table)
    v = table.variant(power)
    info = info_of(table)
    keys = list(legal)
    if refused:
        lines = "\n".join(f"{_short(o) or k}: {why}" for k, (o, why) in refused.items())
        written = [o.upper() for o, _ in refused.values() if o]
        units = [k for k in keys if k in refused or any(o.startswith(k + " ") for o in written)]
        question = render_prompt(
            "diplomacy_free_revise_question",
            v,
            power=power,
            phase=info.name,
            refused=quote(lines),
            after=_after_retries(info.type, legal),
            keys=", ".join(units or keys),
            attempt=attempt,
            limit=s.diplomacy.order_retries,
        )
    else:
        question = render_prompt(
            "diplomacy_free_orders_question",
            v,
            power=power,
            phase=info.name,
            what=_free_what(info.type, keys),
            examples=_free_examples(info.type, legal),
        )
    blocks = unit_blocks_text(table, power)
    holds = _fallback_orders(table, power, legal)
    return Question(
        task=task,
        question=(blocks + "\n\n" if blocks else "")
        + question
        + (_legal_lists(legal) if info.type == "A" else ""),
        schema="diplomacy_orders_free",
        # the decider's fallback (no usable answer at all) is the documented hold set, written
        # as a free answer so the secretary reads it like any other; after a refusal it is no
        # new order (the accepted ones stand, the others hold after the last attempt)
        fallback={FREE_KEY: [] if refused else [o for o in holds.values() if o != "WAIVE"]},
        memory_slot=NOTE_SLOT,
        notes=False,
        max_tokens=16 * len(legal) + 48,
        scripted={FREE_KEY: scripted_orders(legal, power, info.name, attempt)},
    )


def _short(order: str, limit: int = 80) -> str:
    """A refused order as the revision quotes it (a model's prose is not an order: cut)."""
    return order if len(order) <= limit else order[: limit - 3].rstrip() + "..."


def _free_what(phase_type: str, keys: list[str]) -> str:
    if phase_type == "M":
        return f"one order for each of your {len(keys)} units ({', '.join(keys)})"
    if phase_type == "R":
        return (
            f"for each dislodged unit ({', '.join(keys)}) a retreat (R and a province) "
            "or a disband (D)"
        )
    if keys and keys[0].startswith("build_"):
        return f"up to {len(keys)} build(s) on your free home centres (B), or WAIVE"
    return f"exactly {len(keys)} disband(s) (D)"


def _free_examples(phase_type: str, legal: dict[str, list[str]]) -> str:
    """Two orders in the notation asked for, from the power's own legal orders (a hold or a
    disband and a move, retreat or build)."""
    opts = [o for options in legal.values() for o in options]
    kinds = {"M": ("hold", "move"), "R": ("disband", "retreat"), "A": ("disband", "build")}
    picked = [next((o for o in opts if order_type(o) == k), "") for k in kinds[phase_type]]
    shown = [f'"{o}"' for o in dict.fromkeys(picked) if o]
    return ", ".join(shown) or '"A PAR H"'
