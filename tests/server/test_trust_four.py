"""Trust, round four (issue 32), against real servers on loopback: Studio mode behind a host
check (DNS rebinding), a served game held by the CLI (its seat told who holds it, and back
once the CLI is done), a state edit with only `values` (422, not 500), and a person's
over-long answer through the seat API (asked again with the limit)."""

from __future__ import annotations

import contextlib
import threading

import httpx
import pytest

from tests.server.support import bearer, sdk, start_game, token_of, wait_for
from tests.stores import params, store
from wargraph.runs.runner import resume
from wargraph.seats.terminal_form import example
from wargraph.server.serve import free_port, running
from wargraph.server.studio import STUDIO_ORIGIN
from wargraph.store.lease import lease

pytestmark = [pytest.mark.server, pytest.mark.timeout(300)]

STUDIO = {"Origin": STUDIO_ORIGIN, "x-auth-scheme": "langsmith"}


# --- 1. Studio mode refuses a Host that is not its loopback name and port -------------------------


@pytest.fixture(scope="module", params=["memory", "postgres"])
def studio_server(request, tmp_path_factory):
    """Studio mode with langgraph-api's own store, and with a PostgreSQL wargraph store."""
    folder = tmp_path_factory.mktemp(f"studio-t4-{request.param}")
    with contextlib.ExitStack() as stack:
        db = None if request.param == "memory" else stack.enter_context(store("postgres", folder))
        srv = stack.enter_context(
            running(
                port=free_port(),
                state_dir=folder / "state",
                log_path=folder / "server.log",
                log_level="INFO",
                studio=True,
                db=db,
            )
        )
        yield srv


def test_studio_refuses_a_rebound_host_before_auth(studio_server):
    port = studio_server.url.rsplit(":", 1)[1]
    evil = f"evil.example:{port}"
    with httpx.Client(base_url=studio_server.url, timeout=30) as client:
        # the attack: a page of evil.example re-pointed at 127.0.0.1, Studio's auth header
        for path, method in (
            ("/threads", "POST"),
            ("/assistants/search", "POST"),
            ("/info", "GET"),
        ):
            r = client.request(
                method,
                path,
                headers={"Host": evil, "Origin": f"http://{evil}", **STUDIO},
                json={} if method == "POST" else None,
            )
            assert r.status_code == 403, (path, r.status_code, r.text)
            assert "loopback name" in r.json()["detail"], r.text
            assert "access-control-allow-origin" not in r.headers
        # even with the server's token, and even without an Origin
        r = client.post(
            "/threads/search",
            headers={"Host": evil, **bearer(studio_server.facilitator_token)},
            json={},
        )
        assert r.status_code == 403, r.text
        # another port on a loopback name (a different server, rebound) is refused too
        r = client.post("/threads/search", headers={"Host": "127.0.0.1:1", **STUDIO}, json={})
        assert r.status_code == 403, r.text
        # the loopback names with the served port are let in as before
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
            r = client.post(
                "/assistants/search", headers={"Host": host, **STUDIO}, json={"limit": 5}
            )
            assert r.status_code == 200, (host, r.text)


def test_the_rebound_page_gets_no_game_state(studio_server):
    """What the attack got: a game's whole state (every seat's brief) read back."""
    from langgraph_sdk import get_sync_client

    port = studio_server.url.rsplit(":", 1)[1]
    api = get_sync_client(url=studio_server.url, api_key=None, headers=STUDIO, timeout=60)
    thread_id = api.threads.create()["thread_id"]  # Studio itself, on 127.0.0.1, is let in
    evil = f"evil.example:{port}"
    with httpx.Client(base_url=studio_server.url, timeout=30) as client:
        r = client.get(
            f"/threads/{thread_id}/state",
            headers={"Host": evil, "Origin": f"http://{evil}", **STUDIO},
        )
    assert r.status_code == 403 and "values" not in r.text, r.text


# --- 7, 8, 5. a served game in a store the CLI also plays ------------------------------------------


@pytest.fixture(scope="module", params=params(slow={"sqlite"}))
def served(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"served-t4-{request.param}")
    with (
        store(request.param, folder) as db,
        running(
            port=free_port(),
            state_dir=folder / "state",
            log_path=folder / "server.log",
            log_level="INFO",
            db=db,
        ) as server,
    ):
        yield server, db
        assert server.process.poll() is None, server.log_tail()


def _person_game(server, seat: str = "azuristan") -> tuple[str, str]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        started = start_game(server, client, [seat], rounds=1)
    thread_id = started["thread_id"]
    link = started["links"][seat]
    return thread_id, token_of(link)


def _seat(server, token: str) -> dict:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.get("/wargraph/seat", headers=bearer(token))
    assert r.status_code == 200, r.text
    return r.json()


def _your_turn(server, token: str) -> dict:
    return wait_for(
        lambda: (v := _seat(server, token))["status"] == "your_turn" and v, "the seat's question"
    )


def test_a_state_edit_with_only_values_is_a_clear_4xx(served):
    server, _db = served
    thread_id, token = _person_game(server)
    _your_turn(server, token)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        before = client.get(
            f"/threads/{thread_id}/state", headers=bearer(server.facilitator_token)
        ).json()
        r = client.post(
            f"/threads/{thread_id}/state",
            headers=bearer(server.facilitator_token),
            json={"values": {"round": 1}},
        )
        assert r.status_code == 422, (r.status_code, r.text[:300])
        assert "as_node" in r.json()["detail"], r.text
        after = client.get(
            f"/threads/{thread_id}/state", headers=bearer(server.facilitator_token)
        ).json()
    assert after["checkpoint"] == before["checkpoint"]  # nothing written
    assert server.process.poll() is None


def test_a_game_the_cli_holds_names_its_holder_to_the_seat_and_comes_back(served):
    server, db = served
    thread_id, token = _person_game(server)
    asked = _your_turn(server, token)["questions"][0]
    answer = {"ask_id": asked["ask_id"], "answer": {"plan": "AZ: hold the pass"}}
    held, release = threading.Event(), threading.Event()

    def cli() -> None:
        with lease(db, thread_id, command="resume"):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=cli)
    holder.start()
    try:
        assert held.wait(30)
        view = _seat(server, token)
        assert view["status"] == "held", view
        assert "`resume`" in view["message"] and "pid" in view["message"], view["message"]
        with httpx.Client(base_url=server.url, timeout=60) as client:
            r = client.post("/wargraph/seat/answer", headers=bearer(token), json=answer)
        assert r.status_code == 409, r.text
        assert "`resume`" in r.json()["detail"] and "not sent" in r.json()["detail"]
    finally:
        release.set()
        holder.join(30)
    # the CLI is done: the seat is asked again, not stuck in "error"
    view = _your_turn(server, token)
    assert view["questions"][0]["ask_id"] == asked["ask_id"]
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post("/wargraph/seat/answer", headers=bearer(token), json=answer)
    assert r.status_code == 200, r.text
    wait_for(lambda: _seat(server, token)["status"] in ("over", "your_turn"), "the game going on")


def test_a_run_refused_because_the_cli_held_the_game_does_not_leave_it_in_error(served):
    """The race the pre-check cannot close: a run started just before the CLI took the game is
    refused (the run fails); once the CLI has moved the game on, its seat follows the game."""
    server, db = served
    thread_id, token = _person_game(server)
    asked = _your_turn(server, token)["questions"][0]
    client = sdk(server)
    with lease(db, thread_id, command="resume"), pytest.raises(Exception, match="in use"):
        client.runs.wait(
            thread_id,
            "crisis",
            command={"resume": {asked["key"]: {"plan": "AZ: wait"}}},
            context={"model": "scripted", "humans": ["azuristan"]},
        )
    assert client.threads.get(thread_id)["status"] == "error"  # langgraph-api's own word
    view = _seat(server, token)
    assert view["status"] == "your_turn", view  # the game itself is fine: asked again
    # the CLI plays the game on (the person answers at its terminal) and finishes it
    result = resume(
        db=db, thread_id=thread_id, human_io=lambda p: example(p["schema"]["properties"])
    )
    assert result.finished
    assert wait_for(lambda: _seat(server, token)["status"] == "over", "the game over")


def test_a_persons_over_long_answer_through_the_seat_api_is_asked_again(served):
    server, _db = served
    thread_id, token = _person_game(server)
    asked = _your_turn(server, token)["questions"][0]
    limit = asked["schema"]["properties"]["plan"]["maxLength"]
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post(
            "/wargraph/seat/answer",
            headers=bearer(token),
            json={"ask_id": asked["ask_id"], "answer": {"plan": "P" * (limit + 3800)}},
        )
    assert r.status_code == 200, r.text
    again = wait_for(
        lambda: (v := _seat(server, token))["questions"] and v["questions"][0].get("error") and v,
        "the question asked again",
    )
    question = again["questions"][0]
    assert question["ask_id"] == asked["ask_id"]
    assert f"the most is {limit:,}" in question["error"], question["error"]
    events = sdk(server).threads.get_state(thread_id)["values"]["events"]
    assert not any("P" * 100 in e["text"] for e in events)  # nothing of it recorded
