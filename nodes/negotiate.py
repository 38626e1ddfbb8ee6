"""`negotiate`: every actor sends messages at once (public or to one seat), for several exchanges."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.prompts import render_prompt
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table

EXCHANGES_KEY = "negotiation_exchange"


def negotiators(table: Table) -> list[str]:
    """Players on no team speak for themselves; a team speaks through its leader."""
    s = table.scenario
    return [a if a in s.players else s.teams[a].leader for a in s.actors]


def negotiate(
    state: GameState, table: Table, *, exchanges: int = 1, limit: int = 2
) -> dict[str, Any]:
    speakers = negotiators(table)
    exchange = int(table.state.get("world", {}).get(EXCHANGES_KEY, 0)) + 1
    if exchange > exchanges:
        return {"world": {EXCHANGES_KEY: 0}}
    ids = {r: f"r{table.round}.negotiate.message.{r}.x{exchange}" for r in speakers}
    if any(i not in table.pending for i in ids.values()):
        return {
            "asks": [
                table.ask(
                    r,
                    "message",
                    key=f"x{exchange}",
                    system=render_prompt("player_system", table.variant(r)),
                    context=table.view_text(r),
                    question=render_prompt(
                        "negotiate_question",
                        table.variant(r),
                        round=table.round,
                        exchange=exchange,
                        exchanges=exchanges,
                        limit=limit,
                        recipients=", ".join(x for x in speakers if x != r),
                    ),
                    schema="messages",
                    schema_args={"recipients": [x for x in speakers if x != r], "limit": limit},
                    fallback={"messages": []},
                )
                for r in speakers
                if ids[r] not in table.pending
            ]
        }
    events = []
    for r in speakers:
        for n, msg in enumerate(table.pending[ids[r]]["value"]["messages"]):
            to = msg["to"]
            audience = ["*"] if to == "everyone" else [r, to]
            events.append(
                make_event(
                    round=table.round,
                    phase="negotiate",
                    kind="message",
                    author=r,
                    text=msg["text"],
                    audience=audience,
                    key=f"x{exchange}.{n}",
                )
            )
    # Another exchange follows (or the phase ends on re-entry) after the answers are recorded.
    return {
        "events": events,
        "pending": {CLEAR: True},
        "world": {EXCHANGES_KEY: exchange},
        "next": "negotiate",
    }
