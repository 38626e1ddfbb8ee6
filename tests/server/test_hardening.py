"""The server as a careless or hostile client meets it (a real `wargraph serve` on loopback):
foreign origins, huge headers, idle and half-sent connections, bad JSON, file names posing as
scenarios, tokens in URLs and the API description."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.server.support import (
    READ_TIMEOUT_S,
    REGISTERED,
    REGISTERED_TITLE,
    bearer,
    sdk,
    start_game,
    token_of,
    wait_for,
    web,
)

pytestmark = [pytest.mark.server, pytest.mark.timeout(120)]

EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def client(server):
    with web(server) as c:
        yield c


def _cors_headers(response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower().startswith("access-control-")}


def test_foreign_origins_are_refused_everywhere_and_no_private_network_grant(server, client):
    f = bearer(server.facilitator_token)
    preflight = {
        "Origin": EVIL,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
        "Access-Control-Request-Private-Network": "true",
    }
    for path in ("/threads/search", "/wargraph/seat/answer", "/wargraph/graphs"):
        r = client.options(path, headers=preflight)
        assert r.status_code == 403, f"preflight {path}: {r.status_code}"
        assert _cors_headers(r) == {}, f"preflight {path} granted {_cors_headers(r)}"
    for method, path in (("GET", "/wargraph/graphs"), ("POST", "/threads/search")):
        r = client.request(method, path, headers={**f, "Origin": EVIL}, json={})
        assert r.status_code == 403 and "cross-origin" in r.json()["detail"], r.text
        assert _cors_headers(r) == {}
    # The server's own origin (what its pages send) is served, with no CORS grant either.
    r = client.get("/wargraph/scenarios", headers={**f, "Origin": server.url})
    assert r.status_code == 200, r.text
    assert _cors_headers(r) == {}


def test_oversized_headers_get_431_and_the_server_stays_up(server, client):
    r = client.get("/ok", headers={"X-Padding": "a" * 100_000})
    assert r.status_code == 431
    assert "headers" in r.text
    assert client.get("/ok").status_code == 200


def _closed_within(sock: socket.socket, limit: float, out: dict, key: str) -> None:
    """Read until the server closes the connection; record what it said and when."""
    t0 = time.monotonic()
    sock.settimeout(limit)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
        out[key] = (time.monotonic() - t0, data)
    except (TimeoutError, OSError) as err:
        out[key] = (None, repr(err).encode())


def test_idle_and_half_sent_connections_are_closed(server):
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sends = {
        "idle": b"",
        "half-sent headers": b"GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: ",
        "half-sent body": (
            b"POST /threads/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        ),
    }
    socks = {}
    for key, data in sends.items():
        s = socket.create_connection((host, int(port)), timeout=5)
        if data:
            s.sendall(data)
        socks[key] = s
    out: dict[str, tuple] = {}
    limit = READ_TIMEOUT_S + 15
    readers = [
        threading.Thread(target=_closed_within, args=(s, limit, out, k)) for k, s in socks.items()
    ]
    for t in readers:
        t.start()
    for t in readers:
        t.join(limit + 5)
    for s in socks.values():
        s.close()
    for key in sends:
        took, said = out[key]
        assert took is not None, f"{key}: still open after {limit:.0f} s ({said!r})"
        assert took >= READ_TIMEOUT_S - 1, f"{key}: closed too early ({took:.1f} s)"
    assert out["half-sent headers"][1].startswith(b"HTTP/1.1 408")
    assert b"send it whole" in out["half-sent headers"][1]


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/wargraph/graphs", b"[" * 20_000, "nests more than"),
        ("/wargraph/graphs", b'{"scenario": ' + b'{"a": ' * 40 + b"1" + b"}" * 41, "nests more"),
        ("/wargraph/seat/answer", b"[" * 20_000, "nests more than"),
        ("/threads", b"[" * 200_000, "nests more than"),
        ("/threads/search", b'{"metadata": ' + b"[" * 50 + b"]" * 50 + b"}", "nests more"),
        ("/threads", b"{nope", "not valid JSON"),
        ("/assistants/search", b'{"limit": 10,}', "not valid JSON"),
    ],
)
def test_deep_or_malformed_json_gets_400_with_the_reason(server, client, path, body, expected):
    headers = {**bearer(server.facilitator_token), "Content-Type": "application/json"}
    r = client.post(path, headers=headers, content=body)
    assert r.status_code == 400, f"{path}: {r.status_code} {r.text[:200]}"
    assert expected in r.json()["detail"]


def test_scenario_names_never_open_files_of_the_server(server, client):
    from langgraph_sdk.errors import UnprocessableEntityError

    f = bearer(server.facilitator_token)
    shipped = (server.state_dir.parent / f"{REGISTERED}.yaml").read_text(encoding="utf-8")
    (server.state_dir / "leak").write_text(shipped.replace("Registered copy", "LEAKED FILE"))
    for name in (
        "leak",
        "secret",
        "langgraph.json",
        "../server.log",
        str(server.state_dir / "leak"),
    ):
        r = client.post("/wargraph/graphs", headers=f, json={"scenario": name, "model": "scripted"})
        assert r.status_code == 400, f"{name}: {r.status_code} {r.text[:300]}"
        assert "no shipped or registered scenario" in r.json()["detail"]
        assert server.secret not in r.text and "LEAKED" not in r.text
    api = sdk(server)
    assistant = api.assistants.create("crisis", config={"configurable": {"scenario": "leak"}})
    with pytest.raises(UnprocessableEntityError, match="no shipped or registered scenario"):
        api.assistants.get_graph(assistant["assistant_id"])
    thread_id = api.threads.create()["thread_id"]
    with pytest.raises(UnprocessableEntityError, match="no shipped or registered scenario"):
        api.runs.create(thread_id, "crisis", input={"scenario": "leak"})
    assert api.runs.list(thread_id) == []


def test_registered_scenarios_and_scenario_text_start_games(server, client):
    f = bearer(server.facilitator_token)
    listed = client.get("/wargraph/scenarios", headers=f).json()["scenarios"]
    mine = next(s for s in listed if s["name"] == REGISTERED)
    assert mine["registered"] and mine["title"] == REGISTERED_TITLE
    started = start_game(server, client, ["crimsonia"], scenario=REGISTERED)
    assert started["title"] == REGISTERED_TITLE
    seat = bearer(token_of(started["links"]["crimsonia"]))
    view = wait_for(
        lambda: (
            (v := client.get("/wargraph/seat", headers=seat).json())["status"] == "your_turn" and v
        ),
        "the registered game's first question",
    )
    assert view["title"] == REGISTERED_TITLE
    text = (server.state_dir.parent / f"{REGISTERED}.yaml").read_text(encoding="utf-8")
    sent = text.replace(REGISTERED_TITLE, "Sent as text")
    r = client.post(
        "/wargraph/graphs", headers=f, json={"scenario_text": sent, "model": "scripted"}
    )
    assert r.status_code == 201, r.text
    assert r.json()["title"] == "Sent as text"
    for body, message in [
        ({"scenario_text": "a: &x [1]\nb: *x\n"}, "anchors and aliases"),
        ({"scenario_text": "title: [unclosed\n"}, "scenario_text: line"),
        ({"scenario_text": sent, "scenario": REGISTERED}, "instead of scenario"),
    ]:
        r = client.post("/wargraph/graphs", headers=f, json=body)
        assert r.status_code == 400 and message in r.json()["detail"], r.text


def test_tokens_in_a_query_string_never_reach_the_log(server, client):
    from wargraph.server.seats import seat_token

    seat = seat_token("00000000-0000-0000-0000-000000000001", "azuristan", server.secret)
    attempts = [
        ("GET", f"/threads/search?token={server.facilitator_token}"),
        ("POST", f"/threads/search?access_token={seat}"),
        ("GET", f"/wargraph/seat?token={seat}"),
        ("GET", "/info?api_key=QS-CANARY-8812"),
        ("GET", f"/nowhere?x={seat}"),
    ]
    for method, url in attempts:
        r = client.request(method, url, json={} if method == "POST" else None)
        assert r.status_code == 400, f"{url}: {r.status_code}"
        assert "Authorization header" in r.json()["detail"]
    marker = "/no-such-route-LOGMARK-5521"
    client.get(marker)  # logged (404) after the attempts: once it shows, they would show too
    wait_for(lambda: marker in server.log_tail(200_000), "the marker request in the server log")
    log = server.log_tail(2_000_000)
    for secret in (server.facilitator_token, seat, "QS-CANARY-8812"):
        assert secret not in log


def _seat_token(server) -> str:
    from wargraph.server.seats import seat_token

    return seat_token("00000000-0000-0000-0000-000000000002", "azuristan", server.secret)


def test_the_api_description_needs_the_facilitators_token(server, client):
    seat = bearer(_seat_token(server))
    for path in ("/docs", "/openapi.json", "/info", "/metrics"):
        r = client.get(path)
        assert r.status_code == 401, f"{path} without a token: {r.status_code}"
        assert "Authorization: Bearer" in r.json()["detail"]
        assert client.get(path, headers=seat).status_code == 403, path
    f = bearer(server.facilitator_token)
    assert "paths" in client.get("/openapi.json", headers=f).json()
    assert client.get("/info", headers=f).status_code == 200
    assert client.get("/ok").status_code == 200  # health checks need nothing


def test_the_graph_endpoint_shows_every_served_graph(server):
    api = sdk(server)
    system = api.assistants.search(limit=50, metadata={"created_by": "system"})
    served = {a["graph_id"]: a for a in system}
    assert "crisis" in served
    for family, assistant in served.items():
        drawn = api.assistants.get_graph(assistant["assistant_id"], xray=True)
        ids = {n["id"] for n in drawn["nodes"]}
        assert "__start__" in ids and len(ids - {"__start__", "__end__"}) >= 2, family
        assert all({e["source"], e["target"]} <= ids for e in drawn["edges"]), family
        assert any(e["source"] == "__start__" for e in drawn["edges"]), family
