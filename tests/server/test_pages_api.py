"""The pages' routes on a real server: bad input gets clear errors, invalid answers come back with
the error and the seat stays open, and a human umpire reviews the (scripted) control's narrative."""

from __future__ import annotations

import uuid

import pytest

from tests.server.support import bearer, game, start_game, token_of, wait_for, waiting_for, web

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def client(server):
    with web(server) as c:
        yield c


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"scenario": "no_such_scenario"}, "no shipped or registered scenario"),
        ({"scenario": "../../etc/passwd.yaml"}, "no shipped or registered scenario"),
        ({"scenario": 42}, "scenario:"),
        ({"scenario": "azuristan_crimsonia", "humans": ["nobody"]}, "no seat ['nobody']"),
        ({"scenario": "azuristan_crimsonia", "humans": "azuristan"}, "humans:"),
        ({"scenario": "azuristan_crimsonia", "model": "nonsense:xyz"}, "expected embedded"),
        ({"scenario": "azuristan_crimsonia", "seed": "seven"}, "seed:"),
        ({"scenario": "azuristan_crimsonia", "rounds": 0}, "rounds:"),
        ({"scenario": "azuristan_crimsonia", "temperature": 9}, "temperature:"),
        ({"scenario": "azuristan_crimsonia", "role_models": {"ghost": "scripted"}}, "role_models"),
        ({"scenario": "azuristan_crimsonia", "overrides": {"rounds": "many"}}, "rounds"),
        ({"scenario": {"title": "no setting"}}, "setting"),
    ],
)
def test_bad_game_requests_get_a_clear_400(server, client, body, expected):
    r = client.post("/wargraph/graphs", headers=bearer(server.facilitator_token), json=body)
    assert r.status_code == 400, r.text
    assert expected in r.json()["detail"]


def test_malformed_requests(server, client):
    f = bearer(server.facilitator_token)
    r = client.post(
        "/wargraph/graphs", headers={**f, "content-type": "application/json"}, content=b"{nope"
    )
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    r = client.post("/wargraph/graphs", headers=f, json=["a", "list"])
    assert r.status_code == 400 and "JSON object" in r.json()["detail"]
    r = client.post("/wargraph/graphs", headers=f, content=b"x" * 70_000)
    assert r.status_code == 413
    assert client.get("/wargraph/graphs/not-a-uuid", headers=f).status_code == 404
    assert client.get(f"/wargraph/graphs/{uuid.uuid4()}", headers=f).status_code == 404


def test_invalid_answers_come_back_with_the_error_and_the_seat_stays_open(server, client):
    started = start_game(server, client, ["azuristan"])
    thread_id = started["thread_id"]
    waiting_for(server, client, thread_id, {"azuristan"})
    az = bearer(token_of(started["links"]["azuristan"]))
    ask = "r1.order.plan.azuristan"
    for bad_body, status in [
        ({"ask_id": ask, "answer": ["a", "list"]}, 400),
        ({"answer": {"plan": "x"}}, 400),
        ({"ask_id": "r9.order.plan.azuristan", "answer": {"plan": "x"}}, 409),
    ]:
        r = client.post("/wargraph/seat/answer", headers=az, json=bad_body)
        assert r.status_code == status, r.text
    r = client.post(
        "/wargraph/seat/answer", headers=az, json={"ask_id": ask, "answer": {"plan": ""}}
    )
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["status"] == "your_turn"
    assert [q["ask_id"] for q in view["questions"]] == [ask]
    assert "plan" in view["questions"][0]["error"]
    # A plain-text answer to a one-field question is accepted as that field.
    r = client.post(
        "/wargraph/seat/answer", headers=az, json={"ask_id": ask, "answer": "Hold the border."}
    )
    assert r.status_code == 200
    waiting_for(server, client, thread_id, {"azuristan"})  # round 2
    events = game(server, client, thread_id)["events"]
    plan = next(e for e in events if e["kind"] == "plan" and e["author"] == "azuristan")
    assert plan["text"] == "Hold the border."


def test_a_human_umpire_reviews_the_scripted_controls_narrative(server, client):
    started = start_game(server, client, ["azuristan", "crimsonia"], review=True)
    thread_id = started["thread_id"]
    assert set(started["links"]) == {"azuristan", "crimsonia", "control"}
    tokens = {s: bearer(token_of(link)) for s, link in started["links"].items()}
    waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})
    for seat in ("azuristan", "crimsonia"):
        r = client.post(
            "/wargraph/seat/answer",
            headers=tokens[seat],
            json={"ask_id": f"r1.order.plan.{seat}", "answer": {"plan": f"{seat} waits."}},
        )
        assert r.status_code == 200, r.text
    waiting_for(server, client, thread_id, {"control"})
    view = client.get("/wargraph/seat", headers=tokens["control"]).json()
    (question,) = view["questions"]
    assert question["task"] == "review"
    assert question["ask_id"] == "r1.adjudicate.adjudicate.control.review"
    assert question["draft"]["narrative"]
    assert set(question["schema"]["properties"]) == {"accept", "text"}
    # Only the umpire's token answers the review.
    r = client.post(
        "/wargraph/seat/answer",
        headers=tokens["azuristan"],
        json={"ask_id": question["ask_id"], "answer": {"accept": True}},
    )
    assert r.status_code == 403
    r = client.post(
        "/wargraph/seat/answer",
        headers=tokens["control"],
        json={"ask_id": question["ask_id"], "answer": {"accept": "perhaps"}},
    )
    assert r.json()["questions"][0]["error"], "an invalid review was not sent back"
    edited = "EDITED-BY-UMPIRE: both sides wait; the crowds disperse."
    r = client.post(
        "/wargraph/seat/answer",
        headers=tokens["control"],
        json={"ask_id": question["ask_id"], "answer": {"accept": False, "text": edited}},
    )
    assert r.status_code == 200, r.text

    def narrated():
        events = game(server, client, thread_id)["events"]
        return next((e for e in events if e["kind"] == "narration" and e["round"] == 1), None)

    narration = wait_for(narrated, "the reviewed narration")
    assert narration["text"] == edited
    record = client.get(
        f"/wargraph/graphs/{thread_id}/record", headers=bearer(server.facilitator_token)
    ).json()
    recorded = next(e for e in record["events"] if e["id"] == narration["id"])
    assert recorded["data"]["source"] == "reviewed"


def test_pages_are_served_with_a_strict_content_policy(server, client):
    for path, kind in [("/play", "text/html"), ("/facilitator", "text/html")]:
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert '<script src="/web/common.js"></script>' in r.text
    r = client.get("/web/common.js")
    assert r.status_code == 200 and "javascript" in r.headers["content-type"]
    assert "innerHTML" not in r.text  # game text is inserted as text, never as markup
    assert client.get("/web/style.css").status_code == 200
    assert client.get("/web/play.html").status_code == 404
    sneaky = client.get("/web/..%2Fserver%2Fapp.py")  # not a page route: the API refuses it
    assert sneaky.status_code in (401, 404) and "import" not in sneaky.text
    assert client.get("/web/nothing.js").status_code == 404


def test_facilitator_lists_games_and_scenarios(server, client):
    f = bearer(server.facilitator_token)
    scenarios = {
        s["name"]: s for s in client.get("/wargraph/scenarios", headers=f).json()["scenarios"]
    }
    ac = scenarios["azuristan_crimsonia"]
    assert ac["served"] and [s["seat"] for s in ac["seats"]] == [
        "azuristan",
        "crimsonia",
        "control",
    ]
    started = start_game(server, client, ["crimsonia"])
    games = client.get("/wargraph/graphs", headers=f).json()["games"]
    assert started["thread_id"] in {g["thread_id"] for g in games}
    detail = waiting_for(server, client, started["thread_id"], {"crimsonia"})
    seats = {s["seat"]: s for s in detail["seats"]}
    assert seats["crimsonia"]["human"] and seats["crimsonia"]["link"]
    assert not seats["azuristan"]["human"] and seats["azuristan"]["link"] is None
