"""Helpers for tests that start a real `langgraph dev` on loopback (bounded time, always stopped)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from wargraph.server.serve import Server, running

START_TIMEOUT_S = 60


REGISTERED = "registered_crisis"  # a scenario the test server's operator registers
REGISTERED_TITLE = "Registered copy of the Zafaristan crisis"
READ_TIMEOUT_S = 4.0  # how long the test server waits for a whole request
ALLOWED_ENDPOINT = "http://127.0.0.1:9/v1"  # the operator's endpoint (nothing listens there)
KEY_CANARY = "sk-canary-of-the-operator"  # the server's OPENAI_API_KEY


@contextmanager
def game_server(folder: Path) -> Iterator[Server]:
    """A server in `folder` (its own state, log and secret) on a free loopback port, with one
    registered scenario (a retitled copy of azuristan_crimsonia)."""
    from wargraph.kernel.scenario import shipped_scenarios
    from wargraph.server.serve import free_port

    text = shipped_scenarios()["azuristan_crimsonia"].read_text(encoding="utf-8")
    registered = folder / f"{REGISTERED}.yaml"
    retitled = re.sub(r"^title:.*$", f'title: "{REGISTERED_TITLE}"', text, count=1, flags=re.M)
    registered.write_text(retitled, encoding="utf-8")
    with running(
        port=free_port(),
        state_dir=folder / "state",
        log_path=folder / "server.log",
        log_level="INFO",
        jobs=4,
        scenarios=[registered],
        read_timeout=READ_TIMEOUT_S,
        allow_models=[f"openai:*@{ALLOWED_ENDPOINT}"],
        env={"OPENAI_API_KEY": KEY_CANARY},
    ) as server:
        yield server


def sdk(server: Server, token: str | None = None):
    """A langgraph-sdk sync client holding `token` (the facilitator's by default)."""
    from langgraph_sdk import get_sync_client

    token = server.facilitator_token if token is None else token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return get_sync_client(url=server.url, api_key=None, headers=headers, timeout=60)


def web(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=60)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def wait_for(check: Callable[[], Any], what: str, timeout: float = 30.0, every: float = 0.2) -> Any:
    """Poll until `check()` is truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def token_of(link: str) -> str:
    assert "#token=" in link, link
    return link.split("#token=", 1)[1]


def start_game(
    server: Server, client: httpx.Client, humans: list[str], **extra: Any
) -> dict[str, Any]:
    """A crisis game through the facilitator's route; AI seats on the scripted decider."""
    body = {"scenario": "azuristan_crimsonia", "humans": humans, "model": "scripted", **extra}
    r = client.post("/wargraph/graphs", headers=bearer(server.facilitator_token), json=body)
    assert r.status_code == 201, r.text
    return r.json()


def game(server: Server, client: httpx.Client, thread_id: str) -> dict[str, Any]:
    r = client.get(f"/wargraph/graphs/{thread_id}", headers=bearer(server.facilitator_token))
    assert r.status_code == 200, r.text
    return r.json()


def waiting_for(server: Server, client: httpx.Client, thread_id: str, seats: set[str]):
    """Wait until exactly `seats` have an open question and no run is in flight."""

    def check():
        g = game(server, client, thread_id)
        return g if set(g["waiting_for"]) == seats and g["status"] == "waiting" else None

    return wait_for(check, f"questions for {sorted(seats)}")
