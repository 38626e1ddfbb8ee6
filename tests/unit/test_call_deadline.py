"""A model call has one deadline for the whole exchange: an endpoint that trickles its answer a
byte at a time (every read well within httpx's per-read timeout) cannot hold a seat past the
call's timeout; a prompt answer still arrives whole."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from wargraph.models.chat import chat_model

ANSWER = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "We hold."}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }
).encode()


ANTHROPIC_ANSWER = json.dumps(
    {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "We hold."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
).encode()


class _Slow(BaseHTTPRequestHandler):
    pause = 0.0  # seconds between bytes
    answer = ANSWER

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        for i in range(len(self.answer)):
            try:
                self.wfile.write(self.answer[i : i + 1])
                self.wfile.flush()
            except OSError:
                return  # the client gave up
            time.sleep(self.pause)


@pytest.fixture
def endpoint():
    def serve(pause: float, answer: bytes = ANSWER) -> str:
        handler = type("Handler", (_Slow,), {"pause": pause, "answer": answer})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    servers: list[ThreadingHTTPServer] = []
    yield serve
    for s in servers:
        s.shutdown()
        s.server_close()


def test_a_trickling_answer_ends_at_the_calls_deadline(endpoint):
    url = endpoint(0.2)  # ~230 bytes at 0.2 s: 46 s without a deadline for the whole answer
    model = chat_model(f"openai:m@{url}", timeout=1.5)
    started = time.monotonic()
    with pytest.raises(Exception) as err:  # openai wraps it: APITimeoutError
        model.invoke("hello")
    assert time.monotonic() - started < 6, "held past the deadline"
    assert "timed out" in str(err.value).lower() or "longer than 1.5 s" in str(err.value)


def test_a_prompt_answer_arrives_whole(endpoint):
    url = endpoint(0.0)
    reply = chat_model(f"openai:m@{url}", timeout=5.0).invoke("hello")
    assert reply.content == "We hold."


def test_another_providers_trickling_answer_ends_at_the_calls_deadline(endpoint, monkeypatch):
    """The same deadline through LangChain's own Anthropic integration (its SDK's timeouts are
    per read too)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-standin")
    url = endpoint(0.2, ANTHROPIC_ANSWER).removesuffix("/v1")
    model = chat_model(f"anthropic:m@{url}", timeout=1.5)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="longer than 1.5 s"):
        model.invoke("hello")
    assert time.monotonic() - started < 6, "held past the deadline"
    fast = endpoint(0.0, ANTHROPIC_ANSWER).removesuffix("/v1")
    assert chat_model(f"anthropic:m@{fast}", timeout=5.0).invoke("hello").content == "We hold."
