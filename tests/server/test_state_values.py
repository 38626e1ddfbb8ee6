"""A state edit whose values do not fit the game is a clear 4xx, not a 500 (issue 40, item 13):
`POST /threads/ID/state` with `{"values": {"events": "notalist"}}` (or events without ids) is
refused naming the field, and nothing is written. A real `langgraph dev` on loopback."""

from __future__ import annotations

import httpx
import pytest

from tests.server.support import bearer, sdk

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

CTX = {"model": "scripted", "humans": ["azuristan", "crimsonia"], "seed": 7}


def _edit(server, body: dict):
    """A played game's state edited through the API: (state before, the answer, state after)."""
    client = sdk(server)
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "crisis", input={"scenario": "azuristan_crimsonia"}, context=CTX)
    f = bearer(server.facilitator_token)
    with httpx.Client(base_url=server.url, timeout=60) as web:
        before = web.get(f"/threads/{thread_id}/state", headers=f).json()
        r = web.post(f"/threads/{thread_id}/state", headers=f, json=body)
        after = web.get(f"/threads/{thread_id}/state", headers=f).json()
    return before, r, after


@pytest.mark.parametrize("events", ["notalist", [{"text": "no id"}], [3]])
def test_events_that_are_not_events_are_refused(server, events):
    before, r, after = _edit(server, {"values": {"events": events}, "as_node": "setup"})
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert "events" in r.text
    assert after["checkpoint"] == before["checkpoint"]  # nothing written
    assert server.process.poll() is None


@pytest.mark.parametrize("checkpoint", ["not-a-checkpoint", "1f0c0000-0000-6000-8000-000000000000"])
def test_a_state_edit_at_a_checkpoint_the_game_never_had_is_a_4xx(server, checkpoint):
    body = {"values": {"round": 1}, "as_node": "setup", "checkpoint_id": checkpoint}
    before, r, after = _edit(server, body)
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert after["checkpoint"] == before["checkpoint"]
