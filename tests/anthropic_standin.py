"""A loopback stand-in for another provider's own API (Anthropic's Messages API, `POST
/v1/messages`), so a `anthropic:<model>@<url>` reference is tested through LangChain's real
integration (langchain-anthropic and its SDK) with no network. A request with a forced tool gets
a `tool_use` block whose input fits the tool's schema (`capable_standin.fill`); any other request
gets prose. `requests` keeps every request body, `keys` the API key each one carried."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.capable_standin import PROSE, _seeded, fill


def message(body: dict[str, Any]) -> dict[str, Any]:
    """The Messages API's answer to one request."""
    rng = _seeded(body)
    tools = body.get("tools") or []
    forced = (body.get("tool_choice") or {}).get("name")
    tool = next((t for t in tools if t.get("name") == forced), None)
    if tool is not None:
        content = [
            {
                "type": "tool_use",
                "id": "toolu_standin",
                "name": tool["name"],
                "input": fill(tool.get("input_schema") or {}, rng),
            }
        ]
        stop = "tool_use"
    else:
        content, stop = [{"type": "text", "text": PROSE}], "end_turn"
    return {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 40},
    }


class _Handler(BaseHTTPRequestHandler):
    server: AnthropicStandIn

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        code, payload = 404, {"type": "error", "error": {"message": self.path}}
        if self.path.rstrip("/").endswith("/v1/messages"):
            bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            self.server.requests.append(body)
            self.server.keys.append(self.headers.get("x-api-key") or bearer)
            code, payload = 200, message(body)
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class AnthropicStandIn(ThreadingHTTPServer):
    """The API on a free port of 127.0.0.1, served from a thread while in a `with` block."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> AnthropicStandIn:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()
