"""`negotiate`: every negotiator sends messages at once (to everyone or to one seat), for the
world's number of exchanges; the world's press rules decide what is delivered."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.question import NEGOTIATE
from wargraph.kernel.state import CLEAR, EVERYONE, Event, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, players


def _counter(table: Table) -> str:
    # per mounted name, so two negotiation phases in one round keep their own count
    return f"{table.phase}_exchange"


@asks(players, loops=True)
def negotiate(state: GameState, table: Table) -> dict[str, Any]:
    world = table.world
    press = world.press
    speakers = world.cast.actors(table, NEGOTIATE)
    exchanges = press.exchanges(table) if speakers else 0
    exchange = int(table.state.get("world", {}).get(_counter(table), 0)) + 1
    if exchange > exchanges:
        return {"world": {_counter(table): 0}}
    key = f"x{exchange}"
    ids = {r: table.ask_id(press.task, r, key) for r in speakers}
    missing = [r for r in speakers if ids[r] not in table.pending]
    if missing:
        return {
            "asks": [
                table.ask_question(
                    r,
                    press.question(table, r, exchange, press.recipients(table, r, speakers)),
                    key=key,
                )
                for r in missing
            ]
        }
    events: list[Event] = []
    sent: list[tuple[str, str, str]] = []
    for r in speakers:
        decision = table.pending[ids[r]]
        ok, refused = press.accept(table, r, press.said(decision["value"]))
        for n, (to, text) in enumerate(ok):
            events.append(
                table.event(
                    kind="message",
                    author=r,
                    text=text,
                    audience=[EVERYONE] if to == press.everyone else [r, to],
                    data={
                        "to": to,
                        "exchange": exchange,
                        "source": decision["source"],
                        **press.data(table, exchange),
                    },
                    key=f"{key}.{n}",
                )
            )
            sent.append((r, to, text))
        for n, (to, text, reason) in enumerate(refused):
            events.append(_refused(table, r, to, text, reason, f"{key}.{n}"))
    # Another exchange follows (or the phase ends on re-entry) after the answers are recorded.
    return {
        "events": events,
        "pending": {CLEAR: True},
        "world": {_counter(table): exchange, **press.delivered(table, sent)},
        "next": table.phase,
    }


def _refused(table: Table, sender: str, to: str, text: str, reason: str, key: str) -> Event:
    return table.event(
        kind="verdict",
        author=table.world.secretary.name,
        text=f"Your message to {to or '?'} was not delivered: {reason}.",
        audience=[sender],
        data={"refused_message": {"to": to, "text": text}, "reason": reason},
        key=f"{sender}.{key}",
    )
