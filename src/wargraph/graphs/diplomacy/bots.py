"""Diplomacy bots of known strength (wargraph.seats.bots): each plays only legal orders, taken from
the ask's legal orders (`schema_args.legal`) and the unit blocks the world gives a bot seat
(`facts.units`: each unit's nearest unowned supply centres with their shortest paths).

- `greedy`: every unit heads for its nearest supply centre it does not own (a unit standing on
  one holds it until it is owned); units that have nowhere better to go support their own
  attacks; builds on free home centres, retreats towards centres.
- `hold`: holds, disbands when dislodged, waives builds (the documented fallback).
- `random_legal`: any legal order, uniformly at random (seeded).
"""

from __future__ import annotations

import random
from typing import Any

ORDER_TASKS = ("orders", "revise")


def _legal(ask: dict[str, Any]) -> dict[str, list[str]] | None:
    if ask.get("task") not in ORDER_TASKS:
        return None  # messages, diaries: the scripted decider answers them
    return (ask.get("schema_args") or {}).get("legal")


def hold(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    if _legal(ask) is None:
        return None
    return dict(ask["fallback"])


def random_legal(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    legal = _legal(ask)
    if legal is None:
        return None
    return {key: rng.choice(opts) if opts else ask["fallback"][key] for key, opts in legal.items()}


def _site(order: str) -> str:
    return order.split()[1][:3]


def _builds(legal: dict[str, list[str]], fallback: dict[str, str]) -> dict[str, str]:
    """One build per slot on distinct sites, armies first (they reach more centres), or the
    fallback (waive, disband) where no site is left."""
    out, used = {}, set()
    for key, opts in legal.items():
        pick = next(
            (
                o
                for o in sorted(opts, key=lambda o: (not o.startswith("A "), o))
                if o.endswith(" B") and _site(o) not in used
            ),
            None,
        )
        if pick:
            used.add(_site(pick))
        out[key] = pick or fallback[key]
    return out


def greedy(ask: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    legal = _legal(ask)
    if legal is None:
        return None
    facts = ask.get("facts") or {}
    if facts.get("phase_type") == "A":
        return _builds(legal, ask["fallback"])
    blocks = {b["unit"]: b for b in facts.get("units", [])}
    if facts.get("phase_type") == "R":
        return {
            key: _retreat(opts, blocks.get(key), ask["fallback"][key])
            for key, opts in legal.items()
        }
    orders: dict[str, str] = {}
    claimed: set[str] = set()  # provinces an own unit moves to (no two units bounce there)
    stay: list[str] = []
    for unit, opts in legal.items():
        block = blocks.get(unit) or {}
        standing_on_foreign_centre = block.get("is_centre") and block.get(
            "centre_owner"
        ) != facts.get("power")
        move = (
            None if standing_on_foreign_centre else _move_towards_centre(unit, opts, block, claimed)
        )
        if move:
            orders[unit] = move
            claimed.add(move.split(" - ")[1].split()[0][:3])
        else:
            stay.append(unit)
    moves = {u: o for u, o in orders.items()}
    for unit in stay:
        orders[unit] = _support(unit, legal[unit], moves) or f"{unit} H"
        if orders[unit] not in legal[unit]:
            orders[unit] = ask["fallback"][unit]
    return orders


def _move_towards_centre(
    unit: str, opts: list[str], block: dict[str, Any], claimed: set[str]
) -> str | None:
    """The first step of the shortest path to the nearest unowned centre not already claimed."""
    for centre in block.get("nearest_unowned_centres", []):
        path = centre.get("path") or []
        if centre.get("by_convoy") or len(path) < 2 or centre["centre"] in claimed:
            continue
        step = path[1]
        order = f"{unit} - {step}"
        if order in opts and step[:3] not in claimed:
            return order
    return None


def _support(unit: str, opts: list[str], moves: dict[str, str]) -> str | None:
    """Support one of our own moves if this unit can."""
    for order in sorted(moves.values()):
        wanted = f"{unit} S {order}"
        if wanted in opts:
            return wanted
    return None


def _retreat(opts: list[str], block: dict[str, Any] | None, fallback: str) -> str:
    centres = {c["centre"] for c in (block or {}).get("nearest_unowned_centres", [])}
    moves = [o for o in opts if " R " in o]
    for order in moves:
        if order.split(" R ")[1][:3] in centres:
            return order
    return moves[0] if moves else fallback
