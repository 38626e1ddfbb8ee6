"""Helpers for the reliability suite: the game families, the fork server client, a fake
OpenAI-compatible endpoint on loopback, and trace readers."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


# --- the game families -------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """One game family and the scenario the reliability tests play it with.

    `landed`: the family is committed and plays, so any failure counts. A family still being
    written is skipped until it lands (then flip `landed`)."""

    name: str
    scenario: str
    overrides: tuple[str, ...] = ()
    landed: bool = True

    @property
    def module(self) -> str:
        return f"wargraph.graphs.{self.name}.graph"

    def available(self) -> bool:
        """Landed and importable (for tests that mix families rather than parametrize them)."""
        if not self.landed or importlib.util.find_spec(self.module) is None:
            return False
        importlib.import_module(self.module)
        return True

    def require(self) -> str:
        """The scenario to play; skips a family that is not there yet."""
        if importlib.util.find_spec(self.module) is None:
            pytest.skip(f"the {self.name} family is not in this work tree yet")
        if not self.landed:
            pytest.skip(f"the {self.name} family is still being written (enable it when it lands)")
        try:
            importlib.import_module(self.module)
        except Exception as err:
            if self.landed:
                raise
            pytest.skip(f"the {self.name} family does not import yet ({err})")
        from wargraph.kernel.scenario import shipped_scenarios

        if self.scenario in shipped_scenarios():
            return self.scenario
        found = first_shipped(self.name)
        if found is None:
            if self.landed:
                raise AssertionError(f"no shipped scenario of the {self.name} family")
            pytest.skip(f"no shipped scenario of the {self.name} family yet")
        return found


FAMILIES = [
    Family("crisis", "azuristan_crimsonia"),
    Family("flow", "summit"),
    Family("tabletop", "haiwire"),
    # two rounds keep a kill point under a second; the secretary and board still run each round
    Family("waragent", "wwi", ("rounds=2",)),
    # 1901 only (spring, fall, winter), one negotiation round: the engine phases all run
    Family("diplomacy", "diplomacy", ("diplomacy.max_year=1901", "diplomacy.negotiation_rounds=1")),
    # two rounds: talks, diaries, allocations, the secretary's revisions and the score each round
    Family("blotto", "blotto", ("rounds=2",)),
]


def family_params() -> list[Any]:
    return [pytest.param(f, id=f.name) for f in FAMILIES]


def first_shipped(family: str) -> str | None:
    """A shipped scenario of this family, for families whose scenario name is not settled."""
    from wargraph.kernel.scenario import shipped_scenarios

    for name, path in sorted(shipped_scenarios().items()):
        text = path.read_text(encoding="utf-8")
        if f"family: {family}\n" in text:
            return name
    return None


# --- the fork server (see _zygote.py) ----------------------------------------------------------


class ForkServer:
    """Client of _zygote.py: one warm interpreter that forks a child per game."""

    def __init__(self, cwd: Path) -> None:
        env = {
            **os.environ,
            "LANGSMITH_TRACING": "false",
            "LANGSMITH_TEST_TRACKING": "false",
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "_zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(cwd / "zygote.log", "wb"),  # noqa: SIM115 (closed with the process)
            cwd=str(cwd),
            env=env,
            text=True,
        )

    def run(self, job: dict[str, Any], *, timeout: float = 60.0) -> dict[str, Any]:
        """Run one game in a forked child; returns how it ended (signal or exit code)."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise TimeoutError(f"the forked game did not end within {timeout} s: {job}")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the fork server died (exit {self.proc.poll()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- a fake OpenAI-compatible endpoint on loopback ---------------------------------------------


@dataclass
class FakeEndpoint:
    """A tiny /v1/chat/completions server. `mode` says how it misbehaves:

    ok        a valid completion whose content is `reply`
    500       HTTP 500 with an error body
    hang      sleeps `hang_s` before answering (past the client's timeout)
    badjson   HTTP 200 with a body that is not JSON
    badshape  HTTP 200 with JSON that is not a chat completion
    429       HTTP 429 (rate limited) with `Retry-After: retry_after`
    """

    mode: str = "ok"
    reply: str = '{"plan": "hold"}'
    hang_s: float = 3.0
    retry_after: str = "1"
    script: list[str] = field(default_factory=list)  # modes for the first requests, in order
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    thread: threading.Thread | None = None
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeEndpoint:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    payload = json.loads(body)
                except json.JSONDecodeError:
                    payload = {"raw": body.decode("utf-8", "replace")}
                messages = payload.get("messages") or [{}]
                with endpoint.lock:
                    endpoint.requests.append(
                        {
                            "path": self.path,
                            "body": payload,
                            "at": time.monotonic(),
                            # which ask: its first user turn
                            "prompt": next(
                                (m.get("content") for m in messages if m.get("role") == "user"),
                                "",
                            ),
                        }
                    )
                    mode = endpoint.script.pop(0) if endpoint.script else endpoint.mode
                if mode == "hang":
                    # bounded: released when the test ends, whatever the client does
                    endpoint.release.wait(endpoint.hang_s)
                    mode = "ok"
                if mode == "500":
                    self._send(500, b'{"error": {"message": "internal error (fake)"}}')
                elif mode == "429":
                    body = b'{"error": {"message": "rate limited (fake)"}}'
                    self._send(429, body, {"Retry-After": endpoint.retry_after})
                elif mode == "badjson":
                    self._send(200, b'{"id": "x", "choices": [ {"message": nope')
                elif mode == "badshape":
                    self._send(200, b'{"hello": "world"}')
                else:
                    self._send(200, json.dumps(completion(endpoint.reply)).encode())

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout): nothing to answer
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self.thread is not None:
            self.thread.join(timeout=5)


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- traces ------------------------------------------------------------------------------------


def prompt_text(entry: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in entry.get("messages", []))


def system_of(entry: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content", "")) for m in entry.get("messages", []) if m.get("role") == "system"
    )


def user_of(entry: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content", "")) for m in entry.get("messages", []) if m.get("role") != "system"
    )


def stopped_game(db: str, thread_id: str, *, seed: int = 0) -> None:
    """A two-round scripted crisis stopped after its first step (as a crash would stop it), so
    the store holds a game that is neither finished nor new."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    class Stop(Exception):
        pass

    def stop(node: str, values: dict[str, Any]) -> None:
        raise Stop

    try:
        play(
            "azuristan_crimsonia",
            overrides=["rounds=2"],
            context=GameContext(model="scripted", seed=seed),
            db=db,
            thread_id=thread_id,
            progress=stop,
        )
    except Stop:
        return
    raise AssertionError("the game was not stopped after its first step")
