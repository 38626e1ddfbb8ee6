"""A served game's settings belong to the game (issue 40, item 6): a person's answer resumed
through the SDK without `context` plays on the settings the game was started with (not the
embedded model's defaults), and a run sent with other settings plays with them and the change
is recorded with the game. A real `langgraph dev` on loopback, scripted seats."""

from __future__ import annotations

import pytest

from tests.server.support import sdk

pytestmark = [pytest.mark.server, pytest.mark.timeout(240)]

HUMANS = ["azuristan", "crimsonia"]
CTX = {"model": "scripted", "humans": HUMANS, "seed": 7}


def _pending(client, thread_id: str) -> dict[str, dict]:
    state = client.threads.get_state(thread_id)
    return {i["value"]["seat"]: i for i in state["interrupts"]}


def _resume(client, thread_id: str, **context):
    """Answer every open question in one run (not waited for); the run as the server keeps it."""
    pending = _pending(client, thread_id)
    answers = {i["id"]: {"plan": f"{seat} holds"} for seat, i in pending.items()}
    run = client.runs.create(thread_id, "crisis", command={"resume": answers}, **context)
    return client.runs.get(thread_id, run["run_id"])


def test_a_resume_without_settings_plays_on_the_games_own(server):
    client = sdk(server)
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "crisis", input={"scenario": "azuristan_crimsonia"}, context=CTX)
    run = _resume(client, thread_id)  # as a script of the SDK would: no context
    try:
        assert run["kwargs"]["context"] == CTX
    finally:
        client.runs.join(thread_id, run["run_id"])
    assert client.threads.get_state(thread_id)["values"]["round"] == 2

    changed = {**CTX, "seed": 8}
    run = _resume(client, thread_id, context=changed)  # chosen: played so, and recorded
    client.runs.join(thread_id, run["run_id"])
    assert run["kwargs"]["context"] == changed
    kept = client.threads.get(thread_id)["metadata"]["wargraph_settings"]
    assert kept["context"] == changed
    assert [(c["from"], c["to"]) for c in kept["changes"]] == [(CTX, changed)]
    run = _resume(client, thread_id)  # the change holds for the runs after it
    client.runs.join(thread_id, run["run_id"])
    assert run["kwargs"]["context"] == changed
