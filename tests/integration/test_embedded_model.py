"""Real end-to-end games on the embedded model (SmolLM2-135M-Instruct in llama.cpp)."""

from __future__ import annotations

import json

import pytest

from wargraph.kernel.context import GameContext
from wargraph.models.chat import LlamaCppChat, embedded_model_path
from wargraph.nodes.schemas import Adjudication, choice_schema
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.schemas import flat_json_schema, grammar_schema

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]


def test_embedded_model_file_ships_in_the_package():
    path = embedded_model_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_grammar_holds_for_enums_on_the_embedded_model():
    """With the schema as a grammar the small model can only answer one of the options."""
    model = LlamaCppChat(model_path=str(embedded_model_path()), max_tokens=200, temperature=1.0)
    schema = choice_schema({"options": ["yes", "no"]})
    fmt = {"type": "json_object", "schema": grammar_schema(flat_json_schema(schema))}
    for seed in range(3):
        reply = model.invoke("Did it rain? Answer in JSON.", response_format=fmt, seed=seed)
        value = json.loads(reply.content)
        assert value["choice"] in ("yes", "no", "undetermined")
        assert reply.usage_metadata["input_tokens"] > 0


def test_a_side_name_the_model_starts_is_written_whole_with_keep_names():
    """The embedded model, greedy, goes on from "... and Azur" with "Azuria"; with the sides'
    names kept (wargraph.models.sampling.NameKeeper) it writes "Azuristan"."""
    from langchain_core.messages import HumanMessage, SystemMessage

    model = LlamaCppChat(model_path=str(embedded_model_path()), max_tokens=20, temperature=0.0)
    chat = [
        SystemMessage("You write one short sentence about the crisis."),
        HumanMessage(
            "> Azuristan and Crimsonia dispute the province of Zafaristan.\n\n"
            "What does Azuristan do?"
        ),
    ]
    start = "Azuristan sends troops, and Azur"
    plain = model.invoke(chat, answer_start=start).content
    kept = model.invoke(
        chat, answer_start=start, keep_names=["Azuristan", "Crimsonia", "Zafaristan"]
    ).content
    assert not plain.startswith(start + "istan"), plain  # what the model does by itself
    assert kept.startswith(start + "istan"), kept


def test_one_move_two_players_and_control_on_the_embedded_model(tmp_path):
    result = play(
        "azuristan_crimsonia",
        overrides=[
            "rounds=1",
            "questions=[{text: 'Did armed conflict occur?', options: [yes, no]}]",
        ],
        context=GameContext(model="embedded", max_tokens=120),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    assert result.finished
    events = result.record["events"]
    plans = [e for e in events if e["kind"] == "plan"]
    assert {p["author"] for p in plans} == {"azuristan", "crimsonia"}
    assert all(p["text"].strip() for p in plans)
    narration = [e for e in events if e["kind"] == "narration"]
    assert len(narration) == 1 and Adjudication.model_validate({"narrative": narration[0]["text"]})
    answer = [e for e in events if e["kind"] == "answer"][0]
    assert answer["data"]["choice"] in ("yes", "no", "undetermined")
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {c["role"] for c in calls} == {"azuristan", "crimsonia", "control"}
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls)
    assert result.record["usage"]["per_role"]["control"]["calls"] >= 2
    # most answers came from the model itself, not the fallback
    sources = [e["data"]["source"] for e in events if e.get("data", {}).get("source")]
    assert sources.count("model") >= len(sources) - 1
    assert (tmp_path / "out" / "transcript.md").read_text().count("## Round 1") == 1
