"""`order`: every actor states its move at once, on its own view. A team's members propose and
its leader combines, innermost teams first. The world says what is asked and what an answer
proposes; the proposals wait in `world["proposals"]` for `secretary_validate` and `adjudicate`.

With a sequential `Orders` (`Orders(sequential=True)`) the seats answer one at a time, in the
order of `actors`: the events of each answer are recorded before the next seat is asked, so a
later seat sees the earlier answers in its view (as far as their audiences allow). The graph is
the same: the mount asks one seat per step and runs again when it has answered.

`order` may be mounted more than once in a round (`{"propose": order, ..., "respond": order}`:
a world names one `Orders` per mount, or tells them apart by `table.phase`). Each mount
merges its proposals into the round's per seat, so a later mount keeps what an earlier one
placed (and the secretary approved); a seat that acts in two mounts has its latest in
`proposals` and both in `by_mount` (the round record, `wargraph.kernel.record.RoundRecord`). A
mount's `Orders.update` may write the world's own keys beside it."""

from __future__ import annotations

from typing import Any, TypeVar

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.parts.orders import Orders
from wargraph.kernel.record import ROUND_KEYS, RoundRecord, round_record
from wargraph.kernel.state import CLEAR, Event, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, players

Seat = tuple[str, str | None]  # (who answers, the team it proposes for)


def _seats(table: Table, actors: list[str]) -> list[Seat]:
    s = table.scenario
    seats: list[Seat] = [(a, None) for a in actors if a not in s.teams]
    for tname, team in s.teams.items():
        seats += [(m, tname) for m in team.members if m in s.players]
    return seats


def _plan_id(table: Table, role: str, team: str | None) -> str | None:
    """The id of the seat's answered order ask in this mount, whatever task the world's
    question named (an ask id is `r<round>.<phase>.<task>.<role>[.<key>]`; tasks have no dots);
    None while it is unanswered."""
    head = table.ask_id("", "")[:-1]  # "r<round>.<phase>."
    tail = f".{role}" + (f".{team}" if team else "")
    for ask_id in table.pending:
        if ask_id.startswith(head) and ask_id.endswith(tail):
            task = ask_id[len(head) : len(ask_id) - len(tail)]
            if task and "." not in task and task != "combine":
                return ask_id
    return None


def _combine_id(table: Table, team: str) -> str:
    return table.ask_id("combine", table.scenario.teams[team].leader, team)


def _answer_text(table: Table, ask_id: str | None) -> str | None:
    value = table.answer(ask_id) if ask_id else None
    return (
        None
        if value is None
        else str(table.world.orders_at(table.phase).proposal(table, "", value))
    )


def _next_in_turn(table: Table, orders: Orders, seats: list[Seat]) -> dict[str, Any] | None:
    """A sequential mount: the events of the seats that have answered, in turn, and the next
    seat's question, asked on a view that shows them; None once every seat has answered."""
    recorded: list[Event] = []
    for who, team in seats:
        ask_id = _plan_id(table, who, team)
        if ask_id is None:
            seen = table.after({"events": recorded})
            ask = seen.ask_question(who, orders.question(seen, who, team=team), key=team or "")
            return {"events": recorded, "asks": [ask]}
        decision = table.pending[ask_id]
        proposal = orders.proposal(table, who, decision["value"])
        recorded += orders.events(table, who, proposal, decision["source"], team=team)
    return None


@asks(players)
def order(state: GameState, table: Table) -> dict[str, Any]:
    orders, s = table.world.orders_at(table.phase), table.scenario
    actors = orders.actors(table)
    seats = _seats(table, actors)
    if orders.sequential and (turn := _next_in_turn(table, orders, seats)) is not None:
        return turn
    missing = [(r, t) for r, t in seats if _plan_id(table, r, t) is None]
    if missing:
        return {
            "asks": [
                table.ask_question(r, orders.question(table, r, team=t), key=t or "")
                for r, t in missing
            ]
        }

    # Teams combine bottom-up: a team is asked once all of its sub-teams have their plans.
    for depth in range(max((s.team_depth(t) for t in s.teams), default=-1) + 1):
        combine = []
        for tname, team in s.teams.items():
            if s.team_depth(tname) != depth or table.answer(_combine_id(table, tname)) is not None:
                continue
            plans = {
                m: (
                    _answer_text(table, _plan_id(table, m, tname))
                    if m in s.players
                    else _answer_text(table, _combine_id(table, m))
                )
                or ""
                for m in team.members
            }
            q = orders.combine_question(table, tname, plans)
            combine.append(table.ask_question(team.leader, q, key=tname))
        if combine:
            return {"asks": combine}

    answered: list[tuple[str, str | None, dict[str, Any]]] = [
        (r, t, table.pending[_plan_id(table, r, t) or ""]) for r, t in seats
    ]
    answered += [(tname, None, table.pending[_combine_id(table, tname)]) for tname in s.teams]
    placed = round_record(table.state.get("world"))  # by an earlier mount of this round
    proposals = dict(placed.get("proposals") or {})
    sources = dict(placed.get("sources") or {})
    proposals_now: dict[str, Any] = {}
    events = []
    for who, of_team, decision in answered:
        proposal = orders.proposal(table, who, decision["value"])
        events += orders.events(table, who, proposal, decision["source"], team=of_team)
        if of_team is None:
            proposals[who] = proposals_now[who] = proposal
            sources[who] = decision["source"]
    update_world: RoundRecord = {"proposals": proposals, "sources": sources}
    if not isinstance(table.world.orders, Orders):  # mounted more than once (a world's choice)
        # which mount placed each proposal: a revision the secretary asks for later is read by
        # that mount's Orders, not the first one's (`Secretary.revised`)
        placed_by = dict(placed.get("placed_by") or {})
        placed_by.update(dict.fromkeys(proposals_now, table.phase))
        update_world["placed_by"] = placed_by
        # every mount's proposals: a seat acting in two mounts keeps both
        by_mount = dict(placed.get("by_mount") or {})
        by_mount[table.phase] = dict(proposals_now)
        update_world["by_mount"] = by_mount
    # a seat that proposes again is judged again: the secretary's state of its earlier proposal
    # goes (written only when there is one, so a game mounting `order` once is unchanged)
    if any(a in (placed.get("attempts") or {}) for a in proposals_now):
        update_world["attempts"] = _without(placed.get("attempts"), proposals_now)
    if any(a in (placed.get("status") or {}) for a in proposals_now):
        update_world["status"] = _without(placed.get("status"), proposals_now)
    if any(a in (placed.get("trail") or {}) for a in proposals_now):
        update_world["trail"] = _without(placed.get("trail"), proposals_now)
    if any(a in (placed.get("notes") or {}) for a in proposals_now):
        update_world["notes"] = _without(placed.get("notes"), proposals_now)
    world: dict[str, Any] = {**update_world, **_part_update(table, orders, proposals_now)}
    return {"events": events, "world": world, "pending": {CLEAR: True}}


V = TypeVar("V")


def _without(per_seat: dict[str, V] | None, seats: dict[str, Any]) -> dict[str, V]:
    return {a: v for a, v in (per_seat or {}).items() if a not in seats}


def _part_update(table: Table, orders: Orders, proposals: dict[str, Any]) -> dict[str, Any]:
    """What the mount's `Orders.update` writes to `world`, refused under a round record name."""
    update = dict(orders.update(table, proposals) or {})
    taken = sorted(set(update) & set(ROUND_KEYS))
    if taken:
        raise ValueError(
            f"{type(orders).__name__}.update (mount {table.phase!r}) writes {taken}: the round "
            "record's names (wargraph.kernel.record.RoundRecord); name the world's own keys"
        )
    return update
