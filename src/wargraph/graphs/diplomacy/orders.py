"""Orders legal by construction: every legal order per unit or slot, the flat enum schema, a
schema answer turned into the exact order list, hold fallbacks, and the secretary's check on a
copy of the phase."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from diplomacy import Game  # type: ignore[import-untyped]

from wargraph.graphs.diplomacy.engine import (
    BUILD_SLOT,
    DISBAND_SLOT,
    TYPE_RANK,
    WAIVE,
    Position,
    as_game,
    current,
    err_text,
    load,
    norm_order,
    order_type,
    position,
)

# ---------------------------------------------------------------------------------------------
# Legal orders and the output schema
# ---------------------------------------------------------------------------------------------


def _sort_orders(orders: Iterable[str]) -> list[str]:
    # Hold (or disband) first, then moves, supports, convoys; alphabetical inside a type.
    return sorted(set(orders), key=lambda o: (TYPE_RANK.get(order_type(o), 9), o))


def legal_orders(world: Game | Mapping[str, Any], power: str) -> dict[str, list[str]]:
    """Every legal order of ``power`` this phase, keyed by what must be ordered.

    * Movement: one key per unit (``"A PAR"``, ``"F STP/SC"``), value all its legal orders
      (hold, moves incl. ``VIA`` convoys, supports and convoys for any power's units).
    * Retreats: one key per dislodged unit, value its retreats and ``"<unit> D"``.
    * Adjustments, builds: ``n = min(centres - units, free home centres)`` slots
      ``build_1 .. build_n``, each with every legal build order plus ``"WAIVE"``.
    * Adjustments, disbands: ``n = units - centres`` slots ``disband_1 .. disband_n``, each with
      every ``"<unit> D"``.

    Slots (rather than one key per site/unit) make the number of orders right by construction;
    duplicates across slots are resolved by :func:`finalize_orders`.
    Empty when the power has nothing to order (or the game is over). For a saved game the
    answer is computed once per position and power (see :func:`position`); the caller gets
    its own lists.
    """
    power = power.upper()
    if isinstance(world, Game):
        return _legal_orders(world, power, world.get_all_possible_orders())
    return legal_orders_at(position(world), power)


def legal_orders_at(pos: Position, power: str) -> dict[str, list[str]]:
    """:func:`legal_orders` at a shared position (computed once per power; the caller's copy)."""
    power = power.upper()
    legal = pos.derived(("legal", power), lambda g: _legal_orders(g, power, pos.possible_orders()))
    return {k: list(v) for k, v in legal.items()}


def _legal_orders(
    game: Game, power: str, possible: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    if game.is_game_done or game.phase_type not in ("M", "R", "A"):
        return {}
    legal: dict[str, list[str]] = {}

    if game.phase_type in ("M", "R"):
        units = pw.units if game.phase_type == "M" else list(pw.retreats)
        for unit in sorted(units, key=lambda u: u[2:]):
            opts = [o for o in possible.get(unit[2:], []) if o.startswith(unit + " ")]
            legal[unit] = _sort_orders(opts)
        return legal

    # Adjustments
    need = len(pw.centers) - len(pw.units)
    if need > 0:
        sites = game.get_orderable_locations(power)  # free, owned home centres
        builds: list[str] = []
        for site in sites:
            for loc in game.map.find_coasts(site):
                builds += [o for o in possible.get(loc, []) if o.endswith(" B")]
        builds = sorted(set(builds), key=lambda o: (o.split()[1][:3], o))
        for i in range(min(need, len(sites))):
            legal[BUILD_SLOT.format(i + 1)] = builds + [WAIVE]
    elif need < 0:
        disbands = sorted(f"{u} D" for u in pw.units)
        for i in range(-need):
            legal[DISBAND_SLOT.format(i + 1)] = list(disbands)
    return legal


def orders_json_schema(legal: Mapping[str, Sequence[str]], *, title: str = "Orders") -> dict:
    """A FLAT JSON schema: an object with one required string property per key of ``legal``
    whose value must be one of that key's legal orders. No ``$defs``/``anyOf``/``$ref``, so
    llama.cpp's schema-to-grammar conversion keeps it exact."""
    return {
        "title": title,
        "type": "object",
        "properties": {key: {"type": "string", "enum": list(opts)} for key, opts in legal.items()},
        "required": list(legal),
        "additionalProperties": False,
    }


def finalize_orders(
    world: Game | Mapping[str, Any],
    power: str,
    answer: Mapping[str, Any] | None,
    *,
    legal: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """Turn a schema answer (``{key: order}``) into the order list to submit.

    Anything missing or not among that key's legal orders falls back: a movement unit holds,
    a dislodged unit disbands. Adjustments (the post-step the slot schema needs):

    * builds: keep the first build per home centre in slot order (a second build on the same
      site becomes a WAIVE) and pad with ``WAIVE`` so exactly ``n`` orders are returned;
    * disbands: keep distinct units in slot order; if duplicates leave fewer than ``n``, add
      the units the engine's civil-disorder rule would remove (farthest from a home centre,
      fleets before armies on ties, then alphabetical), so the count is always exact and the
      record shows every disband explicitly.
    """
    game = as_game(world)
    power = power.upper()
    legal = legal if legal is not None else legal_orders(game, power)
    answer = answer or {}
    phase_type = game.phase_type
    if phase_type in ("M", "R"):
        out = []
        for key, opts in legal.items():
            choice = answer.get(key)
            if isinstance(choice, str) and choice in opts:
                out.append(choice)
            else:
                out.append(f"{key} H" if phase_type == "M" else f"{key} D")
        return out
    if phase_type != "A" or not legal:
        return []

    slots = list(legal)
    chosen = [answer.get(k) for k in slots]
    chosen = [
        c if isinstance(c, str) and c in legal[k] else None
        for k, c in zip(slots, chosen, strict=True)
    ]
    if slots[0].startswith("build_"):
        sites_used: set[str] = set()
        out = []
        for c in chosen:
            if c and c != WAIVE and c.split()[1][:3] not in sites_used:
                sites_used.add(c.split()[1][:3])
                out.append(c)
        return out + [WAIVE] * (len(slots) - len(out))

    # Disbands
    out = []
    for c in chosen:
        if c and c not in out:
            out.append(c)
    if len(out) < len(slots):
        for unit in _civil_disorder_disbands(game, power):
            if f"{unit} D" not in out:
                out.append(f"{unit} D")
            if len(out) == len(slots):
                break
    return out


def _civil_disorder_disbands(game: Game, power: str) -> list[str]:
    # Mirrors the engine's civil-disorder choice (Game._other_results): largest distance to a
    # home centre first, fleets before armies on ties, then by name. Uses the engine's own
    # distance function so the choice matches what the engine would do.
    pw = game.get_power(power)
    scored = [
        (-game._get_distance_to_home(u[0], u[2:], pw.homes), 0 if u[0] == "F" else 1, u)
        for u in pw.units
    ]
    return [u for _, _, u in sorted(scored)]


def hold_orders(
    world: Game | Mapping[str, Any],
    power: str,
    *,
    legal: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The documented fallback order set: every unit holds; dislodged units disband; builds are
    waived; required disbands follow the engine's civil-disorder rule."""
    return finalize_orders(world, power, {}, legal=legal)


# ---------------------------------------------------------------------------------------------
# Secretary and adjudication
# ---------------------------------------------------------------------------------------------


def check_orders(
    saved: Mapping[str, Any], power: str, orders: Sequence[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The secretary: submit ``orders`` to a copy of the current phase and report.

    Returns ``(accepted, rejected)``: ``accepted`` holds the engine's canonical form of each
    accepted order (e.g. ``"A MAR - SPA"`` for ``"a mar-spa"``), ``rejected`` holds
    ``(order, reason)``. An order is rejected when the engine refuses it (its error message is
    the reason), when it is a second order for the same unit, when the engine takes it but it is
    not among :func:`legal_orders` (e.g. a support that can never matter), or when it exceeds
    the number of builds/disbands allowed. Orders are submitted one by one so every engine error
    is attributed to the order that caused it.
    """
    game = load(current(saved))
    power = power.upper()
    pw = game.get_power(power)
    if pw is None:
        raise ValueError(f"unknown power {power!r}")
    if game.is_game_done:
        return [], [(o, "the game is over") for o in orders]
    legal = legal_orders(game, power)
    phase_type = game.phase_type
    legal_all = {o for opts in legal.values() for o in opts}
    accepted: list[str] = []
    rejected: list[tuple[str, str]] = []
    ordered_units: set[str] = set()
    builds = disbands = 0
    max_slots = len(legal)

    for raw in orders:
        order = norm_order(raw)
        if not order:
            rejected.append((str(raw), "empty order"))
            continue
        if phase_type == "A" and not legal:
            rejected.append((raw, f"{power} has no builds or disbands this phase"))
            continue
        # Each order alone against a cleared power: engine errors are then attributed to the
        # order that caused them (duplicates are caught below, not by the engine's reorder check).
        game.clear_orders(power)
        game.error = []
        try:
            game.set_orders(power, [order])
        except (IndexError, ValueError, KeyError, AttributeError, TypeError):
            # the engine's parser fails on some fragments ("A", "WAIVE" in a movement phase,
            # "A PAR S A"): an order it cannot read is refused, never a crash of the game
            game.clear_orders(power)
            game.error = []
            rejected.append((raw, "not an order the engine can read" + _legal_hint(legal, order)))
            continue
        errors = [err_text(e) for e in game.error]
        if phase_type == "M":
            canonical = next((f"{u} {o}" for u, o in pw.orders.items()), None)
        elif order == WAIVE:
            canonical = WAIVE if WAIVE in pw.adjust else None
        else:
            canonical = next((a for a in pw.adjust if a != WAIVE), None)
            if canonical and canonical.startswith("VOID"):
                canonical = None
        game.error = []

        if errors or canonical is None:
            engine = "; ".join(errors) if errors else "order ignored"
            rejected.append((raw, f"illegal order (engine: {engine})" + _legal_hint(legal, order)))
            continue
        canonical = canonical.removesuffix(" ?")
        kind = order_type(canonical)
        unit = " ".join(canonical.split()[:2])
        if kind != "waive" and unit in ordered_units:
            rejected.append((raw, f"{unit} already has an order this phase"))
            continue
        if canonical not in legal_all:
            rejected.append(
                (raw, "not among the legal orders this phase" + _legal_hint(legal, canonical))
            )
            continue
        if kind in ("build", "waive"):
            if builds >= max_slots:
                rejected.append((raw, f"only {max_slots} build(s) or waive(s) allowed"))
                continue
            builds += 1
        elif kind == "disband" and phase_type == "A":
            if disbands >= max_slots:
                rejected.append((raw, f"exactly {max_slots} disband(s) required"))
                continue
            disbands += 1
        if kind != "waive":
            ordered_units.add(unit)
        # Keep the caller's spelling when it is itself a listed legal order (the engine drops
        # coasts from support targets, "S F CON - BUL/SC" -> "S F CON - BUL"; both are legal).
        accepted.append(order if order in legal_all else canonical)
    return accepted, rejected


def check_answer(
    saved: Mapping[str, Any],
    power: str,
    answer: Mapping[str, Any],
    *,
    legal: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """The secretary for a schema answer (``{key: order}``, keys as in :func:`legal_orders`).

    Returns ``(accepted, refused)``: ``accepted`` maps a key to its order (the engine's canonical
    form when the caller's spelling is not itself a listed order), ``refused`` maps a key to
    ``(order, reason)``. A missing or empty answer for a key is refused ("no order given"); in
    movement and retreat phases an order for another unit than its key is refused too. Keys not
    in ``legal`` are ignored (they are not orderable this phase)."""
    power = power.upper()
    legal = legal if legal is not None else legal_orders(saved, power)
    keys = list(legal)
    by_unit = str(saved["phases"][-1]["name"])[-1:] in ("M", "R")
    given = [str(answer.get(k) or "").strip() for k in keys]
    if by_unit:
        given = [with_unit(k, o) for k, o in zip(keys, given, strict=True)]
    if _listed(legal, given, by_unit=by_unit):
        return dict(zip(keys, given, strict=True)), {}

    def for_key(key: str, order: str) -> bool:
        return not by_unit or " ".join(order.split()[:2]) == key

    def site(order: str) -> str | None:  # two builds on one site: the engine keeps only one
        return order.split()[1][:3] if order_type(order) == "build" else None

    accepted, rejected = check_orders(saved, power, given)
    sites = [site(o) for o in accepted if site(o)]
    if (
        not rejected
        and len(accepted) == len(keys)
        and all(for_key(k, o) for k, o in zip(keys, accepted, strict=True))
        and len(sites) == len(set(sites))
    ):
        return dict(zip(keys, accepted, strict=True)), {}
    # Attribute every refusal to its key: orders are checked in sequence, so a prefix of
    # accepted orders plus one more is refused exactly when that one is (the rare path).
    out: dict[str, str] = {}
    refused: dict[str, tuple[str, str]] = {}
    prefix: list[str] = []
    for key, order in zip(keys, given, strict=True):
        if not order:
            refused[key] = (order, "no order given" + _legal_hint(legal, key))
            continue
        acc, rej = check_orders(saved, power, [*prefix, order])
        if rej:
            refused[key] = (order, rej[-1][1])
        elif not for_key(key, acc[-1]):
            refused[key] = (order, f"this is not an order for {key}" + _legal_hint(legal, key))
        elif site(acc[-1]) and site(acc[-1]) in {site(o) for o in out.values()}:
            refused[key] = (order, f"a unit is already built at {site(acc[-1])} this phase")
        else:
            out[key] = acc[-1]
            prefix.append(order)
    return out, refused


_PROVINCE = re.compile(r"[A-Za-z]{3}(/[A-Za-z]{2})?")


def with_unit(key: str, order: str) -> str:
    """An order written in its unit's own field without the unit, as a person does ("- SPA",
    "H", "S A PAR - BUR", "PAR - BUR", or only "SPA" for a move): the unit put in front. An
    order naming a unit ("A MAR - SPA", "F BRE H") is left as written."""
    first = order.split()[0].upper() if order.split() else ""
    if not first or first in ("A", "F"):
        return order
    kind, _, where = key.partition(" ")
    if first == where.upper():  # "PAR - BUR" in A PAR's field: only the unit's kind left out
        return f"{kind} {order}"
    if _PROVINCE.fullmatch(order):
        return f"{key} - {order}"
    return f"{key} {order}"


def _listed(legal: Mapping[str, Sequence[str]], given: Sequence[str], *, by_unit: bool) -> bool:
    """The answer the secretary accepts without asking the engine: each key's order is one of
    that key's legal orders (the engine's own list, so the engine takes each of them as given),
    and, in adjustments, no unit is disbanded twice and no site is built on twice. Anything else
    goes through the engine order by order (:func:`check_orders`), as people's free text does."""
    if not all(o in legal[k] for k, o in zip(legal, given, strict=True)):
        return False
    if by_unit:  # one key per unit, and every listed order is for its own key's unit
        return True
    real = [o for o in given if o != WAIVE]
    sites = [o.split()[1][:3] for o in real if order_type(o) == "build"]
    return len(real) == len(set(real)) and len(sites) == len(set(sites))


def _legal_hint(legal: Mapping[str, Sequence[str]], order: str, limit: int = 12) -> str:
    unit = " ".join(order.split()[:2])
    opts = legal.get(unit)
    if not opts:
        keys = ", ".join(legal) or "nothing"
        return f"; you can order: {keys}"
    shown = list(opts[:limit]) + (["..."] if len(opts) > limit else [])
    return f"; legal for {unit}: {' | '.join(shown)}"
