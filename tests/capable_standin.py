"""A capable-model stand-in: a loopback OpenAI-compatible endpoint that answers as frontier models
do, so tests can check that what such a model says is what a game's record holds.

Its answers have what wargraph's small-model repairs used to damage: Markdown headings, blank
lines and lists, JSON in a fence after a sentence, long messages of several sentences,
hyphenated national prefixes ("Italo-German", "Austro-Hungarian"), French and German phrases
("la Russie", "eine Frage der Zeit"), a missing space after a full stop ("France.Italy") and,
asked for a digest with an earlier one in its prompt, that digest unchanged. Each request is
answered by its schema: `response_format` (json_object with `schema`, or json_schema) gets
JSON, `tools` with a named `tool_choice` gets a tool call, anything else prose, ended at the
request's first `stop` sequence as a server ends it. `delay`
seconds before every answer stand in for a slow endpoint.

    with CapableStandIn() as endpoint:
        play(..., context=GameContext(model=f"openai:frontier@{endpoint.url}"))
        endpoint.sent  # every answer's content, in order

Run by hand: `python -m tests.capable_standin --port 8911 [--delay 2]`, then
`wargraph play diplomacy --model openai:frontier@http://127.0.0.1:8911/v1`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "frontier"  # the name tests ask for: the preflight checks it against GET /models

# Prose as frontier models write it (each line kept verbatim by a faithful record).
PROSE = (
    "## Assessment\n"
    "\n"
    "The Italo-German understanding holds for now, and the Austro-Hungarian flank is the "
    "question that decides this move. As the French press puts it, la Russie reste une "
    "énigme; in Berlin it is eine Frage der Zeit.\n"
    "\n"
    "- Keep every channel open and answer each proposal within the round.\n"
    "- Offer talks on the border.Then hold the line we already have.\n"
    "- Watch France.Italy seeks a partner, and we would rather it were us.\n"
    "\n"
    "```\n"
    "hold: 2 | talk: 3\n"
    "```\n"
    "\n"
    "**Bottom line:** we do not move first, but we do not stand still either."
)
# Free text inside JSON answers: long, several sentences, the same traps.
LONG_TEXTS = (
    "We propose an Italo-German understanding for the coming year: neither of us moves "
    "against the other's home centres, and we share what we learn of Austro-Hungarian "
    "intentions. Comme on dit, la Russie reste une énigme. Let us talk again before the "
    "autumn orders are due.",
    "Our Anglo-French channel stays open. We have no quarrel with you, and we would rather "
    "settle the border by talks than by arms.If you agree, say so this round and we will "
    "hold our positions in good faith. Das ist keine Frage der Zeit, sondern des Vertrauens.",
    "The Russo-Turkish front is quiet and we mean to keep it that way. Every Englander we "
    "meet asks the same question, and our answer is the same: we defend, we do not "
    "provoke, and we keep our word.",
)
SHORT_TEXTS = (
    "Italo-German talks first; la Russie waits.",
    "Hold the line.Then talk.",
    "Austro-Hungarian flank: watch it.",
)


def _seeded(body: dict[str, Any]) -> random.Random:
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
    return random.Random(digest)


Tagger = Callable[[], str]


def fit_text(schema: dict[str, Any], rng: random.Random, tag: Tagger | None = None) -> str:
    """A text for a string field: a long one when it fits its stated limit (a capable model
    keeps to the limit it is told), else a shorter one, else the start of one at a word end.
    With `tag`, a long or short text opens with a tag of its own ("T0042 We propose ..."), so a
    test can find each text the model wrote in later prompts."""
    limit = int(schema.get("maxLength") or 10_000)
    low = int(schema.get("minLength") or 0)
    for pool in (LONG_TEXTS, SHORT_TEXTS):
        fitting = [t for t in pool if low <= len(t) + TAG_CHARS * bool(tag) <= limit]
        if fitting:
            text = rng.choice(fitting)
            return f"{tag()} {text}" if tag else text
    cut = SHORT_TEXTS[0][:limit].rsplit(" ", 1)[0] if limit < len(SHORT_TEXTS[0]) else ""
    return (cut or "ok")[: max(limit, 1)].ljust(low, ".")


TAG_CHARS = 6  # "T0042 "


def fill(
    schema: dict[str, Any], rng: random.Random, key: str = "", tag: Tagger | None = None
) -> Any:
    """A value valid for a flat JSON schema (what wargraph sends: `$defs` inlined); free texts
    tagged with `tag` (fit_text)."""
    if "enum" in schema:
        options = list(schema["enum"])
        return options[0] if key == "action" else rng.choice(options)  # sending is the norm
    if "const" in schema:
        return schema["const"]
    for union in ("anyOf", "oneOf"):
        if union in schema:
            options = [s for s in schema[union] if s.get("type") != "null"] or schema[union]
            return fill(options[0], rng, key, tag)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return {k: fill(v, rng, k, tag) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        low = int(schema.get("minItems", 1))
        high = max(low, min(int(schema.get("maxItems", 2)), 2))
        items = schema.get("items") or {}
        return [fill(items, rng, key, tag) for _ in range(rng.randint(low, high))]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 5)))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0.0), schema.get("maximum", 1.0)), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if key in ("to", "order", "unit"):  # names and orders, not free text
        return fit_text(schema, rng)
    return fit_text(schema, rng, tag)


def earlier_digest(prompt: str) -> str | None:
    """The quoted earlier digest of a Diplomacy digest question, unquoted (None: there is none)."""
    head, found, rest = prompt.partition("Your earlier digest:\n")
    if not found:
        return None
    lines = []
    for line in rest.splitlines():
        if not line.startswith(">"):
            break
        lines.append(line[2:] if line.startswith("> ") else line[1:])
    return "\n".join(lines).strip() or None


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    return fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")


def answer(body: dict[str, Any], tag: Tagger | None = None) -> dict[str, Any]:
    """The assistant message for one request (content, or a tool call); its free texts tagged
    with `tag` when given."""
    rng = _seeded(body)
    tools = body.get("tools") or []
    if tools:
        chosen = (body.get("tool_choice") or {}).get("function", {}).get("name")
        tool = next((t for t in tools if t["function"]["name"] == chosen), tools[0])
        args = fill(tool["function"].get("parameters") or {}, rng, tag=tag)
        call = {
            "id": "call_standin",
            "type": "function",
            "function": {"name": tool["function"]["name"], "arguments": json.dumps(args)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    schema = schema_of(body)
    if schema:
        value = json.dumps(fill(schema, rng, tag=tag), indent=2, ensure_ascii=False)
        return {"role": "assistant", "content": f"Here is my answer.\n\n```json\n{value}\n```"}
    prompt = str((body.get("messages") or [{}])[-1].get("content") or "")
    kept = earlier_digest(prompt)
    prose = f"{tag()} {PROSE}" if tag else PROSE
    return {"role": "assistant", "content": stopped(kept if kept is not None else prose, body)}


def stopped(text: str, body: dict[str, Any]) -> str:
    """The text up to its first stop sequence, as a server's sampler ends it (the small
    profile's "\n\n" ends this prose after its heading)."""
    stops = body.get("stop") or []
    for stop in [stops] if isinstance(stops, str) else stops:
        if stop and stop in text:
            text = text[: text.index(stop)]
    return text


class CapableStandIn:
    """The endpoint on 127.0.0.1 (a free port unless given), served from a thread; `sent` holds
    every answer's content (or tool-call arguments) in order."""

    def __init__(self, port: int = 0, delay: float = 0.0, *, tag: bool = False) -> None:
        self.delay = delay
        self.tagged = 0  # tags given so far (`tag`: each free text opens with its own)
        self.sent: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._reply(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
                else:
                    self._reply(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._reply(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as err:
                    self._reply(400, {"error": {"message": f"bad JSON: {err}"}})
                    return
                if standin.delay:
                    time.sleep(standin.delay)
                # untagged: answer(body) alone, as tests that wrap `answer` expect
                message = answer(body, standin._next_tag) if tag else answer(body)
                said = message["content"] or message["tool_calls"][0]["function"]["arguments"]
                with standin._lock:
                    standin.sent.append(said)
                    standin.requests.append(body)
                words = len(said.split())
                self._reply(
                    200,
                    {
                        "id": "chatcmpl-standin",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model") or MODEL,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {
                            "prompt_tokens": 100,
                            "completion_tokens": words,
                            "total_tokens": 100 + words,
                        },
                    },
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next_tag(self) -> str:
        with self._lock:
            self.tagged += 1
            return f"T{self.tagged:04d}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> CapableStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8911)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()
    with CapableStandIn(args.port, args.delay) as endpoint:
        print(f"serving {endpoint.url} (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
