"""Deciders: parsing and validating answers, the scripted decider, re-ask and fallback."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

import wargraph.nodes.schemas  # noqa: F401
from wargraph.nodes.schemas import (
    QUOTE_CHARS,
    Plan,
    choice_schema,
    messages_schema,
    record_quotes,
)
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import LLMDecider, decider_for, parse_answer
from wargraph.seats.schemas import flat_json_schema, grammar_schema, register_schema, schema_for
from wargraph.seats.scripted import ScriptedDecider


def ask(schema="plan", **kw):
    base = {
        "id": "r1.order.plan.a",
        "role": "a",
        "phase": "order",
        "round": 1,
        "task": "plan",
        "system": "SYSTEM",
        "context": "> context",
        "question": "What do you do?",
        "schema": schema,
        "fallback": {"plan": "FALLBACK"},
    }
    base.update(kw)
    return base


@pytest.mark.parametrize(
    "raw",
    ['{"plan": "go"}', '```json\n{"plan": "go"}\n```', 'Sure! {"plan": "go"} Hope that helps.'],
)
def test_parse_answer_accepts_json_in_common_wrappings(raw):
    assert parse_answer(raw, Plan).plan == "go"


def test_parse_answer_plain_text_for_single_text_field():
    assert parse_answer("We open talks.", Plan).plan == "We open talks."


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ('{"plan": "go"', None),  # truncated JSON: one text field -> taken as text, still valid
        ("[1, 2]", "JSON object"),
        ('{"plan": 3}', "did not match"),
        ('{"other": "x"}', "did not match"),
    ],
)
def test_parse_answer_rejects_bad_output_with_reason(raw, reason):
    if reason is None:
        assert parse_answer(raw, Plan).plan
        return
    with pytest.raises(ValueError, match=reason):
        parse_answer(raw, Plan)


def test_very_long_text_is_cut_to_the_field_limit():
    raw = json.dumps({"plan": "x" * 10_000})
    assert len(parse_answer(raw, Plan).plan) == Plan.model_fields["plan"].metadata[-1].max_length


def test_choice_schema_maps_to_options_or_undetermined():
    model = choice_schema({"options": ["yes", "no"]})
    assert parse_answer('{"choice": "undetermined"}', model).choice == "undetermined"
    with pytest.raises(ValueError):
        parse_answer('{"choice": "maybe"}', model)


def test_the_evidence_of_a_choice_is_a_line_of_the_record():
    # SmolLM2 wrote the question itself as its evidence ("the final status of Zafaristan")
    record = (
        "# Round 1\n> Azuristan mobilises.\n> " + "word " * 60 + "\nplain\n> Azuristan mobilises."
    )
    quotes = record_quotes(record)
    assert quotes[0] == "Azuristan mobilises." and len(quotes) == 2  # each once
    assert quotes[1].endswith(" ...") and len(quotes[1]) <= QUOTE_CHARS + 4  # cut at a word
    model = choice_schema({"options": ["yes", "no"], "quotes": quotes})
    enum = flat_json_schema(model)["properties"]["evidence"]["enum"]
    assert enum == ["", *quotes]
    answer = parse_answer('{"choice": "yes", "evidence": "Azuristan mobilises."}', model)
    assert answer.evidence == "Azuristan mobilises."
    assert parse_answer('{"choice": "yes"}', model).evidence == ""
    with pytest.raises(ValueError):
        parse_answer('{"choice": "yes", "evidence": "the final status of Zafaristan"}', model)


def test_grammar_schema_is_flat_and_has_no_lengths():
    schema = grammar_schema(flat_json_schema(messages_schema({"recipients": ["b"], "limit": 2})))
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and "maxLength" not in text
    assert schema["properties"]["messages"]["items"]["properties"]["to"]["enum"] == [
        "b",
        "everyone",
    ]


def test_scripted_decider_is_deterministic_and_valid():
    a = ask()
    d1 = ScriptedDecider(7).decide(a, Plan)
    d2 = ScriptedDecider(7).decide(a, Plan)
    d3 = ScriptedDecider(8).decide(a, Plan)
    assert d1 == d2 and d1["source"] == "scripted"
    assert d1["value"] != d3["value"]
    m = messages_schema({"recipients": ["b", "c"], "limit": 2})
    for seed in range(20):
        v = ScriptedDecider(seed).decide(ask("messages", schema_args={"recipients": ["b", "c"]}), m)
        assert m.model_validate(v["value"])


def fake(*replies):
    return GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))


def test_llm_decider_reasks_once_with_the_error_then_succeeds(tmp_path):
    trace = tmp_path / "t.jsonl"
    decider = LLMDecider(  # the small profile peels JSON off prose, and says so when it cannot
        {"model": "openai:fake@http://x", "trace_path": str(trace), "profile": "small"},
        model=fake("[]", '{"plan": "ok"}'),
    )
    out = decider.decide(ask(), Plan)
    assert out == {"value": {"plan": "ok"}, "source": "model"}
    calls = [c for c in read_trace(trace) if c["event"] == "call"]
    assert [c["attempt"] for c in calls] == [1, 2]
    # the re-ask carries the reason back to the model (a plan is asked as plain text)
    assert "JSON, not plain text" in calls[1]["messages"][-1]["content"]


@pytest.mark.parametrize("bad", ["garbage", "", '{"plan": 5', '{"wrong": 1}', "[" * 50])
def test_llm_decider_falls_back_with_reason_in_trace(tmp_path, bad):
    trace = tmp_path / "t.jsonl"
    # two unusable answers (the first and the re-ask) -> the documented fallback
    decider = LLMDecider(
        {"model": "openai:fake@http://x", "trace_path": str(trace)},
        model=fake(bad if bad else " ", '{"wrong": 2}'),
    )
    model = choice_schema({"options": ["yes", "no"]})
    out = decider.decide(
        ask(
            "choice",
            schema_args={"options": ["yes", "no"]},
            fallback={"choice": "undetermined", "evidence": ""},
        ),
        model,
    )
    assert out["source"] == "fallback"
    assert out["value"] == {"choice": "undetermined", "evidence": ""}
    entries = read_trace(trace)
    assert entries[-1]["event"] == "fallback" and entries[-1]["reason"]


def test_decider_for_kinds():
    assert isinstance(decider_for({"kind": "scripted"}), ScriptedDecider)
    assert isinstance(decider_for({"kind": "ai", "model": "scripted"}), ScriptedDecider)
    assert type(decider_for({"kind": "human"})).__name__ == "HumanDecider"
    assert isinstance(decider_for({"kind": "ai", "model": "embedded"}), LLMDecider)


def test_unknown_schema_is_a_clear_error():
    with pytest.raises(KeyError, match="no answer schema registered"):
        schema_for(ask("nope"))


def test_registering_a_class_that_is_not_a_pydantic_model_is_a_clear_error():
    class NotAModel:
        pass

    with pytest.raises(TypeError, match="NotAModel is not a pydantic model"):
        register_schema("not_a_model", NotAModel)
    with pytest.raises(KeyError, match="no answer schema registered"):
        schema_for(ask("not_a_model"))  # nothing half-registered


def test_answer_models_and_schemas_are_made_once_per_schema_and_arguments():
    import wargraph.graphs.diplomacy.schemas  # noqa: F401  (registers the Diplomacy schemas)
    from wargraph.seats.schemas import flat_json_schema, schema_for

    def ask(recipients):
        return {"schema": "diplomacy_messages", "schema_args": {"recipients": recipients}}

    a, b = schema_for(ask(["FRANCE", "GLOBAL"])), schema_for(ask(["FRANCE", "GLOBAL"]))
    other = schema_for(ask(["ENGLAND"]))
    assert a is b and a is not other  # the same arguments, the same model
    schema = flat_json_schema(a)
    assert schema is flat_json_schema(b)
    assert "$defs" not in schema and schema == flat_json_schema.__wrapped__(a)
    to = schema["properties"]["messages"]["items"]["properties"]["to"]
    assert set(to["enum"]) == {"FRANCE", "GLOBAL"}


def test_a_post_game_question_offers_the_records_lines_as_evidence(tmp_path):
    from wargraph.kernel.context import GameContext
    from wargraph.runs.records import load_record
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    scripted = GameContext(model="scripted")
    play(
        "azuristan_crimsonia",
        overrides={"rounds": 1},
        context=scripted,
        db=None,
        out_dir=tmp_path / "g",
    )
    record = load_record(tmp_path / "g" / "record.json")
    asked = [c for c in read_trace(tmp_path / "g" / "trace.jsonl") if c.get("task") == "question"]
    prompt = asked[0]["messages"][-1]["content"]
    assert "line of the record that supports your answer" in prompt
    answers = [e for e in record["events"] if e["kind"] == "answer" and e["data"].get("choice")]
    assert answers and all(
        e["data"]["evidence"] == "" or e["data"]["evidence"] in prompt for e in answers
    )
