"""A phase deadline set and extended by the facilitator on a real `langgraph dev`: the seat
sees it with the time left and what happens when it passes; when it passes, the seats' open
questions of that phase are answered by their fallbacks, marked `deadline` in the record; it
belongs to its phase; only the facilitator sets it."""

from __future__ import annotations

import pytest

from tests.server.support import bearer, start_game, token_of, wait_for, waiting_for, web
from wargraph.kernel.parts import FALLBACK_PLAN
from wargraph.kernel.state import EVERYONE
from wargraph.seats.deciders import DEADLINE_ANSWER
from wargraph.server.games import DEADLINE_KEY

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]


def _deadline(server, client, thread_id: str, body, token: str | None = None):
    return client.post(
        f"/wargraph/graphs/{thread_id}/deadline",
        headers=bearer(token or server.facilitator_token),
        json=body,
    )


def test_a_deadline_is_set_extended_shown_and_enforced(server):
    with web(server) as client:
        game = start_game(server, client, ["azuristan", "crimsonia"])
        thread_id = game["thread_id"]
        seat = bearer(token_of(game["links"]["azuristan"]))
        waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})
        assert client.get("/wargraph/seat", headers=seat).json()["deadline"] is None

        r = _deadline(server, client, thread_id, {"minutes": 10})
        assert r.status_code == 200, r.text
        view = client.get("/wargraph/seat", headers=seat).json()
        shown = view["deadline"]
        assert shown["phase"] == "round 1" and 590 <= shown["seconds_left"] <= 600
        assert not shown["passed"] and "fallback" in shown["when_it_passes"]
        detail = client.get(
            f"/wargraph/graphs/{thread_id}", headers=bearer(server.facilitator_token)
        )
        assert 590 <= detail.json()["deadline"]["seconds_left"] <= 600

        r = _deadline(server, client, thread_id, {"extend": 5})
        assert r.status_code == 200 and 890 <= r.json()["deadline"]["seconds_left"] <= 900

        # refused: a seat's token, no number, both, out of range, a game that does not exist
        assert (
            _deadline(
                server, client, thread_id, {"minutes": 5}, token_of(game["links"]["azuristan"])
            ).status_code
            == 403
        )
        for body in (
            {},
            {"minutes": 5, "extend": 1},
            {"minutes": -1},
            {"minutes": "ten"},
            {"extend": True},
            {"minutes": 10**9},
        ):
            r = _deadline(server, client, thread_id, body)
            assert r.status_code == 400 and "minutes" in r.json()["detail"], (body, r.text)
        assert (
            _deadline(
                server, client, "00000000-0000-0000-0000-000000000000", {"minutes": 1}
            ).status_code
            == 404
        )

        # a player cannot pass their own answer off as the deadline's
        ask = client.get("/wargraph/seat", headers=seat).json()["questions"][0]["ask_id"]
        r = client.post(
            "/wargraph/seat/answer",
            headers=seat,
            json={"ask_id": ask, "answer": {DEADLINE_ANSWER: {"phase": "round 1"}}},
        )
        assert r.status_code == 400 and DEADLINE_ANSWER in r.json()["detail"], r.text

        # it passes: every open question of the phase is answered by its seat's fallback,
        # marked as the deadline's in the record, and the game moves on
        assert _deadline(server, client, thread_id, {"minutes": 0.02}).status_code == 200
        wait_for(
            lambda: client.get("/wargraph/seat", headers=seat).json()["round"] >= 2,
            "the deadline's fallbacks to end round 1",
            timeout=60,
        )
        record = client.get(
            f"/wargraph/graphs/{thread_id}/record", headers=bearer(server.facilitator_token)
        ).json()
        plans = {
            e["author"]: e for e in record["events"] if e["kind"] == "plan" and e["round"] == 1
        }
        assert set(plans) == {"azuristan", "crimsonia"}, record["events"]
        for e in plans.values():
            assert e["data"]["source"] == "deadline" and e["text"] == FALLBACK_PLAN["plan"], e
        waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})  # round 2 asks

        # a deadline of round 1 is not shown in round 2, nor extended there
        assert client.get("/wargraph/seat", headers=seat).json()["deadline"] is None
        r = _deadline(server, client, thread_id, {"extend": 5})
        assert r.status_code == 409 and "no deadline is set for round 2" in r.json()["detail"]
        assert _deadline(server, client, thread_id, {"minutes": 0}).json()["deadline"] is None


def test_at_a_diplomacy_deadline_the_powers_units_hold_and_the_record_says_so(server):
    """FRANCE, played by a person, answers nothing in S1901M: at the deadline its press, its
    orders and its diary are its fallbacks (no message, every unit holds, nothing new), each
    marked `deadline`; the phase is adjudicated and the next one waits for FRANCE again."""
    with web(server) as client:
        body = {
            "scenario": "diplomacy",
            "humans": ["FRANCE"],
            "model": "scripted",
            "options": {"diplomacy.max_year": 1901, "diplomacy.negotiation_rounds": 2},
        }
        facilitator = bearer(server.facilitator_token)
        r = client.post("/wargraph/graphs", headers=facilitator, json=body)
        assert r.status_code == 201, r.text
        thread_id = r.json()["thread_id"]
        waiting_for(server, client, thread_id, {"FRANCE"})
        assert _deadline(server, client, thread_id, {"minutes": 0.02}).status_code == 200

        def next_phase():
            g = client.get(f"/wargraph/graphs/{thread_id}", headers=facilitator).json()
            ok = g["moment"] == "F1901M" and g["status"] == "waiting"
            return g if ok and g["waiting_for"] == ["FRANCE"] else None

        assert (
            wait_for(next_phase, "S1901M to end at its deadline", timeout=120)["deadline"] is None
        )

        def spent_dropped():  # the passed deadline of an ended phase is not kept (nor re-read)
            thread = client.get(f"/threads/{thread_id}", headers=facilitator).json()
            return DEADLINE_KEY not in (thread.get("metadata") or {}) or (
                thread["metadata"][DEADLINE_KEY] is None
            )

        wait_for(spent_dropped, "the spent deadline to be dropped", timeout=30)
        record = client.get(f"/wargraph/graphs/{thread_id}/record", headers=facilitator).json()
        (adjudicated,) = [
            e
            for e in record["events"]
            if e["kind"] == "narration" and (e.get("data") or {}).get("phase") == "S1901M"
        ]
        assert adjudicated["data"]["orders"]["FRANCE"] == ["F BRE H", "A MAR H", "A PAR H"]
        assert adjudicated["data"]["sources"]["FRANCE"] == ["deadline"]
        assert adjudicated["data"]["sources"]["ENGLAND"] == ["scripted"]
        (diary,) = [e for e in record["events"] if e["kind"] == "diary" and e["author"] == "FRANCE"]
        heard = [
            e
            for e in record["events"]
            if e["kind"] == "message"
            and e["round"] == diary["round"]
            and {EVERYONE, "FRANCE"} & set(e.get("audience") or [EVERYONE])
        ]
        # a power that heard nothing gets its diary written by code and is not asked: two rounds
        # of talks, so that FRANCE hears a public message and its diary is the deadline's answer
        assert heard, "no message reached FRANCE: its diary is not asked"
        assert diary["data"]["source"] == "deadline", diary
        assert not [
            e for e in record["events"] if e["kind"] == "message" and e["author"] == "FRANCE"
        ]
