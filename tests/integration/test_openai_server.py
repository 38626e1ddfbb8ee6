"""The OpenAI path against a real OpenAI-compatible server on loopback (llama.cpp's server
serving the embedded GGUF), started by the test. No mock of the HTTP layer."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from wargraph.kernel.context import GameContext
from wargraph.models.chat import chat_model, embedded_model_path, llama_threads
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import parse_answer
from wargraph.seats.schemas import flat_json_schema, grammar_schema

pytestmark = [pytest.mark.model, pytest.mark.server, pytest.mark.timeout(600)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(embedded_model_path()),
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",  # as the embedded model (WARGRAPH_LLAMA_THREADS under `make test`)
        str(llama_threads()),
        "--interrupt_requests",
        "False",
    ]
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama_cpp.server did not start: {log.read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_game_through_an_openai_compatible_server(llama_server, tmp_path):
    model = f"openai:smollm2@{llama_server}"
    result = play(
        "azuristan_crimsonia",
        overrides=[
            "rounds=1",
            "questions=[{text: 'Did armed conflict occur?', options: [yes, no]}]",
        ],
        # SmolLM2 behind a server: the small profile, as docs/model-profiles.md advises
        context=GameContext(model=model, max_tokens=120, call_timeout=120, profile="small"),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    assert result.finished
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert calls and all(c["model"] == model for c in calls)
    assert all(c["prompt_tokens"] > 0 for c in calls)  # real counts from the server
    answer = [e for e in result.record["events"] if e["kind"] == "answer"][0]
    assert answer["data"]["choice"] in ("yes", "no", "undetermined")
    assert answer["data"]["source"] == "model"  # the schema reached the server as a grammar


def test_the_length_cap_reaches_the_server(llama_server):
    """llama.cpp's server reads `max_tokens` only; langchain-openai sends the cap as
    `max_completion_tokens`, so without the second name the answer ran uncapped."""
    model = chat_model(f"openai:smollm2@{llama_server}", max_tokens=8, temperature=0.0)
    reply = model.invoke([HumanMessage("Write a long story about a border dispute.")])
    assert reply.usage_metadata["output_tokens"] <= 8
    assert reply.response_metadata.get("finish_reason") == "length"


class Poem(BaseModel):
    poem: str = Field(pattern=r"^[a-z ]{1,12}\n[a-z ]{1,12}$")
    lines: int


def test_json_the_grammar_allows_parses(llama_server):
    """The server's schema grammar writes a raw newline inside a JSON string (the pattern asks
    for one); strict JSON parsing refused such answers, so they were re-asked and fell back."""
    model = chat_model(f"openai:smollm2@{llama_server}", max_tokens=60, temperature=0.0)
    schema = grammar_schema(flat_json_schema(Poem))
    reply = model.invoke(
        [HumanMessage("Write a two-line poem about the sea.")],
        response_format={"type": "json_object", "schema": schema},
    )
    assert "\n" in reply.content  # raw, inside the string: not valid strict JSON
    answer = parse_answer(reply.content, Poem)
    assert answer.poem.count("\n") == 1
