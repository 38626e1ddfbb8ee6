"""Per-seat access on a real server: every cross-seat attempt is refused, and none of them changes
the game. Two people hold azuristan and crimsonia; the umpire is the scripted decider."""

from __future__ import annotations

import uuid

import pytest

from tests.server.support import bearer, game, sdk, start_game, token_of, waiting_for, web
from wargraph.server.seats import facilitator_token, seat_token

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

CANARY = "CANARY-CR-7731 crimsonia's secret plan"


@pytest.fixture(scope="module")
def table(server):
    """A started game waiting for both people, and a second game (for cross-game attempts)."""
    client = web(server)
    started = start_game(server, client, ["azuristan", "crimsonia"])
    other = start_game(server, client, ["azuristan", "crimsonia"])
    thread_id = started["thread_id"]
    waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})
    waiting_for(server, client, other["thread_id"], {"azuristan", "crimsonia"})
    tokens = {seat: token_of(link) for seat, link in started["links"].items()}
    yield {
        "client": client,
        "thread_id": thread_id,
        "other": other["thread_id"],
        "tokens": tokens,
        "links": started["links"],
    }
    client.close()


def _open_questions(server, client, thread_id) -> dict[str, str]:
    pending = sdk(server).threads.get_state(thread_id)["interrupts"]
    return {i["value"]["seat"]: i["id"] for i in pending}


def test_links_only_for_people_and_each_opens_its_own_seat(server, table):
    assert set(table["links"]) == {"azuristan", "crimsonia"}  # no link for the AI umpire
    client = table["client"]
    for seat, token in table["tokens"].items():
        r = client.get("/wargraph/seat", headers=bearer(token))
        assert r.status_code == 200, r.text
        view = r.json()
        assert view["seat"] == seat and view["status"] == "your_turn"
        assert [q["ask_id"] for q in view["questions"]] == [f"r1.order.plan.{seat}"]


def test_a_seat_sees_exactly_the_events_whose_audience_includes_it(server, table):
    client, thread_id = table["client"], table["thread_id"]
    everything = game(server, client, thread_id)["events"]
    for seat, token in table["tokens"].items():
        view = client.get("/wargraph/seat", headers=bearer(token)).json()
        expected = [e["id"] for e in everything if "*" in e["audience"] or seat in e["audience"]]
        assert [e["id"] for e in view["events"]] == expected
        other = next(s for s in table["tokens"] if s != seat)
        assert not any(f"You are {other}." in e["text"] for e in view["events"])


def test_a_player_token_is_refused_by_the_whole_langgraph_api(server, table):
    from langgraph_sdk.errors import PermissionDeniedError

    thread_id = table["thread_id"]
    crimsonia_open = _open_questions(server, table["client"], thread_id)["crimsonia"]
    player = sdk(server, table["tokens"]["azuristan"])
    attempts = {
        "list threads": lambda: player.threads.search(),
        "read the thread": lambda: player.threads.get(thread_id),
        "read its state": lambda: player.threads.get_state(thread_id),
        "read its history": lambda: player.threads.get_history(thread_id),
        "write its state": lambda: player.threads.update_state(thread_id, {"done": True}),
        "list its runs": lambda: player.runs.list(thread_id),
        "resume another seat": lambda: player.runs.create(
            thread_id,
            "crisis",
            command={"resume": {crimsonia_open: {"plan": "forged by azuristan"}}},
        ),
        "start a game": lambda: player.threads.create(),
        "list assistants": lambda: player.assistants.search(),
        "read the store": lambda: player.store.search_items(("wargraph",)),
    }
    for what, attempt in attempts.items():
        with pytest.raises(PermissionDeniedError):
            attempt()
            pytest.fail(f"a player could {what}")


def test_missing_forged_and_studio_bypass_tokens_get_401(server, table):
    from langgraph_sdk.errors import AuthenticationError

    client, thread_id = table["client"], table["thread_id"]
    az = table["tokens"]["azuristan"]
    _, body, mac = az.split(".")
    crimsonia_body = seat_token(thread_id, "crimsonia").split(".")[1]
    forged = {
        "no token": None,
        "garbage": "not-a-token",
        "seat swapped under azuristan's signature": f"s.{crimsonia_body}.{mac}",
        "signed with another secret": seat_token(thread_id, "crimsonia", secret="guess"),
        "facilitator guessed": facilitator_token("guess"),
    }
    for what, token in forged.items():
        headers = bearer(token) if token else {}
        r = client.get("/wargraph/seat", headers=headers)
        assert r.status_code == 401, f"{what}: {r.status_code} {r.text}"
        r = client.post("/threads/search", headers=headers, json={})
        assert r.status_code == 401, f"{what} on the API: {r.status_code}"
    # Studio's "langsmith" scheme would let anyone in under `langgraph dev`; it is switched off.
    r = client.post("/threads/search", headers={"x-auth-scheme": "langsmith"}, json={})
    assert r.status_code == 401
    r = client.get(f"/threads/{thread_id}/state", headers={"x-auth-scheme": "langsmith"})
    assert r.status_code == 401
    # The SDK's x-api-key header carries tokens too: a seat token is still refused there.
    r = client.post("/threads/search", headers={"x-api-key": az}, json={})
    assert r.status_code == 403
    with pytest.raises(AuthenticationError):
        sdk(server, "").threads.search()


def test_cross_seat_attempts_on_the_players_routes_are_refused(server, table):
    client, thread_id = table["client"], table["thread_id"]
    az = bearer(table["tokens"]["azuristan"])
    other_game = table["other"]
    refused = [
        client.get("/wargraph/seat", headers=az, params={"seat": "crimsonia"}),
        client.get("/wargraph/seat", headers=az, params={"seat": "control"}),
        client.get("/wargraph/seat", headers=az, params={"thread_id": other_game}),
        client.post(
            "/wargraph/seat/answer",
            headers=az,
            json={"ask_id": "r1.order.plan.crimsonia", "answer": {"plan": "forged"}},
        ),
        client.post(
            "/wargraph/seat/answer",
            headers=az,
            json={"seat": "crimsonia", "ask_id": "r1.order.plan.crimsonia", "answer": "forged"},
        ),
        client.post(
            "/wargraph/seat/answer",
            headers=az,
            json={"thread_id": other_game, "ask_id": "r1.order.plan.azuristan", "answer": "x"},
        ),
        client.get("/wargraph/graphs", headers=az),
        client.get(f"/wargraph/graphs/{thread_id}", headers=az),
        client.get(f"/wargraph/graphs/{thread_id}/record", headers=az),
        client.get("/wargraph/scenarios", headers=az),
        client.post("/wargraph/graphs", headers=az, json={"scenario": "azuristan_crimsonia"}),
    ]
    for r in refused:
        assert r.status_code == 403, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"


def test_refused_attempts_changed_nothing_then_the_owner_answers(server, table):
    client, thread_id = table["client"], table["thread_id"]
    before = _open_questions(server, client, thread_id)
    # Nobody's question was answered by the attempts.
    assert set(before) == {"azuristan", "crimsonia"}
    events = game(server, client, thread_id)["events"]
    assert not any(e["kind"] == "plan" for e in events)

    cr = bearer(table["tokens"]["crimsonia"])
    r = client.post(
        "/wargraph/seat/answer",
        headers=cr,
        json={"ask_id": "r1.order.plan.crimsonia", "answer": {"plan": CANARY}},
    )
    assert r.status_code == 200, r.text
    az = bearer(table["tokens"]["azuristan"])
    r = client.post(
        "/wargraph/seat/answer",
        headers=az,
        json={"ask_id": "r1.order.plan.azuristan", "answer": {"plan": "Open talks."}},
    )
    assert r.status_code == 200, r.text
    waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})  # round 2 questions
    transcript = game(server, client, thread_id)["events"]
    assert any(e["text"] == CANARY for e in transcript), "the facilitator sees every plan"
    view_az = client.get("/wargraph/seat", headers=az).json()
    assert view_az["round"] == 2
    assert not any(CANARY in e["text"] for e in view_az["events"]), "azuristan saw crimsonia's plan"
    assert any(e["kind"] == "narration" for e in view_az["events"])
    view_cr = client.get("/wargraph/seat", headers=cr).json()
    assert any(e["text"] == CANARY for e in view_cr["events"])


def test_a_token_for_a_game_that_does_not_exist(server, table):
    client = table["client"]
    ghost = str(uuid.uuid4())
    r = client.get("/wargraph/seat", headers=bearer(seat_token(ghost, "azuristan", server.secret)))
    assert r.status_code == 404
    r = client.get("/wargraph/seat", headers=bearer(seat_token("not-a-uuid", "x", server.secret)))
    assert r.status_code == 404
