"""Every family plays on the capable-model stand-in (tests/capable_standin.py, a loopback
OpenAI-compatible endpoint served from a thread) under the capable profile, and the record holds
what the model sent: no word altered, no text cut without a `cut` trace line, Markdown as
written. Parsing is the documented one only: the JSON of an answer is read from its fence, and
a prose answer's surrounding blank space is stripped (wargraph.seats.plaintext.as_written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.capable_standin import PROSE, CapableStandIn
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.seats.deciders import parse_answer
from wargraph.seats.plaintext import as_written

GAMES: list[tuple[str, str, list[str]]] = [
    ("crisis", "azuristan_crimsonia", ["rounds=1"]),
    ("tabletop", "haiwire", ["rounds=1"]),
    ("waragent", "wwi", ["rounds=1"]),
    ("diplomacy", "diplomacy", ["diplomacy.max_year=1901"]),
    ("blotto", "blotto", ["rounds=1"]),
    ("flow", "summit", ["rounds=1"]),
]
FREE_TEXT = 30  # a string this long in a JSON answer is the model's own text (orders are shorter)


@pytest.fixture(scope="module")
def endpoint():
    with CapableStandIn() as standin:
        yield standin


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def sent_texts(call: dict[str, Any]) -> list[str]:
    """What the model said in one answer, read as wargraph documents reading it."""
    output = call["output"]
    if call["mode"] == "text":
        return [as_written(output, "answer")]
    return [s for s in strings(_json_of(output)) if len(s) >= FREE_TEXT]


def _json_of(output: str) -> Any:
    from pydantic import BaseModel, ConfigDict

    class Anything(BaseModel):  # parse_answer's fence and brace handling, no schema of its own
        model_config = ConfigDict(extra="allow")

    return parse_answer(output, Anything).model_dump()


def play_on(endpoint: CapableStandIn, name: str, scenario: str, overrides: list[str], out: Path):
    start = len(endpoint.sent)
    result = play(
        scenario,
        overrides=overrides,
        context=GameContext(model=f"openai:frontier@{endpoint.url}", seed=3),
        db=None,
        thread_id=f"capable-{name}",
        out_dir=out,
    )
    trace = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines() if line]
    return result, trace, endpoint.sent[start:], endpoint.requests[start:]


@pytest.mark.parametrize(("name", "scenario", "overrides"), GAMES, ids=[g[0] for g in GAMES])
def test_the_record_holds_what_the_capable_model_sent(
    endpoint, tmp_path, name, scenario, overrides
):
    result, trace, sent, requests = play_on(endpoint, name, scenario, overrides, tmp_path / name)
    assert result.finished, result.values.get("error")
    calls = [c for c in trace if c["event"] == "call"]
    assert calls and sorted(c["output"] for c in calls) == sorted(sent)
    # no repair ran, nothing fell back, and no request could end an answer at a blank line
    assert [c for c in trace if c["event"] in ("corrected", "fallback", "fault")] == []
    assert [r["stop"] for r in requests if r.get("stop")] == []
    refused = {(c["ask_id"], c["attempt"]) for c in trace if c["event"] == "rejected"}
    cut = {c["ask_id"] for c in trace if c["event"] == "cut"}
    recorded = "\n\u0000".join(strings(result.record))
    missing = [
        (c["ask_id"], text[:80])
        for c in calls
        if (c["ask_id"], c["attempt"]) not in refused and c["ask_id"] not in cut
        for text in sent_texts(c)
        if text not in recorded
    ]
    assert missing == [], f"{len(missing)} texts of the model are not in the record as sent"
    # the prose kept its Markdown (heading, blank lines, list) and its words
    if any(c["mode"] == "text" for c in calls):
        assert PROSE in recorded
    for word in ("Italo-German", "Austro-Hungarian", "la Russie", "France.Italy", "border.Then"):
        assert word in recorded or not any(word in s for s in sent), word


def test_diplomacy_prompts_state_the_capable_limits(endpoint, tmp_path):
    _, trace, _, _ = play_on(
        endpoint, "limits", "diplomacy", ["diplomacy.max_year=1901"], tmp_path / "d"
    )
    asked = [c["messages"][-1]["content"] for c in trace if c["event"] == "call"]
    talks = [a for a in asked if "messages[].text: at most 1000 characters" in a]
    diaries = [a for a in asked if "summary: at most 600 characters" in a]
    assert talks and diaries


def test_a_slow_endpoint_is_waited_for_up_to_the_call_timeout(tmp_path):
    from tests.unit.test_deciders import ask
    from wargraph.nodes.schemas import Plan
    from wargraph.seats.deciders import LLMDecider

    with CapableStandIn(delay=0.8) as slow:
        seat = {"model": f"openai:frontier@{slow.url}", "retries": 0}
        trace = tmp_path / "short.jsonl"
        out = LLMDecider({**seat, "timeout": 0.2, "trace_path": str(trace)}).decide(ask(), Plan)
        assert out["source"] == "fallback"
        assert "Timeout" in trace.read_text()
        out = LLMDecider({**seat, "timeout": 10.0}).decide(ask(), Plan)
        assert out == {"value": {"plan": PROSE}, "source": "model"}


def test_wargraph_play_on_the_stand_in_with_a_call_timeout(endpoint, tmp_path):
    from typer.testing import CliRunner

    from wargraph.cli import app

    out_dir = tmp_path / "run"
    args = ["play", "azuristan_crimsonia", "--rounds", "1", "--db", str(tmp_path / "g.sqlite")]
    args += ["--model", f"openai:frontier@{endpoint.url}", "--call-timeout", "30"]
    result = CliRunner().invoke(app, [*args, "--out", str(out_dir)])
    assert result.exit_code == 0, result.output
    record = json.loads((out_dir / "record.json").read_text())
    assert PROSE in "\n".join(strings(record))


def test_the_stand_in_answers_a_tool_call_by_its_schema(endpoint):
    from langchain_openai import ChatOpenAI
    from pydantic import BaseModel, Field

    class Message(BaseModel):
        to: str
        text: str = Field(max_length=1000)

    chat = ChatOpenAI(model="frontier", base_url=endpoint.url, api_key="none", max_retries=0)
    made = chat.with_structured_output(Message, method="function_calling").invoke("Write.")
    assert isinstance(made, Message) and len(made.text) > 160


def test_under_the_small_profile_a_heading_ends_the_prose(endpoint, tmp_path):
    """Why the capable profile sends no stop: the small profile's blank-line stop ends this
    Markdown answer after its heading (the server honours `stop`, as llama.cpp's does)."""
    result = play(
        "azuristan_crimsonia",
        overrides=["rounds=1"],
        context=GameContext(model=f"openai:frontier@{endpoint.url}", seed=3, profile="small"),
        db=None,
        thread_id="small-heading",
        out_dir=tmp_path / "small",
    )
    recorded = strings(result.record)
    assert "## Assessment" in recorded and PROSE not in "\n".join(recorded)
