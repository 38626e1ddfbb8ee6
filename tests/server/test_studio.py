"""Studio mode (`wargraph studio`), tested without Studio itself (a hosted page, unreachable here):
one real Studio-mode server on loopback, sent what the Studio page sends (`Origin:
https://smith.langchain.com`, `x-auth-scheme: langsmith`), and the players' server refusing it."""

from __future__ import annotations

import pytest

from tests.server.support import bearer, web
from wargraph.server.seats import facilitator_token, seat_token
from wargraph.server.serve import ServeError, free_port, running, start
from wargraph.server.studio import STUDIO_ORIGIN, WARNING, studio, studio_link

pytestmark = [pytest.mark.server, pytest.mark.timeout(240)]

STUDIO = {"Origin": STUDIO_ORIGIN, "x-auth-scheme": "langsmith"}
EVIL = "http://evil.example"
RUN = {"model": "scripted", "humans": ["crimsonia"]}


@pytest.fixture(scope="module")
def studio_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wargraph-studio")
    with running(
        port=free_port(),
        state_dir=folder / "state",
        log_path=folder / "server.log",
        log_level="INFO",
        studio=True,
    ) as srv:
        yield srv
        if srv.process.poll() is not None:
            pytest.fail(f"the Studio-mode server exited during the tests:\n{srv.log_tail()}")


def studio_sdk(server, headers=STUDIO):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def game(studio_server):
    """A crisis game started as Studio starts one: scripted seats, a person in crimsonia's seat."""
    api = studio_sdk(studio_server)
    crisis = next(a for a in api.assistants.search(limit=20) if a["graph_id"] == "crisis")
    thread_id = api.threads.create()["thread_id"]
    paused = api.runs.wait(
        thread_id,
        crisis["assistant_id"],
        input={"scenario": "azuristan_crimsonia"},
        context=RUN,
    )
    return {"api": api, "assistant": crisis, "thread_id": thread_id, "paused": paused}


def test_studio_is_let_in_with_its_cors_answers(studio_server):
    with web(studio_server) as client:
        preflight = client.options(
            "/assistants/search",
            headers={
                "Origin": STUDIO_ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, x-auth-scheme",
                "Access-Control-Request-Private-Network": "true",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == STUDIO_ORIGIN
        assert preflight.headers["access-control-allow-private-network"] == "true"
        r = client.post("/assistants/search", headers=STUDIO, json={"limit": 50})
        assert r.status_code == 200, r.text
        assert r.headers["access-control-allow-origin"] == STUDIO_ORIGIN
        assert {a["graph_id"] for a in r.json()} >= {"crisis", "tabletop", "blotto"}
        assert client.get("/info", headers=STUDIO).status_code == 200  # Studio's first call


def test_each_graph_shows_the_rounds_rhythm(game):
    api, assistant = game["api"], game["assistant"]["assistant_id"]
    drawn = api.assistants.get_graph(assistant)
    edges = {(e["source"], e["target"]) for e in drawn["edges"]}
    seats = {"agent_azuristan", "agent_crimsonia", "agent_control"}
    assert seats <= {n["id"] for n in drawn["nodes"]}
    # setup -> inject -> order -> each seat -> order -> adjudicate -> control -> adjudicate ->
    # the next round's inject, or analyze -> end.
    for edge in [
        ("__start__", "setup"),
        ("setup", "inject"),
        ("inject", "order"),
        ("order", "agent_azuristan"),
        ("agent_crimsonia", "order"),
        ("order", "adjudicate"),
        ("adjudicate", "agent_control"),
        ("agent_control", "adjudicate"),
        ("adjudicate", "inject"),
        ("adjudicate", "analyze"),
        ("analyze", "__end__"),
    ]:
        assert edge in edges, edge
    # Path maps keep the drawing to the edges a phase can take (not every node to every node).
    assert ("setup", "agent_control") not in edges and len(edges) < 25
    xray = {n["id"] for n in api.assistants.get_graph(assistant, xray=True)["nodes"]}
    assert "agent_crimsonia:decide" in xray  # the seat's one step


def test_the_run_settings_form_is_the_game_context(game):
    schemas = game["api"].assistants.get_schemas(game["assistant"]["assistant_id"])
    fields = schemas["context_schema"]["properties"]
    assert {"model", "role_models", "seed", "humans", "temperature", "max_tokens"} <= set(fields)
    assert fields["humans"]["type"] == "array" and fields["seed"]["type"] == "integer"
    # Each field says what it does (the docstrings of GameContext).
    assert "people" in fields["humans"]["description"]
    assert all(f.get("description") for f in fields.values()), fields


def test_a_human_seat_stops_the_run_and_is_resumed_as_the_interrupt_panel_does(game):
    api, thread_id = game["api"], game["thread_id"]
    asked = game["paused"]["__interrupt__"]
    assert [i["value"]["seat"] for i in asked] == ["crimsonia"]
    state = api.threads.get_state(thread_id)
    assert state["next"] == ["agent_crimsonia"]
    assert {"events", "world", "round", "phase", "spec"} <= set(state["values"])
    pending = state["interrupts"][0]
    assert pending["value"]["task"] == "plan" and "plan" in pending["value"]["schema"]["properties"]
    # The interrupt panel answers with the schema's fields; the run goes on to the next question.
    api.runs.wait(
        thread_id,
        game["assistant"]["assistant_id"],
        command={"resume": {pending["id"]: {"plan": "CANARY-PLAN: open talks at the border"}}},
        context=RUN,
    )
    after = api.threads.get_state(thread_id)
    assert after["values"]["round"] == 2
    assert [i["value"]["ask_id"] for i in after["interrupts"]] == ["r2.order.plan.crimsonia"]
    texts = [e["text"] for e in after["values"]["events"]]
    assert any("CANARY-PLAN" in t for t in texts)
    assert any(e["kind"] == "narration" for e in after["values"]["events"])
    steps = [h["metadata"]["step"] for h in api.threads.get_history(thread_id, limit=100)]
    assert steps == sorted(steps, reverse=True) and len(steps) >= 10


def test_forking_a_step_edits_the_state_and_runs_again_from_there(game):
    api, thread_id = game["api"], game["thread_id"]
    history = api.threads.get_history(thread_id, limit=100)
    # The step after round 1's inject (one writer, so the edit is made as that node's).
    before = min(
        (h for h in history if h["next"] == ["order"]), key=lambda h: h["metadata"]["step"]
    )
    edit = {
        "id": "studio-edit-1",
        "round": 1,
        "phase": "inject",
        "kind": "inject",
        "author": "control",
        "audience": ["*"],
        "text": "STUDIO-EDIT: a storm closes the strait",
    }
    forked = api.threads.update_state(
        thread_id, {"events": [edit]}, checkpoint_id=before["checkpoint"]["checkpoint_id"]
    )
    api.runs.wait(
        thread_id,
        game["assistant"]["assistant_id"],
        input=None,
        checkpoint_id=forked["checkpoint_id"],
        context=RUN,
    )
    state = api.threads.get_state(thread_id)
    assert state["values"]["round"] == 1  # the branch replays round 1 from the edited step
    assert any(e["text"].startswith("STUDIO-EDIT") for e in state["values"]["events"])
    assert not any("CANARY-PLAN" in e["text"] for e in state["values"]["events"])
    # The person in the seat now sees the edit in their view.
    assert "STUDIO-EDIT" in state["interrupts"][0]["value"]["view"]
    chain = {h["checkpoint"]["checkpoint_id"] for h in api.threads.get_history(thread_id)}
    assert forked["checkpoint_id"] in chain


def test_other_origins_seat_tokens_and_players_routes_are_refused(studio_server, game):
    seat = seat_token(game["thread_id"], "crimsonia", secret=studio_server.secret)
    with web(studio_server) as client:
        for headers in (
            {**STUDIO, "Origin": EVIL},
            {"Origin": EVIL, **bearer(studio_server.facilitator_token)},
        ):
            r = client.post("/threads/search", headers=headers, json={})
            assert r.status_code == 403 and "cross-origin" in r.json()["detail"], r.text
            assert "access-control-allow-origin" not in r.headers
        preflight = client.options(
            "/threads/search",
            headers={"Origin": EVIL, "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 403
        # A seat token never reaches the LangGraph API, whatever else the request says.
        for headers in (
            {**STUDIO, **bearer(seat)},
            {**STUDIO, "x-api-key": seat},
            bearer(seat),
        ):
            r = client.get(f"/threads/{game['thread_id']}/state", headers=headers)
            assert r.status_code == 403 and "seat token" in r.json()["detail"], r.text
        # No players' pages or seat routes in this mode.
        for path in ("/play", "/facilitator", "/wargraph/seat", "/wargraph/graphs"):
            assert client.get(path, headers=STUDIO).status_code == 404, path
        # Programs need the server's token (Studio's scheme aside).
        assert client.post("/threads/search", json={}).status_code == 401
        r = client.post("/threads/search", headers=bearer(studio_server.facilitator_token), json={})
        assert r.status_code == 200
        assert (
            client.post(
                "/threads/search", headers=bearer(facilitator_token("guess")), json={}
            ).status_code
            == 401
        )


def test_the_players_server_keeps_refusing_studio(server):
    with web(server) as client:
        for path in ("/assistants/search", "/threads/search"):
            r = client.post(path, headers=STUDIO, json={})
            assert r.status_code == 403 and "cross-origin" in r.json()["detail"], r.text
            assert "access-control-allow-origin" not in r.headers
        r = client.get("/info", headers=STUDIO)
        assert r.status_code == 403
        # Studio's scheme without the origin (any local program can send it) is no way in.
        r = client.post("/threads/search", headers={"x-auth-scheme": "langsmith"}, json={})
        assert r.status_code == 401


def test_studio_mode_is_for_loopback_only(tmp_path, capsys):
    with pytest.raises(ServeError, match="loopback only"):
        start(host="0.0.0.0", port=free_port(), state_dir=tmp_path, studio=True)
    assert studio(host="192.168.1.10", port=free_port(), state_dir=tmp_path) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("error:") and "loopback only" in said and "\n" not in said
    assert not (tmp_path / "langgraph.json").exists()  # refused before anything is written


def test_the_studio_link_and_warning():
    assert (
        studio_link("http://127.0.0.1:2024")
        == "https://smith.langchain.com/studio/?baseUrl=http://127.0.0.1:2024"
    )
    assert "every seat's secrets" in WARNING


def test_studio_runs_are_checked_like_the_players_servers(game):
    from langgraph_sdk.errors import APIStatusError

    api, assistant = game["api"], game["assistant"]["assistant_id"]
    thread_id = api.threads.create()["thread_id"]
    refused = {
        "a model nobody allowed": (
            {"scenario": "azuristan_crimsonia"},
            {"model": "scripted", "role_models": {"control": "openai:x@http://127.0.0.1:9/v1"}},
            403,
        ),
        "a file named as a scenario": ({"scenario": "/etc/hostname"}, {"model": "scripted"}, 422),
    }
    for what, (run_input, context, status) in refused.items():
        with pytest.raises(APIStatusError) as err:
            api.runs.create(thread_id, assistant, input=run_input, context=context)
        assert err.value.status_code == status, what


def test_studio_streams_a_run_step_by_step(game):
    """Studio starts runs with `POST /threads/{id}/runs/stream` and draws each step as it comes."""
    api, assistant = game["api"], game["assistant"]["assistant_id"]
    thread_id = api.threads.create()["thread_id"]
    seen: list[str] = []
    interrupted = False
    # the stream ends with the run, which stops at the person's seat (reading the state at the
    # interrupt's update raced the scripted seat's step still being written beside it)
    for part in api.runs.stream(
        thread_id,
        assistant,
        input={"scenario": "azuristan_crimsonia"},
        context=RUN,
        stream_mode=["updates", "values"],
    ):
        seen.append(part.event)
        interrupted |= part.event == "updates" and "__interrupt__" in (part.data or {})
    assert interrupted and seen[0] == "metadata" and "values" in seen, seen
    assert seen.count("updates") >= 3, seen  # setup, inject, the scripted seat ... one by one
    assert api.threads.get_state(thread_id)["next"] == ["agent_crimsonia"]
