"""The seat and facilitator routes a room needs, on a real server: a power's board (map, units per
power) and its orders as choices; the family's options on the setup page and in the game; the
review of a narrative (its round; none for a person's own); the trace a served game keeps for its
view; the icon every page asks for."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from tests.server.support import (
    bearer,
    game,
    start_game,
    token_of,
    wait_for,
    waiting_for,
    web,
)

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

OPTIONS = {"diplomacy.max_year": 1901, "diplomacy.negotiation_rounds": 0}


@pytest.fixture(scope="module")
def client(server):
    with web(server) as c:
        yield c


def _diplomacy(server, client, humans, options=OPTIONS):
    body = {"scenario": "diplomacy", "humans": humans, "model": "scripted", "options": options}
    r = client.post("/wargraph/graphs", headers=bearer(server.facilitator_token), json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_the_icon_is_served_to_anyone(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 200, r.text  # was a 401 from the API's auth, logged on every page
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg")
    assert '<link rel="icon" href="/web/favicon.svg"' in client.get("/play").text


def test_the_setup_offers_the_familys_options_with_the_scenarios_values(server, client):
    f = bearer(server.facilitator_token)
    offered = {
        s["name"]: s for s in client.get("/wargraph/scenarios", headers=f).json()["scenarios"]
    }
    options = {o["key"]: o for o in offered["diplomacy"]["options"]}
    assert options["diplomacy.max_year"]["value"] == 1905
    assert options["diplomacy.max_year"]["label"] == "last year played"
    assert options["diplomacy.negotiation_rounds"]["value"] == 2
    assert offered["azuristan_crimsonia"]["options"] == []  # a family without options


@pytest.mark.parametrize(
    ("scenario", "options", "expected"),
    [
        ("diplomacy", {"diplomacy.press": "none"}, "diplomacy games take no ['diplomacy.press']"),
        ("diplomacy", {"diplomacy.max_year": 1800}, "max_year"),
        ("diplomacy", {"diplomacy.max_year": True}, "a number or a short text"),
        ("diplomacy", ["diplomacy.max_year"], "options: a mapping"),
        ("azuristan_crimsonia", {"rounds": 3}, "crisis games take no ['rounds'] (theirs: none)"),
    ],
)
def test_bad_options_get_a_clear_400(server, client, scenario, options, expected):
    body = {"scenario": scenario, "model": "scripted", "options": options}
    r = client.post("/wargraph/graphs", headers=bearer(server.facilitator_token), json=body)
    assert r.status_code == 400, r.text
    assert expected in r.json()["detail"]


def test_a_power_sees_the_board_and_orders_each_unit_from_its_legal_orders(server, client):
    started = _diplomacy(server, client, ["FRANCE"])
    thread_id = started["thread_id"]
    france = bearer(token_of(started["links"]["FRANCE"]))
    waiting_for(server, client, thread_id, {"FRANCE"})
    record = client.get(
        f"/wargraph/graphs/{thread_id}/record", headers=bearer(server.facilitator_token)
    ).json()
    assert record["scenario"]["diplomacy"]["max_year"] == 1901  # the options reached the game
    assert record["scenario"]["diplomacy"]["negotiation_rounds"] == 0
    view = client.get("/wargraph/seat", headers=france).json()
    assert view["world"], "no board for a Diplomacy seat"
    world = client.get("/wargraph/seat/world", headers=france).json()
    assert world["key"] == view["world"]
    svg, table = world["panels"][0], world["panels"][-1]
    assert svg["kind"] == "svg" and "<svg" in svg["svg"] and "S1901M" in svg["title"]
    rows = {r[0]: r for r in table["rows"]}
    assert set(rows) == {
        "AUSTRIA",
        "ENGLAND",
        "FRANCE (you)",
        "GERMANY",
        "ITALY",
        "RUSSIA",
        "TURKEY",
    }
    assert "A PAR (Paris)" in rows["FRANCE (you)"][3]
    # the orders: one field per unit, its legal orders as choices, hold preset
    (question,) = view["questions"]
    fields = question["schema"]["properties"]
    assert set(fields) == {"A MAR", "A PAR", "F BRE"}
    par = fields["A PAR"]
    values = [c["value"] for c in par["x-choices"]]
    assert values[0] == "A PAR H" and "A PAR - BUR" in values and "A PAR S A MAR - BUR" in values
    assert par["x-preset"] == "A PAR H"
    assert {"label": "Move to Burgundy (BUR)", "group": "Move", "value": "A PAR - BUR"} in par[
        "x-choices"
    ]
    # a seat's token opens its own world only
    other = client.get("/wargraph/seat/world", params={"seat": "ENGLAND"}, headers=france)
    assert other.status_code == 403
    r = client.post(
        "/wargraph/seat/answer",
        headers=france,
        json={
            "ask_id": question["ask_id"],
            "answer": {"A MAR": "A MAR - SPA", "A PAR": "A PAR - BUR", "F BRE": "F BRE - MAO"},
        },
    )
    assert r.status_code == 200, r.text

    def next_board():
        seen = client.get("/wargraph/seat", headers=france).json()
        return seen["world"] if seen["world"] != view["world"] else None

    wait_for(next_board, "the board after S1901M", timeout=60)
    world = client.get("/wargraph/seat/world", headers=france).json()
    titles = [p["title"] for p in world["panels"]]
    assert "Last phase S1901M: the orders given" in titles
    assert "A SPA (Spain)" in world["panels"][-1]["rows"][2][3]


def test_no_board_for_a_family_without_one(server, client):
    started = start_game(server, client, ["azuristan"])
    waiting_for(server, client, started["thread_id"], {"azuristan"})
    seat = bearer(token_of(started["links"]["azuristan"]))
    assert client.get("/wargraph/seat", headers=seat).json()["world"] is None
    assert client.get("/wargraph/seat/world", headers=seat).json() == {"key": None, "panels": []}


def test_a_review_names_its_round_and_a_persons_own_narrative_is_not_reviewed(server, client):
    # the scripted umpire's narrative, reviewed by a person: the question names round 1
    started = start_game(server, client, ["azuristan", "crimsonia"], review=True)
    thread_id = started["thread_id"]
    tokens = {s: bearer(token_of(link)) for s, link in started["links"].items()}
    waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})
    for seat in ("azuristan", "crimsonia"):
        client.post(
            "/wargraph/seat/answer",
            headers=tokens[seat],
            json={"ask_id": f"r1.order.plan.{seat}", "answer": {"plan": f"{seat} waits."}},
        )
    waiting_for(server, client, thread_id, {"control"})
    (review,) = client.get("/wargraph/seat", headers=tokens["control"]).json()["questions"]
    assert review["task"] == "review" and review["round"] == 1

    # a person in the control seat writes the narrative: nobody asks them to review it
    started = start_game(server, client, ["azuristan", "crimsonia", "control"], review=True)
    thread_id = started["thread_id"]
    tokens = {s: bearer(token_of(link)) for s, link in started["links"].items()}
    waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})
    for seat in ("azuristan", "crimsonia"):
        client.post(
            "/wargraph/seat/answer",
            headers=tokens[seat],
            json={"ask_id": f"r1.order.plan.{seat}", "answer": {"plan": f"{seat} waits."}},
        )
    waiting_for(server, client, thread_id, {"control"})
    (narrate,) = client.get("/wargraph/seat", headers=tokens["control"]).json()["questions"]
    assert narrate["task"] != "review"
    text = "PERSON-NARRATIVE: both sides wait."
    fields = narrate["schema"]["properties"]
    answer = {k: (text if k == "narrative" else v.get("default")) for k, v in fields.items()}
    r = client.post(
        "/wargraph/seat/answer",
        headers=tokens["control"],
        json={
            "ask_id": narrate["ask_id"],
            "answer": {k: v for k, v in answer.items() if v is not None},
        },
    )
    assert r.status_code == 200, r.text
    detail = waiting_for(server, client, thread_id, {"azuristan", "crimsonia"})  # round 2
    assert detail["round"] == 2
    told = [e for e in detail["events"] if e["kind"] == "narration" and e["round"] == 1]
    assert told and told[0]["text"].startswith("PERSON-NARRATIVE")


def test_a_served_game_keeps_its_trace_for_its_view(server, client):
    started = start_game(server, client, ["azuristan"])
    thread_id = started["thread_id"]
    waiting_for(server, client, thread_id, {"azuristan"})
    trace = Path(server.state_dir) / "traces" / f"{thread_id}.jsonl"
    lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").split("\n") if x.strip()]
    assert {entry["role"] for entry in lines} >= {"crimsonia"}, "the AI seat's prompt not kept"
    r = client.get(
        f"/wargraph/graphs/{thread_id}/view-data", headers=bearer(server.facilitator_token)
    )
    assert r.status_code == 200, r.text
    data = json.loads(gzip.decompress(base64.b64decode(r.json()["data"])))
    assert data["calls"], "the view shows no prompts"
    assert "no model calls were recorded" not in str(data.get("trace_note"))
    assert game(server, client, thread_id)["status"] == "waiting"
