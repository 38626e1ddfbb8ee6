"""Model references by provider: any provider LangChain's `init_chat_model` knows
(`anthropic:<model>[@<url>]` ...) and `openai:<model>` at `OPENAI_BASE_URL`, played against
loopback stand-ins of each API through the real integrations (langchain-anthropic,
langchain-openai): the capable profile, the trace, preflight and clear errors apply to them."""

from __future__ import annotations

import json

import pytest

from tests.anthropic_standin import AnthropicStandIn
from tests.capable_standin import MODEL, PROSE, CapableStandIn
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.models.chat import ModelRefError, chat_model, parse_model_ref
from wargraph.models.preflight import PreflightError, preflight
from wargraph.models.profiles import default_profile
from wargraph.runs.runner import play


def _model_events(record: dict) -> list[dict]:
    return [e for e in record["events"] if e.get("author") in ("azuristan", "crimsonia")]


def test_references_parse_and_print_back():
    ref = parse_model_ref("anthropic:claude-x@http://127.0.0.1:9/")
    assert (ref.provider, ref.name, ref.base_url) == (
        "langchain",
        "anthropic:claude-x",
        "http://127.0.0.1:9/",
    )
    assert str(ref) == "anthropic:claude-x@http://127.0.0.1:9/"
    assert parse_model_ref(str(ref)) == ref
    assert default_profile(ref) == "capable"
    with pytest.raises(ModelRefError, match="unknown provider 'nosuch'.*anthropic"):
        parse_model_ref("nosuch:model")
    with pytest.raises(ModelRefError, match=r"expected ollama:<model>"):
        parse_model_ref("ollama:@")


def test_openai_without_a_url_takes_openai_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert parse_model_ref("openai:m").base_url == "http://127.0.0.1:9/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert parse_model_ref("openai:m").base_url is None


def test_a_provider_whose_package_or_key_is_missing_is_one_line_before_the_game(monkeypatch):
    sc = load_scenario("azuristan_crimsonia", ["rounds=1"])
    with pytest.raises(PreflightError, match="langchain-ollama"):
        preflight(sc, GameContext(model="ollama:llama3"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(PreflightError, match="no API key .set ANTHROPIC_API_KEY"):
        preflight(sc, GameContext(model="anthropic:claude-x"))
    with pytest.raises(ModelRefError, match="needs langchain-ollama"):
        chat_model("ollama:llama3")


def test_a_round_against_another_providers_api(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-standin")
    with AnthropicStandIn() as api:
        ref = f"anthropic:claude-standin@{api.url}"
        result = play(
            "azuristan_crimsonia",
            overrides=["rounds=1"],
            context=GameContext(model=ref, seed=3),
            db=None,
            out_dir=tmp_path / "run",
        )
    assert api.requests and set(api.keys) == {"sk-ant-standin"}
    forced = [r for r in api.requests if r.get("tool_choice")]
    assert forced and all(r["tool_choice"]["name"] == "answer" for r in forced)
    assert all("seed" not in r for r in api.requests)  # OpenAI's seed is not sent on
    # the provider's words are the record's: prose whole, answers from forced tool calls
    plans = _model_events(result.record)
    assert len(plans) == 2 and all(e["text"] == PROSE for e in plans)
    answers = [e for e in result.record["events"] if e["kind"] == "answer"]
    assert answers and all(e["data"]["source"] == "model" for e in answers)
    calls = [
        json.loads(line)
        for line in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()
        if '"event": "call"' in line
    ]
    assert calls and {c["model"] for c in calls} == {ref}
    assert all(c["prompt_tokens"] == 120 and c["completion_tokens"] == 40 for c in calls)


def test_a_round_at_openai_base_url(tmp_path, monkeypatch):
    with CapableStandIn() as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.url)
        result = play(
            "azuristan_crimsonia",
            overrides=["rounds=1"],
            context=GameContext(model=f"openai:{MODEL}", seed=3),
            db=None,
            out_dir=tmp_path / "run",
        )
    assert endpoint.requests
    assert _model_events(result.record)
    trace = (tmp_path / "run" / "trace.jsonl").read_text()
    assert f"openai:{MODEL}@{endpoint.url}" in trace
