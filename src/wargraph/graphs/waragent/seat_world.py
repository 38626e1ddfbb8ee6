"""What a country's seat page shows of the world (`Family.seat_world`): its own board and stick,
the same beliefs its prompt reads (`Countries.private_view`), never the true board."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from wargraph.graphs.waragent.actions import NO_RELATION
from wargraph.graphs.waragent.board import Board


def panels(scenario: Any, values: Mapping[str, Any], seat: str) -> list[dict[str, Any]]:
    """The seat's relations, who it knows to be mobilized and the requests waiting for it; []
    for a seat that is no country (the secretary) or before the world is set up."""
    world = values.get("world")
    state = world.get("waragent") if isinstance(world, dict) else None
    beliefs = state.get("beliefs") if isinstance(state, dict) else None
    mine = beliefs.get(seat) if isinstance(beliefs, dict) else None
    if not isinstance(mine, dict):
        return []
    try:
        board = Board.model_validate(mine)
    except ValidationError:
        return []
    asks = {r.sender: r.kind for r in board.requests if r.receiver == seat}
    rows = [
        [
            c,
            board.relation(seat, c),
            "yes" if board.is_mobilized(c) else "no",
            f"asks you for {asks[c]}" if c in asks else "",
        ]
        for c in board.countries
        if c != seat
    ]
    others = [
        [f"{a} – {b}", board.relation(a, b)]
        for i, a in enumerate(board.countries)
        for b in board.countries[i + 1 :]
        if seat not in (a, b) and board.relation(a, b) != NO_RELATION
    ]
    you = "You are mobilized." if board.is_mobilized(seat) else "You are not mobilized."
    out: list[dict[str, Any]] = [
        {
            "kind": "table",
            "title": "Your board and stick (what you know now)",
            "columns": ["country", "relation with you", "mobilized", "request"],
            "rows": rows,
            "note": you,
        }
    ]
    if others:
        out.append(
            {
                "kind": "table",
                "title": "Relations between others (as far as you know)",
                "columns": ["pair", "relation"],
                "rows": others,
            }
        )
    return out
