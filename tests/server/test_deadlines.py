"""A phase deadline set and extended by the facilitator on a real `langgraph dev`: the seat
sees it with the time left and what happens when it passes (advisory: nothing is answered for
anyone; an answer after it is taken); it belongs to its phase; only the facilitator sets it."""

from __future__ import annotations

import time

import pytest

from tests.server.support import bearer, start_game, token_of, wait_for, waiting_for, web

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]


def _deadline(server, client, thread_id: str, body, token: str | None = None):
    return client.post(
        f"/wargraph/graphs/{thread_id}/deadline",
        headers=bearer(token or server.facilitator_token),
        json=body,
    )


def test_a_deadline_is_set_extended_shown_and_advisory(server):
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
        assert not shown["passed"] and "nothing is sent for you" in shown["when_it_passes"]
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

        # it passes: the seat is told, its question stays open, and its answer is still taken
        assert _deadline(server, client, thread_id, {"minutes": 0.02}).status_code == 200
        time.sleep(1.5)
        view = client.get("/wargraph/seat", headers=seat).json()
        assert view["deadline"]["passed"] and view["deadline"]["seconds_left"] == 0
        assert view["status"] == "your_turn" and view["questions"]
        ask = view["questions"][0]["ask_id"]
        r = client.post(
            "/wargraph/seat/answer",
            headers=seat,
            json={"ask_id": ask, "answer": {"plan": "We hold."}},
        )
        assert r.status_code == 200, r.text

        # cleared; and a deadline of round 1 is not shown in round 2
        assert _deadline(server, client, thread_id, {"minutes": 3}).status_code == 200
        other = bearer(token_of(game["links"]["crimsonia"]))
        view = client.get("/wargraph/seat", headers=other).json()
        assert view["deadline"]["phase"] == "round 1"
        r = client.post(
            "/wargraph/seat/answer",
            headers=other,
            json={"ask_id": view["questions"][0]["ask_id"], "answer": {"plan": "We wait."}},
        )
        assert r.status_code == 200, r.text
        wait_for(
            lambda: client.get("/wargraph/seat", headers=seat).json()["round"] >= 2,
            "round 2",
            timeout=60,
        )
        assert client.get("/wargraph/seat", headers=seat).json()["deadline"] is None
        r = _deadline(server, client, thread_id, {"extend": 5})
        assert r.status_code == 409 and "no deadline is set for round 2" in r.json()["detail"]
        assert _deadline(server, client, thread_id, {"minutes": 0}).json()["deadline"] is None
