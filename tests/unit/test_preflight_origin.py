"""Preflight keeps the key at home and has one deadline (issue 40, items 2 and 3): a redirect of
`GET /models` to another origin is not followed (the other host never sees the key), one within
the origin is; an endpoint that trickles its answer a byte at a time is "unreachable" within the
timeout, not held for as long as it keeps trickling. Real loopback servers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wargraph.models.chat import parse_model_ref
from wargraph.models.preflight import problem

KEY = "sk-canary-KEY"


@contextmanager
def serving(answer: Callable[[BaseHTTPRequestHandler, list[dict[str, str]]], None]) -> Iterator:
    """A loopback server calling `answer(handler, seen)` per GET; `seen` keeps each request's
    path and Authorization header."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append({"path": self.path, "auth": self.headers.get("Authorization", "")})
            answer(self, seen)

        def do_POST(self) -> None:  # noqa: N802 (a model call: kept, refused)
            seen.append({"path": self.path, "auth": self.headers.get("Authorization", "")})
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def models(handler: BaseHTTPRequestHandler, ids: list[str]) -> None:
    body = ('{"data": [' + ", ".join(f'{{"id": "{i}"}}' for i in ids) + "]}").encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def redirect(to: str) -> Callable[[BaseHTTPRequestHandler, list[dict[str, str]]], None]:
    def answer(handler: BaseHTTPRequestHandler, seen: list[dict[str, str]]) -> None:
        if handler.path.endswith("/models") and not handler.path.startswith("/moved"):
            handler.send_response(302)
            handler.send_header("Location", to)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        else:
            models(handler, ["m"])

    return answer


def test_a_redirect_to_another_origin_does_not_carry_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with serving(lambda h, s: models(h, ["m"])) as (elsewhere, stolen):  # noqa: SIM117
        with serving(redirect(elsewhere + "/v1/models")) as (home, seen):
            why = problem(parse_model_ref(f"openai:m@{home}/v1"))
    assert seen == [{"path": "/v1/models", "auth": f"Bearer {KEY}"}]
    assert stolen == []  # not followed at all: the other host learns nothing
    assert why and "another origin" in why and elsewhere in why


def test_a_redirect_within_the_origin_is_followed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with serving(redirect("/moved/v1/models")) as (home, seen):
        assert problem(parse_model_ref(f"openai:m@{home}/v1")) is None
    assert [s["path"] for s in seen] == ["/v1/models", "/moved/v1/models"]


def trickle(handler: BaseHTTPRequestHandler, seen: list[dict[str, str]]) -> None:
    """Headers at once, then one byte of the body every half second, for a minute."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "120")
    handler.end_headers()
    try:
        for _ in range(120):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.5)
    except OSError:
        pass


@pytest.mark.parametrize("timeout", [1.5])
def test_a_trickling_endpoint_is_given_up_on_at_the_deadline(monkeypatch, timeout):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(trickle) as (home, _):
        started = time.monotonic()
        why = problem(parse_model_ref(f"openai:m@{home}/v1"), timeout=timeout)
        took = time.monotonic() - started
    assert why and why.startswith("unreachable") and "within" in why
    assert took < timeout + 1.0


def test_a_model_call_redirected_elsewhere_does_not_carry_the_key(monkeypatch):
    """The model calls' client (OpenAI's, on httpx) drops the key on a redirect to another
    origin: what docs/security.md promises, held to here."""
    from langchain_core.messages import HumanMessage

    from wargraph.models.chat import chat_model

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with serving(lambda h, s: None) as (elsewhere, stolen):

        class Redirect(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(307)
                self.send_header("Location", elsewhere + "/v1/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        home = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        threading.Thread(target=home.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{home.server_address[1]}/v1"
            model = chat_model(parse_model_ref(f"openai:m@{url}"), timeout=5.0)
            with pytest.raises(Exception):  # noqa: B017 (any failure: the answer never comes)
                model.invoke([HumanMessage("hello")])
        finally:
            home.shutdown()
            home.server_close()
    # the client followed the redirect (the other host got the call) but not with the key
    assert stolen == [{"path": "/v1/chat/completions", "auth": ""}], stolen
