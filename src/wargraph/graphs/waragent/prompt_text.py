"""A country's view of the board and the list of actions, as short text for its prompt."""

from __future__ import annotations

from wargraph.graphs.waragent.actions import ACTION_HELP, ACTION_TYPES, NO_RELATION
from wargraph.graphs.waragent.board import Board


def describe_board(board: Board, viewer: str) -> str:
    """A country's own view of the board and stick, as short lines for a prompt."""
    lines = []
    own = [f"{c}: {board.relation(viewer, c)}" for c in board.countries if c != viewer]
    lines.append("Your relations: " + "; ".join(own) + ".")
    others = []
    for a, b in ((a, b) for i, a in enumerate(board.countries) for b in board.countries[i + 1 :]):
        if viewer not in (a, b) and board.relation(a, b) != NO_RELATION:
            others.append(f"{a}-{b}: {board.relation(a, b)}")
    lines.append("Known relations between others: " + ("; ".join(others) or "none") + ".")
    lines.append("Mobilized: " + (", ".join(board.mobilized) or "nobody") + ".")
    lines.append("You are " + ("" if board.is_mobilized(viewer) else "not ") + "mobilized.")
    asks = [f"{r.sender} asks you for {r.kind}" for r in board.requests if r.receiver == viewer]
    lines.append("Requests waiting for your answer: " + ("; ".join(asks) or "none") + ".")
    return "\n".join(lines)


def action_menu() -> str:
    return "\n".join(f"- {t}: {ACTION_HELP[t]}" for t in ACTION_TYPES)
