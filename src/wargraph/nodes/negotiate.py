"""`negotiate`: every negotiator sends messages at once (to everyone or to one seat), for the
world's number of exchanges; the world's press rules decide what is delivered.

The step that records an exchange also asks the next one (on a view that holds the messages
just recorded), or ends the phase after the last: one step and one checkpoint between two waves
of calls rather than two (issue 43)."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.question import NEGOTIATE
from wargraph.kernel.state import CLEAR, EVERYONE, Event, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, players
from wargraph.seats.asks import Ask


def _counter(table: Table) -> str:
    # per mounted name, so two negotiation phases in one round keep their own count
    return f"{table.phase}_exchange"


# loops: a game stored by an earlier version may stand between an exchange's record and the next
# exchange's asks (it recorded, then ran again to ask); it resumes through this edge
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
        return {"asks": _ask(table, missing, speakers, exchange)}
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
    last = exchange >= exchanges  # then the phase moves on from this step
    written = {**press.delivered(table, sent), _counter(table): 0 if last else exchange}
    recorded = {"events": events, "pending": {CLEAR: True}, "world": written}
    if last:
        return recorded
    # the next exchange is asked on the record as it stands once this one is in it
    return {**recorded, "asks": _ask(table.after(recorded), speakers, speakers, exchange + 1)}


def _ask(table: Table, seats: list[str], speakers: list[str], exchange: int) -> list[Ask]:
    press = table.world.press
    return [
        table.ask_question(
            r,
            press.question(table, r, exchange, press.recipients(table, r, speakers)),
            key=f"x{exchange}",
        )
        for r in seats
    ]


def _refused(table: Table, sender: str, to: str, text: str, reason: str, key: str) -> Event:
    return table.event(
        kind="verdict",
        author=table.world.secretary.name,
        text=f"Your message to {to or '?'} was not delivered: {reason}.",
        audience=[sender],
        data={"refused_message": {"to": to, "text": text}, "reason": reason},
        key=f"{sender}.{key}",
    )
