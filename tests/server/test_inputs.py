"""Bad input to a real `wargraph serve` (loopback): numbers no part of the server can hold are a
400, and no request makes the server call an endpoint (with its OPENAI_API_KEY) or open a file
that the operator did not allow."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.server.support import ALLOWED_ENDPOINT, bearer, sdk, web

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

HUGE = "9" * 100_000  # the LangGraph API takes bodies up to 2 MB
BIG = "9" * 50_000  # the wargraph routes up to 64 kB
GAME = '{"scenario": "azuristan_crimsonia", "model": "scripted", '


@pytest.fixture(scope="module")
def client(server):
    with web(server) as c:
        yield c


def _post(client, server, path, raw: str):
    headers = {**bearer(server.facilitator_token), "Content-Type": "application/json"}
    return client.post(path, headers=headers, content=raw.encode())


@pytest.mark.parametrize(
    "body",
    [
        GAME + '"seed": ' + BIG + "}",
        GAME + f'"seed": {2**70}}}',
        GAME + f'"seed": -{2**64}}}',
        GAME + '"temperature": 1e999}',
        GAME + '"temperature": NaN}',
    ],
)
def test_numbers_out_of_range_are_400_on_the_facilitators_route(server, client, body):
    t0 = time.monotonic()
    r = _post(client, server, "/wargraph/graphs", body)
    assert r.status_code == 400, f"{r.status_code} {r.text[:300]}"
    detail = r.json()["detail"]
    assert "out of range" in detail or "too large" in detail or "finite" in detail, detail
    assert len(detail) < 300
    assert time.monotonic() - t0 < 20  # refused on its digits, never converted (generous: CI load)


def test_numbers_out_of_range_are_400_on_the_langgraph_api(server, client):
    thread = sdk(server).threads.create()
    attempts = {
        "/threads": f'{{"metadata": {{"n": {2**70}}}}}',
        "/threads/search": '{"metadata": {"n": ' + HUGE + "}}",
        f"/threads/{thread['thread_id']}/runs": (
            '{"assistant_id": "crisis", "input": {"scenario": "azuristan_crimsonia"}, '
            f'"context": {{"model": "scripted", "seed": {2**70}}}}}'
        ),
        "/assistants": f'{{"graph_id": "crisis", "context": {{"seed": {2**70}}}}}',
    }
    for path, body in attempts.items():
        r = _post(client, server, path, body)
        assert r.status_code == 400, f"{path}: {r.status_code} {r.text[:300]}"
        assert "out of range" in r.json()["detail"]
    # The largest whole number the server stores is still a seed.
    r = _post(
        client,
        server,
        "/wargraph/graphs",
        GAME + f'"seed": {2**63 - 1}}}',
    )
    assert r.status_code == 201, r.text


class Listener:
    """A loopback TCP port that records whatever connects to it (an endpoint no one allowed)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener():
    lst = Listener()
    yield lst
    lst.close()


def test_a_request_never_names_the_endpoint_or_file_a_served_game_calls(server, client, listener):
    evil = f"openai:gpt-4o@http://127.0.0.1:{listener.port}/v1"
    f = bearer(server.facilitator_token)
    inline = {
        "family": "crisis",
        "title": "t",
        "setting": "s",
        "players": {"a": {"persona": "p", "model": evil}, "b": {"persona": "p"}},
    }
    requests = {
        "default model": {"scenario": "azuristan_crimsonia", "model": evil},
        "role_models": {"scenario": "azuristan_crimsonia", "role_models": {"control": evil}},
        "a local file": {"scenario": "azuristan_crimsonia", "model": "gguf:/etc/hostname"},
        "inline scenario": {"scenario": inline, "model": "scripted"},
        "scenario_text": {
            "scenario_text": f"family: crisis\ntitle: t\nsetting: s\nplayers:\n  a: {{persona: p, "
            f"model: '{evil}'}}\n  b: {{persona: p}}\n",
            "model": "scripted",
        },
        "an override": {
            "scenario": "azuristan_crimsonia",
            "model": "scripted",
            "overrides": {"players.azuristan.model": evil},
        },
    }
    for what, body in requests.items():
        r = client.post("/wargraph/graphs", headers=f, json=body)
        assert r.status_code == 403, f"{what}: {r.status_code} {r.text[:300]}"
        assert "not allowed on this server" in r.json()["detail"], what
    api = sdk(server)
    thread = api.threads.create()["thread_id"]
    runs = {
        "run context": {"context": {"model": "scripted", "role_models": {"control": evil}}},
        "run input scenario": {"input": {"scenario": inline}, "context": {"model": "scripted"}},
        "run overrides": {
            "input": {
                "scenario": "azuristan_crimsonia",
                "overrides": {"players.azuristan.model": evil},
            },
            "context": {"model": "scripted"},
        },
        "run config": {"config": {"configurable": {"scenario": inline}}},
        "a trace file": {"context": {"model": "scripted", "trace_path": "/tmp/wargraph-owned"}},
    }
    for what, extra in runs.items():
        body = {"assistant_id": "crisis", **extra}
        body.setdefault("input", {"scenario": "azuristan_crimsonia"})
        r = client.post(f"/threads/{thread}/runs", headers=f, json=body)
        assert r.status_code == 403, f"{what}: {r.status_code} {r.text[:300]}"
    r = client.post(
        "/assistants",
        headers=f,
        json={"graph_id": "crisis", "config": {"configurable": {"scenario": inline}}},
    )
    assert r.status_code == 403, r.text[:300]
    time.sleep(1.0)
    assert listener.received == [], "the server called an endpoint a request named"


def test_the_operators_endpoint_is_allowed(server, client):
    r = client.post(
        "/wargraph/graphs",
        headers=bearer(server.facilitator_token),
        json={
            "scenario": "azuristan_crimsonia",
            "model": "scripted",
            "role_models": {"control": f"openai:whatever@{ALLOWED_ENDPOINT}"},
        },
    )
    assert r.status_code == 201, r.text
