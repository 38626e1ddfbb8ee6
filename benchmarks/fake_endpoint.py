"""A loopback OpenAI-compatible endpoint that answers every chat completion after a fixed
latency with a valid, deterministic answer (JSON for the schema asked, else one line of prose):
it measures what the harness costs around a model, with no model.

    python -m benchmarks.fake_endpoint --port 8901 --latency 0.2
    wargraph play azuristan_crimsonia --model openai:fake@http://127.0.0.1:8901/v1

It runs in its own process (`FakeEndpoint` starts and always stops it) so, like a real
endpoint, it takes no CPU time from the games' process. Asyncio (uvicorn, already installed
with the LangGraph server) keeps thousands of requests waiting out their latency at once.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.server_process import ServerProcess

PROSE = "We hold our position, keep every channel open and offer talks on the border."


def answer_for(body: dict[str, Any]) -> str:
    """The reply to one request: the same request always gets the same answer."""
    from wargraph.seats.scripted import scripted_value

    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
    if not schema:
        return PROSE
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
    return json.dumps(scripted_value(schema, random.Random(digest), "answer"))


_SEAT = re.compile(r"# You are (\w+)")


def request_label(body: dict[str, Any]) -> tuple[str, str]:
    """Who asked and what (for the request log): the power a Diplomacy view names ("# You are
    FRANCE"), and the answer's fields (a schema's sorted property names, "prose" without one)."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages") or [])
    found = _SEAT.search(text)
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
    fields = ",".join(sorted(schema.get("properties") or {})) or "prose"
    return (found.group(1) if found else "?"), fields


def completion(content: str, model: str) -> dict[str, Any]:
    words = len(content.split())
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": words, "total_tokens": 100 + words},
    }


def make_app(latency_s: float):
    """A bare ASGI app: POST .../chat/completions, GET .../models; counts requests in flight.

    `busy_s` is the time with at least one request in flight and `in_flight_s` the integral of
    requests in flight over time (its mean while busy: in_flight_s / busy_s). GET .../requests
    hands over the log of requests answered since its last read: wall-clock (`time.time`, so a
    client on the same machine can line it up with its own) arrival, answer and sent times,
    the seat and the answer's fields (`request_label`)."""
    stats: dict[str, Any] = {
        "requests": 0,
        "in_flight": 0,
        "peak_in_flight": 0,
        "busy_s": 0.0,
        "in_flight_s": 0.0,
    }
    last = [time.perf_counter()]
    log: list[dict[str, Any]] = []

    def count(change: int) -> None:
        now = time.perf_counter()
        if stats["in_flight"]:
            stats["busy_s"] += now - last[0]
            stats["in_flight_s"] += stats["in_flight"] * (now - last[0])
        last[0] = now
        stats["in_flight"] += change

    async def send_json(send, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        if scope["method"] == "GET" and path.endswith("/models"):
            await send_json(send, 200, {"object": "list", "data": [{"id": "fake"}]})
            return
        if scope["method"] == "GET" and path.endswith("/stats"):
            await send_json(send, 200, stats)
            stats["peak_in_flight"] = stats["in_flight"]  # the next read: the peak since this one
            return
        if scope["method"] == "GET" and path.endswith("/requests"):
            taken = list(log)
            log.clear()
            await send_json(send, 200, taken)
            return
        if scope["method"] != "POST" or not path.endswith("/chat/completions"):
            await send_json(send, 404, {"error": {"message": f"no route {path}"}})
            return
        arrived = time.time()
        chunks, more = [], True
        while more:
            event = await receive()
            chunks.append(event.get("body", b""))
            more = event.get("more_body", False)
        try:
            body = json.loads(b"".join(chunks))
        except json.JSONDecodeError:
            await send_json(send, 400, {"error": {"message": "the body is not JSON"}})
            return
        stats["requests"] += 1
        count(+1)
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(latency_s)
            content = answer_for(body)
        finally:
            count(-1)
        answered = time.time()
        await send_json(send, 200, completion(content, str(body.get("model", "fake"))))
        seat, fields = request_label(body)
        log.append(
            {"seat": seat, "fields": fields, "arrived": arrived, "answered": answered}
            | {"sent": time.time()}
        )

    return app


class FakeEndpoint(ServerProcess):
    """`python -m benchmarks.fake_endpoint` on a free loopback port, for a `with` block."""

    name = "the fake endpoint"

    def __init__(self, latency_s: float = 0.2, log_dir: Path | None = None) -> None:
        super().__init__(log_dir / "fake_endpoint.log" if log_dir else None)
        self.latency_s = latency_s

    def command(self) -> list[str]:
        return [
            *(sys.executable, "-m", "benchmarks.fake_endpoint"),
            *("--port", str(self.port), "--latency", str(self.latency_s)),
        ]

    def model(self, name: str = "fake") -> str:
        """The model reference a seat uses to play against this endpoint."""
        return f"openai:{name}@{self.url}"

    def requests(self) -> list[dict[str, Any]]:
        """The requests answered since the last call (`make_app`: GET .../requests)."""
        with urllib.request.urlopen(f"{self.url}/requests", timeout=5) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        """Requests answered so far, the most in flight at once since the last read, and the
        time busy and requests-in-flight integral so far (`make_app`)."""
        with urllib.request.urlopen(f"{self.url}/stats", timeout=5) as resp:
            return json.loads(resp.read())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fake_endpoint", description=__doc__)
    parser.add_argument("--port", type=int, default=8901)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per completion")
    args = parser.parse_args(argv)
    import uvicorn

    uvicorn.run(
        make_app(args.latency),
        host="127.0.0.1",  # loopback only
        port=args.port,
        log_level="warning",
        access_log=False,
        backlog=4096,
    )


if __name__ == "__main__":
    main()
