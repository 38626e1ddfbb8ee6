"""`wargraph serve --db STORE`: a real `langgraph dev` on loopback keeps its games in a wargraph
store (PostgreSQL in a fresh schema; a SQLite file), where the CLI lists, views and reads them;
one writer per game between the server and the CLI (each run holds the game's lease)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from typer.testing import CliRunner

import wargraph.store.errors as stores
from benchmarks.fake_endpoint import FakeEndpoint
from tests.server.support import bearer, sdk, wait_for
from tests.stores import params, store
from tests.unit.test_view import payload_of
from wargraph.cli import app
from wargraph.runs.runner import list_runs, load_run, resume
from wargraph.server.serve import ServeError, free_port, running, start
from wargraph.store.lease import GameHeld, holders, lease
from wargraph.view import stored_record

pytestmark = [pytest.mark.server, pytest.mark.timeout(300)]

SLOW_CALL_S = 3.0  # the fake endpoint's answer time: a run stays in flight that long per call
SHORT = {"rounds": 1, "questions": []}  # two plans at once, then the umpire's narrative


@pytest.fixture(scope="module", params=params(slow={"sqlite"}))
def served(request, tmp_path_factory):
    """(server, store, endpoint model) for a server keeping its games in a fresh store."""
    folder = tmp_path_factory.mktemp(f"served-{request.param}")
    with (
        store(request.param, folder) as db,
        FakeEndpoint(SLOW_CALL_S, log_dir=folder) as endpoint,
        running(
            port=free_port(),
            state_dir=folder / "state",
            log_path=folder / "server.log",
            log_level="INFO",
            allow_models=[f"openai:*@{endpoint.url}"],
            db=db,
            env={"WARGRAPH_ENDPOINT_CONCURRENCY": "32"},  # the server's threads bound, not this
        ) as server,
    ):
        yield server, db, endpoint
        assert server.process.poll() is None, server.log_tail()


def _listed(db: str, thread_id: str) -> str:
    r = CliRunner().invoke(app, ["games", "--db", db], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if f"│ {thread_id} " in line]
    assert len(lines) == 1, r.output
    return lines[0]


def _context(seat: str) -> dict:
    return {"model": "scripted", "humans": [seat], "seed": 5}


def _waiting_game(client, seat: str) -> tuple[str, dict]:
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(
        thread_id,
        "crisis",
        input={"scenario": "azuristan_crimsonia", "overrides": {"rounds": 1}},
        context=_context(seat),
    )
    assert "__interrupt__" in out, out
    (asked,) = client.threads.get_state(thread_id)["interrupts"]
    assert asked["value"]["seat"] == seat
    return thread_id, asked


def test_a_served_game_with_a_person_is_in_the_store_the_cli_reads(served, tmp_path):
    server, db, _ = served
    client = sdk(server)
    thread_id, asked = _waiting_game(client, "azuristan")
    assert "waiting" in _listed(db, thread_id)  # listed while it waits for the person

    plan = "AZ: open the border crossing to observers"
    answer = {"resume": {asked["id"]: {"plan": plan}}}
    client.runs.wait(thread_id, "crisis", command=answer, context=_context("azuristan"))
    values = client.threads.get_state(thread_id)["values"]
    assert values["done"] and not values.get("error")

    line = _listed(db, thread_id)
    assert "crisis" in line and "Zafaristan" in line and "serve" in line and "done" in line

    record, _, _ = stored_record(db, thread_id)  # what `wargraph view --thread` draws
    with httpx.Client(base_url=server.url, timeout=60) as web:
        r = web.get(
            f"/wargraph/graphs/{thread_id}/record", headers=bearer(server.facilitator_token)
        )
    assert r.status_code == 200, r.text
    assert record["events"] == r.json()["events"]
    assert any(e["kind"] == "plan" and plan in e["text"] for e in record["events"])

    page = tmp_path / "view.html"
    r = CliRunner().invoke(app, ["view", "--thread", thread_id, "--db", db, "--out", str(page)])
    assert r.exit_code == 0, r.output
    drawn = payload_of(page)
    assert drawn["thread"] == thread_id and plan in "\n".join(drawn["L"])


def test_a_game_the_cli_holds_is_refused_by_the_server_until_it_is_free(served):
    server, db, _ = served
    client = sdk(server)
    thread_id, asked = _waiting_game(client, "crimsonia")
    answer = {"resume": {asked["id"]: {"plan": "CR: hold"}}}
    with (
        lease(db, thread_id, command="resume"),
        pytest.raises(Exception, match="in use by `resume`"),
    ):
        client.runs.wait(thread_id, "crisis", command=answer, context=_context("crimsonia"))
    # nothing was written: the same question is still open, and now the run goes through
    (still,) = client.threads.get_state(thread_id)["interrupts"]
    assert still["id"] == asked["id"]
    client.runs.wait(thread_id, "crisis", command=answer, context=_context("crimsonia"))
    assert client.threads.get_state(thread_id)["values"]["done"]


def test_a_game_the_server_is_playing_is_refused_to_the_cli(served):
    server, db, endpoint = served
    client = sdk(server)
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(
        thread_id,
        "crisis",
        input={"scenario": "azuristan_crimsonia", "overrides": SHORT},
        context={"model": endpoint.model(), "seed": 2},
    )
    wait_for(lambda: thread_id in holders(db), "the server to take the game's lease")
    # a game from its first step on (setup: the scenario is loaded), then waiting on the model
    wait_for(lambda: thread_id in list_runs(db), "the game's first step", timeout=60)
    with pytest.raises(GameHeld, match="is in use by `serve`"):
        resume(db=db, thread_id=thread_id)
    assert "playing" in _listed(db, thread_id)
    client.runs.join(thread_id, run["run_id"])
    state = client.threads.get_state(thread_id)["values"]
    assert state["done"] and not state.get("error"), state.get("error")
    assert thread_id not in holders(db)  # given back when the run ended
    assert resume(db=db, thread_id=thread_id).finished  # and the CLI may take it now


EDIT = {"round": 1}  # a state edit of a waiting game: as if the person's seat had answered


def _edit(client, thread_id: str) -> dict:
    return client.threads.update_state(thread_id, EDIT, as_node="agent_azuristan")


def test_a_state_edit_through_the_api_is_refused_while_the_cli_holds_the_game(served):
    """`threads.update_state` outside a run writes the game's checkpoints like a run: it takes
    the game's lease, and is refused (409, naming the holder) while a CLI command holds it."""
    server, db, _ = served
    client = sdk(server)
    thread_id, _ = _waiting_game(client, "azuristan")
    before = client.threads.get_state(thread_id)
    with lease(db, thread_id, command="resume"), pytest.raises(Exception) as refused:
        _edit(client, thread_id)
    response = refused.value.response  # the SDK's error for the HTTP answer
    assert response.status_code == 409, response.text
    assert "is in use by `resume`" in response.json()["detail"]
    after = client.threads.get_state(thread_id)  # nothing was written
    assert after["checkpoint"] == before["checkpoint"] and after["next"] == ["agent_azuristan"]

    edited = _edit(client, thread_id)  # the game is free: the edit goes through
    state = client.threads.get_state(thread_id)
    assert state["checkpoint"]["checkpoint_id"] == edited["checkpoint_id"]
    assert state["next"] == ["order"]
    assert thread_id not in holders(db)  # and the lease was given back


@contextlib.contextmanager
def _writes_wait(db: str) -> Iterator[None]:
    """Hold the store's write lock (SQLite) or the checkpoint tables (PostgreSQL) for the block:
    a write of the server waits until the block ends."""
    if stores.is_url(db):
        import psycopg

        with psycopg.connect(db) as conn, conn.transaction():
            conn.execute(
                "LOCK TABLE checkpoints, checkpoint_blobs, checkpoint_writes IN EXCLUSIVE MODE"
            )
            yield
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def test_the_cli_is_refused_a_game_while_a_state_edit_through_the_api_writes_it(served):
    """The reverse: while an edit is being written the server holds the game; a CLI `resume`
    is refused and changes nothing, and the edit is written whole once it may write."""
    server, db, _ = served
    client = sdk(server)
    thread_id, _ = _waiting_game(client, "azuristan")
    with ThreadPoolExecutor(1) as pool:
        with _writes_wait(db):
            editing = pool.submit(_edit, client, thread_id)
            wait_for(lambda: thread_id in holders(db), "the edit to take the game's lease")
            # SQLite: the lease is taken and its holder's name waits for the write lock too
            named = "`serve`" if stores.is_url(db) else ""
            with pytest.raises(GameHeld, match=f"is in use by {named}"):
                resume(db=db, thread_id=thread_id)
        edited = editing.result(timeout=120)
    state = client.threads.get_state(thread_id)
    assert state["checkpoint"]["checkpoint_id"] == edited["checkpoint_id"]
    assert state["next"] == ["order"]
    assert thread_id not in holders(db)


def test_deleting_a_run_through_the_api_gives_back_the_game_as_it_was(served):
    """langgraph-api deletes a run's checkpoints through the store (`adelete_for_runs`, also
    what a rollback does): the game is as it was before the run, its person's question open
    again, for the CLI too, and it goes on from there. A run that a later one continued from is
    refused (409), nothing deleted."""
    server, db, _ = served
    client = sdk(server)
    thread_id, asked = _waiting_game(client, "crimsonia")
    waiting = client.threads.get_state(thread_id)
    (first,) = client.runs.list(thread_id)
    answer = {"resume": {asked["id"]: {"plan": "CR: hold"}}}
    client.runs.wait(thread_id, "crisis", command=answer, context=_context("crimsonia"))
    done = client.threads.get_state(thread_id)
    assert done["values"]["done"]
    (answered,) = [r for r in client.runs.list(thread_id) if r["run_id"] != first["run_id"]]

    with pytest.raises(Exception) as refused:
        client.runs.delete(thread_id, first["run_id"])
    response = refused.value.response
    assert response.status_code == 409, response.text
    assert f"checkpoints of {answered['run_id']} continue from what" in response.json()["detail"]
    assert client.threads.get_state(thread_id)["checkpoint"] == done["checkpoint"]

    client.runs.delete(thread_id, answered["run_id"])
    back = client.threads.get_state(thread_id)
    assert back["checkpoint"] == waiting["checkpoint"] and back["values"] == waiting["values"]
    assert [i["id"] for i in back["interrupts"]] == [asked["id"]]
    assert "waiting" in _listed(db, thread_id)
    client.runs.wait(thread_id, "crisis", command=answer, context=_context("crimsonia"))
    # the same game again; the seats' checkpoints are new ones (their ids are times)
    again = client.threads.get_state(thread_id)["values"]
    assert set(again.pop("seat_checkpoints")) == set(done["values"].pop("seat_checkpoints"))
    assert again == done["values"]
    log = server.log_path.read_text(encoding="utf-8", errors="replace")
    assert "Using custom checkpointer" in log  # (where langgraph-api says what it lacks)
    for method in ("adelete_thread", "adelete_for_runs", "aprune"):
        assert f"Custom checkpointer missing {method}" not in log


def test_deleting_a_thread_the_cli_holds_is_refused_and_changes_nothing(served):
    server, db, _ = served
    client = sdk(server)
    thread_id, _ = _waiting_game(client, "azuristan")
    before = client.threads.get_state(thread_id)
    with lease(db, thread_id, command="resume"), pytest.raises(Exception) as refused:
        client.threads.delete(thread_id)
    response = refused.value.response
    assert response.status_code == 409, response.text
    assert "is in use by `resume`" in response.json()["detail"]
    assert client.threads.get_state(thread_id)["checkpoint"] == before["checkpoint"]
    assert thread_id in list_runs(db)
    client.threads.delete(thread_id)  # free: the game is deleted from the store
    assert thread_id not in list_runs(db)


def test_a_store_that_cannot_be_used_stops_serve_before_it_starts(tmp_path):
    folder = tmp_path / "not-a-store.sqlite"
    folder.mkdir()
    with pytest.raises(ServeError, match="--db: .*is a folder"):
        start(port=free_port(), state_dir=tmp_path / "state", db=str(folder))
    assert not (tmp_path / "state").exists()  # refused before anything was set up
    unreachable = "postgresql://postgres@127.0.0.1:1/test"
    r = CliRunner().invoke(
        app,
        [
            "serve",
            "--port",
            str(free_port()),
            "--state-dir",
            str(tmp_path / "s"),
            "--db",
            unreachable,
        ],
        env={"COLUMNS": "300"},
    )
    assert r.exit_code == 2, r.output
    assert "error: --db: postgresql://postgres@127.0.0.1:1/test: cannot reach" in r.output
    assert "Traceback" not in r.output


def test_the_served_runs_steps_are_not_held_to_the_loops_six_default_threads(served):
    """Four runs at once (the server's jobs), two seats each planning at once on the endpoint:
    eight calls in flight, where the event loop's default executor (six threads on two cores)
    would hold them to six."""
    server, _, endpoint = served
    client = sdk(server)
    endpoint.stats()  # resets the endpoint's peak
    runs = []
    for seed in range(4):
        thread_id = client.threads.create()["thread_id"]
        context = {"model": endpoint.model(), "seed": seed}
        input_ = {"scenario": "azuristan_crimsonia", "overrides": SHORT}
        runs.append(
            (thread_id, client.runs.create(thread_id, "crisis", input=input_, context=context))
        )
    for thread_id, run in runs:
        client.runs.join(thread_id, run["run_id"])
        assert client.threads.get_state(thread_id)["values"]["done"]
    assert endpoint.stats()["peak_in_flight"] == 8


def test_a_thread_copied_through_the_api_is_a_game_of_its_own(served, tmp_path):
    """`threads.copy` (POST /threads/<id>/copy, the store's `acopy_thread`): the copy is a game
    of its own in the store, with its source's scenario and settings, listed, drawn and resumed
    by the CLI; each plays on to its own end apart from the other, and deleting the source's
    runs leaves the copy whole. A copy of a game another process holds is refused (409)."""
    server, db, _ = served
    client = sdk(server)
    thread_id, asked = _waiting_game(client, "azuristan")
    before = client.threads.get_state(thread_id)

    copy_id = client.threads.copy(thread_id)["thread_id"]
    assert copy_id != thread_id
    copied = client.threads.get_state(copy_id)
    assert copied["values"] == before["values"] and copied["next"] == before["next"]
    assert [i["id"] for i in copied["interrupts"]] == [asked["id"]]
    assert load_run(db, copy_id) == load_run(db, thread_id)  # scenario and settings
    line = _listed(db, copy_id)
    assert "waiting" in line and "crisis" in line and "serve" in line, line
    page = tmp_path / "copy.html"
    r = CliRunner().invoke(app, ["view", "--thread", copy_id, "--db", db, "--out", str(page)])
    assert r.exit_code == 0, r.output
    assert payload_of(page)["thread"] == copy_id

    # the source goes on through the API, the copy through the CLI, each to its own end
    plan = "AZ: the source opens the border"
    answer = {"resume": {asked["id"]: {"plan": plan}}}
    client.runs.wait(thread_id, "crisis", command=answer, context=_context("azuristan"))
    done = client.threads.get_state(thread_id)["values"]
    assert done["done"] and not done.get("error")
    assert client.threads.get_state(copy_id)["checkpoint"] == copied["checkpoint"]
    own = resume(db=db, thread_id=copy_id, human_io=lambda q: {"plan": "AZ: the copy holds"})
    assert own.finished and not own.values.get("error")
    plans = [e["text"] for e in own.values["events"] if e["kind"] == "plan"]
    assert any("the copy holds" in p for p in plans) and not any(plan in p for p in plans)
    assert "done" in _listed(db, thread_id) and "done" in _listed(db, copy_id)

    # deleting the source's runs (its checkpoints, then the game) leaves the copy as it was
    for run in client.runs.list(thread_id):  # latest first
        client.runs.delete(thread_id, run["run_id"])
    assert thread_id not in list_runs(db)
    assert stored_record(db, copy_id)[0]["events"] == own.values["events"]

    copy_id = client.threads.copy(copy_id)["thread_id"]  # a game the CLI played, copied
    with lease(db, copy_id, command="resume"), pytest.raises(Exception) as refused:
        client.threads.copy(copy_id)
    response = refused.value.response
    assert response.status_code == 409, response.text
    assert "is in use by `resume`" in response.json()["detail"]
    assert "nothing was copied" in response.json()["detail"]
    log = server.log_path.read_text(encoding="utf-8", errors="replace")
    assert "Custom checkpointer missing acopy_thread" not in log
