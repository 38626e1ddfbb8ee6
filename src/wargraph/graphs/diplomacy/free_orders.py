"""Free orders (`diplomacy.orders: free`): a model writes its orders as text, in standard
notation ("A PAR - BUR", "F BRE S A PAR - PIC", "A MAR H"), one per line or as a JSON list of
strings. The secretary reads them (`parse_orders`), checks each against the engine
(`check_free`), sends the refused ones and the units left without an order back with the
reasons, and after `diplomacy.order_retries` refusals those units hold (dislodged units disband,
builds are waived, required disbands follow civil disorder). `free_counts` is what a phase adds
to the record so the invalid-order and re-ask rates can be measured per power and model.

People and bots answer as in constrained mode: free orders measure a model's own writing."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from wargraph.graphs.diplomacy.orders import check_orders

FREE_KEY = "orders"  # the one field of a free answer: a list of order strings
NO_ORDER = "no order given"
# a list marker or numbering before an order ("- ", "* ", "1. ", "2) "), and quotes or
# backticks around it; a comment after it ("# ...", "// ...", "(to take Burgundy)")
_MARKER = re.compile(r"^\s*(?:[-*•]\s+|\d{1,2}[.)]\s*)")
_QUOTES = "`\"' "
_COMMENT = re.compile(r"\s*(?:#|//|\().*$")


def is_free(proposal: Any) -> bool:
    """A free answer (`{"orders": [...]}`), not one keyed by unit (no unit is called "orders")."""
    return isinstance(proposal, Mapping) and set(proposal) == {FREE_KEY}


def parse_orders(value: Any) -> list[str]:
    """The orders a free answer holds, one string each: a list of strings, or text with one
    order per line (or `;` between orders), or a JSON list inside such text. List markers,
    quotes, trailing comments and a line that only introduces the orders ("My orders:") are
    left out; nothing else is changed (the engine reads case and spacing loosely)."""
    items: list[Any] = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        text = item.strip()
        if text.startswith("["):
            try:
                inner = json.loads(text)
            except json.JSONDecodeError:
                inner = None
            if isinstance(inner, list):
                out += parse_orders([x for x in inner if isinstance(x, str)])
                continue
        for line in re.split(r"[\n;]", text):
            order = _COMMENT.sub("", _MARKER.sub("", line)).strip(_QUOTES).rstrip(".,")
            order = order.strip(_QUOTES)  # `A MAR H`.
            if order and not order.endswith(":"):
                out.append(order)
    return out


def _unit(order: str) -> str:
    return " ".join(order.split()[:2])


def check_free(
    saved: Mapping[str, Any],
    power: str,
    orders: Sequence[str],
    legal: Mapping[str, Sequence[str]],
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The secretary on a free answer: `(accepted, refused)`. `accepted` is keyed like
    `legal` (a unit, or a build/disband slot), so adjudication reads it as a constrained answer.
    `refused` maps each refused order to `[order, reason]` (the engine's reason, a second order
    for one unit, an order not among the legal ones) and each unit written no order (and,
    in adjustments, each required disband left out) to `["", "no order given ..."]`. Extra
    build or waive orders beyond the builds allowed are refused by the engine check."""
    accepted, rejected = check_orders(saved, power, list(orders))
    keyed: dict[str, str] = {}
    refused: dict[str, list[str]] = {}
    for order, why in rejected:
        key = order if order not in refused else f"{order} ({len(refused) + 1})"
        refused[key] = [order, why]
    slots = list(legal)
    if slots and slots[0].startswith(("build_", "disband_")):
        for slot, order in zip(slots, accepted, strict=False):
            keyed[slot] = order
        if slots[0].startswith("disband_"):
            for slot in slots[len(keyed) :]:
                refused[slot] = ["", f"{NO_ORDER}: {len(slots)} disband(s) required"]
        return keyed, refused
    for order in accepted:
        unit = _unit(order)
        if unit in legal:
            keyed[unit] = order
        else:  # the engine took it for a unit this power cannot order (never seen): refuse it
            refused[order] = [order, f"{unit} is not a unit you can order this phase"]
    tried = {_unit(o).upper() for o, _ in rejected}
    for unit in legal:  # a unit whose written order was refused is not also "without one"
        if unit not in keyed and unit not in tried:
            refused[unit] = ["", f"{NO_ORDER} for {unit}"]
    return keyed, refused


def needs_revision(
    legal: Mapping[str, Sequence[str]], accepted: Mapping[str, str], refused: Mapping[str, Any]
) -> bool:
    """Whether the power is asked again: a unit (or a required disband) is left without an
    accepted order, or a build was refused while builds remain. A refused order beside a full
    set (a second order for a unit, an order for another power's unit) is counted as invalid
    but asks nothing: there is nothing left to order."""
    slots = list(legal)
    if slots and slots[0].startswith("build_"):
        return len(accepted) < len(slots) and any(o for o, _ in refused.values())
    return len(accepted) < len(slots)


def revised_orders(
    saved: Mapping[str, Any],
    power: str,
    before: Sequence[str],
    answer: Sequence[str],
    legal: Mapping[str, Sequence[str]],
) -> list[str]:
    """The orders after a revision: the accepted orders of `before`, less those for a unit the
    revision orders again, then the revision's orders (re-checked as a whole)."""
    kept, _ = check_free(saved, power, before, legal)
    again = {_unit(o).upper() for o in answer}
    adjust = bool(legal) and next(iter(legal)).startswith(("build_", "disband_"))
    old = [o for o in kept.values() if adjust or _unit(o).upper() not in again]
    return [*old, *answer]


def scripted_orders(legal: Mapping[str, Sequence[str]], *seed: Any) -> list[str]:
    """What a scripted seat writes in free mode: one legal order per unit or slot, drawn with
    a stable seed (so scripted free games are deterministic and legal)."""
    from wargraph.seats.scripted import stable_seed

    rng = random.Random(stable_seed("free", *seed))
    return [rng.choice(list(opts)) for opts in legal.values() if opts]


def free_counts(trail: Sequence[Mapping[str, Any]], attempts: int) -> dict[str, Any]:
    """One power's free orders in one phase, from the secretary's trail: orders written on the
    first try (`written`), how many of them were refused (`invalid`), units left without an
    order (`missing`), revisions asked (`revisions`, so `reasked` = revisions > 0), and who
    answered first (`source`: a decider's fallback writes nothing, so it counts no orders)."""
    if not trail:
        return {"written": 0, "invalid": 0, "missing": 0, "revisions": 0, "source": ""}
    first = trail[0]
    source = str(first.get("source", ""))
    proposal = first.get("proposal") or {}
    written = len(parse_orders(proposal.get(FREE_KEY))) if is_free(proposal) else 0
    detail = first.get("detail") or {}
    refused = [v for v in detail.values() if isinstance(v, (list, tuple)) and len(v) == 2]
    if source == "fallback":
        written = 0
    return {
        "written": written,
        "invalid": sum(1 for o, _ in refused if o) if written else 0,
        "missing": sum(1 for o, _ in refused if not o),
        "revisions": int(attempts),
        "source": source,
    }
