"""`secretary_validate`: one secretary for every game. The world checks each proposal; refused
ones go back to their seat with the reasons, at most the world's number of revisions; then the
world's documented give-up applies (hold, amend, drop). A secretary seat (model or person), when
the world has one, also reviews what the rules accept and may object with a reason."""

from __future__ import annotations

from typing import Any

from wargraph.kernel.question import Check
from wargraph.kernel.record import RoundRecord, round_record
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table
from wargraph.nodes.seats import asks, players
from wargraph.seats.asks import Ask

PENDING, REVIEWING, REVISING, ACCEPTED = "pending", "reviewing", "revising", "accepted"


def _revise_key(attempt: int) -> str:
    return f"a{attempt}"


def _seats(scenario: Any, world: Any) -> list[str]:
    return players(scenario, world) + world.secretary.seats(scenario)


@asks(_seats)
def secretary_validate(state: GameState, table: Table) -> dict[str, Any]:
    sec = table.world.secretary
    w = round_record(table.state.get("world"))
    proposals = dict(w.get("proposals") or {})
    if not proposals:
        return {}
    attempts = {a: int((w.get("attempts") or {}).get(a, 0)) for a in proposals}
    status = {a: (w.get("status") or {}).get(a, PENDING) for a in proposals}
    sources = dict(w.get("sources") or {})
    trail = {
        a: list((w.get("trail") or {}).get(a) or [{"proposal": p, "source": sources.get(a, "")}])
        for a, p in proposals.items()
    }
    notes = dict(w.get("notes") or {})
    secretary = sec.seat(table)
    # proposals an earlier mount of this phase judged this round (`order` mounted twice): kept
    # as they are, and their verdicts not repeated; noted at this mount's first step
    marker = table.ask_id("judged", "")
    earlier = table.pending.get(marker)
    if earlier is None:
        earlier = [a for a in proposals if status[a] not in (PENDING, REVIEWING, REVISING)]

    for a in proposals:  # take in the revisions that came back
        if status[a] != REVISING:
            continue
        decision = table.pending.get(table.ask_id("revise", a, _revise_key(attempts[a])))
        if decision:
            proposals[a] = sec.revised(table, a, proposals[a], decision["value"])
            trail[a].append({"proposal": proposals[a], "source": decision["source"]})
            status[a] = PENDING

    out: list[Ask] = []
    for a in proposals:
        if status[a] not in (PENDING, REVIEWING):
            continue
        check = sec.check(table, a, proposals[a])
        if check.ok and secretary:
            review_key = f"{a}.{_revise_key(attempts[a])}"
            review = table.pending.get(table.ask_id("review", secretary, review_key))
            if review is None:
                q = sec.review_question(table, a, proposals[a], attempts[a])
                out.append(table.ask_question(secretary, q, key=review_key))
                status[a] = REVIEWING
                continue
            if not review["value"].get("valid", True):
                why = review["value"].get("reason") or "no reason given"
                check = Check(accepted=check.accepted, reasons=[f"the secretary objects: {why}"])
        trail[a][-1]["reasons"] = list(check.reasons)
        if check.detail is not None:
            trail[a][-1]["detail"] = check.detail
        if check.ok:
            proposals[a], status[a] = check.accepted, ACCEPTED
        elif attempts[a] < sec.max_revisions(table):
            attempts[a] += 1
            q = sec.revise_question(table, a, proposals[a], check, attempts[a])
            out.append(table.ask_question(a, q, key=_revise_key(attempts[a])))
            status[a] = REVISING
        else:
            proposals[a], notes[a] = sec.give_up(table, a, proposals[a], check)
            status[a] = sec.give_up_status

    update_world: RoundRecord = {
        "proposals": proposals,
        "attempts": attempts,
        "status": status,
        "trail": trail,
        "notes": notes,
    }
    if "by_mount" in w:  # each mount's proposals as the secretary leaves them
        placed_by = w.get("placed_by") or {}
        by_mount = {m: dict(p) for m, p in w["by_mount"].items()}
        for a, p in proposals.items():
            if a in by_mount.get(placed_by.get(a, ""), {}):
                by_mount[placed_by[a]][a] = p
        update_world["by_mount"] = by_mount
    if out:
        return {"asks": out, "world": update_world, "pending": {marker: earlier}}
    events = [
        e
        for a in proposals
        if a not in earlier
        for e in sec.verdict_events(
            table, a, status[a], attempts[a], notes.get(a, ""), trail[a], proposals[a]
        )
    ]
    return {"world": update_world, "events": events, "pending": {CLEAR: True}}
