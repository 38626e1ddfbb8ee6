"""One-text-field answers are asked as prose (no grammar) and put into the field in code; a reply
that is not usable for its schema is never recorded as the model's answer: it is re-asked with the
reason, then the documented fallback, and the trace says why."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from tests.unit.test_deciders import ask
from wargraph.models.chat import ModelRef, parse_model_ref
from wargraph.models.profiles import plain_text_kwargs
from wargraph.nodes.schemas import Adjudication, Plan, choice_schema
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import LLMDecider, parse_answer, user_prompt
from wargraph.seats.plaintext import text_field, unwrap_text
from wargraph.seats.schemas import flat_json_schema

ENDPOINT = "openai:fake@http://127.0.0.1:9"


class Recording(GenericFakeChatModel):
    """Scripted replies; keeps the keyword arguments of every call (what the backend was asked)."""

    calls: list[dict[str, Any]] = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append({"stop": stop, **kwargs})
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def recording(*replies: str, finish: str = "stop") -> Recording:
    return Recording(
        messages=iter(AIMessage(r, response_metadata={"finish_reason": finish}) for r in replies),
        calls=[],
    )


def decide(
    schema_cls, the_ask, *replies: str, tmp_path, finish: str = "stop", profile: str = "small"
):
    """The small profile's repairs are what most tests here check (wargraph.models.profiles)."""
    trace = tmp_path / "t.jsonl"
    model = recording(*replies, finish=finish)
    seat = {"model": ENDPOINT, "trace_path": str(trace), "retries": 0, "profile": profile}
    out = LLMDecider(seat, model=model).decide(the_ask, schema_cls)
    return out, read_trace(trace), model.calls


# --- unwrapping ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "We open talks at the border.",
        '{"plan": "We open talks at the border."}',
        '{ "plan": "We open talks at the border.',  # cut off before its closing
        '```json\n{"plan": "We open talks at the border."}\n```',
        '{"plan": "{\\"plan\\": \\"We open talks at the border.\\"}"}',  # nested
        '"plan": "We open talks at the border."',
        "Plan: We open talks at the border.",
        ']}We open talks at the border."}',
        '{"steps": "We open talks at the border."}',  # another key name, one text
    ],
)
def test_json_dressing_is_peeled_off_prose(raw):
    assert unwrap_text(raw, "plan") == "We open talks at the border."


def test_escapes_inside_a_cut_json_string_are_decoded():
    assert unwrap_text('{"plan": "Line one.\\nHe said \\"no\\".', "plan") == (
        'Line one.\nHe said "no".'
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{ "plan": "{[', "no text"),
        ("", "no text"),
        ("[1, 2]", "JSON, not plain text"),
        ('{"plan": 3, "why": 4}', "JSON, not plain text"),
        ('{"plan": "We go", "reason": "because', "still held JSON"),
    ],
)
def test_unusable_prose_is_refused_with_a_reason(raw, reason):
    with pytest.raises(ValueError, match=reason):
        unwrap_text(raw, "plan")


def test_one_text_field_schemas_are_recognised():
    assert text_field(Plan) == "plan" and text_field(Adjudication) == "narrative"
    assert text_field(choice_schema({"options": ["yes"]})) is None


def test_a_person_s_broken_json_is_not_stored_verbatim():
    assert parse_answer('{"plan": "We hold.', Plan).plan == "We hold."
    with pytest.raises(ValueError):
        parse_answer('{ "plan": "{[', Plan)


# --- how the backend is asked ---------------------------------------------------------------------


def test_prose_is_asked_without_a_grammar_and_with_a_cap(tmp_path):
    out, trace, calls = decide(Plan, ask(), "We open talks.", tmp_path=tmp_path)
    assert out == {"value": {"plan": "We open talks."}, "source": "model"}
    assert "response_format" not in calls[0] and calls[0]["stop"]
    call = next(e for e in trace if e["event"] == "call")
    assert call["mode"] == "text"
    # no closing format line (small models repeat it as their answer): the question ends it
    assert "plain text" not in call["messages"][-1]["content"]
    assert "JSON" not in call["messages"][-1]["content"]


def test_structured_answers_keep_their_grammar(tmp_path):
    schema = choice_schema({"options": ["yes", "no"]})
    the_ask = ask("choice", schema_args={"options": ["yes", "no"]}, fallback={"choice": "no"})
    out, trace, calls = decide(schema, the_ask, '{"choice": "yes"}', tmp_path=tmp_path)
    assert out["source"] == "model" and out["value"]["choice"] == "yes"
    assert calls[0]["response_format"]["schema"]["properties"]["choice"]["enum"]
    assert next(e for e in trace if e["event"] == "call")["mode"] == "json"


def test_embedded_prose_gets_a_length_cap_and_a_repeat_penalty():
    local = plain_text_kwargs(ModelRef("embedded"), 120)
    assert local["max_tokens"] == 120 and local["repeat_penalty"] > 1.0 and local["stop"]
    remote = plain_text_kwargs(parse_model_ref("openai:gpt-4o-mini"), 120)
    assert "response_format" not in remote and "max_tokens" not in remote


def test_a_reply_cut_by_the_length_cap_ends_on_a_whole_sentence(tmp_path):
    out, _, _ = decide(
        Plan, ask(), "We open talks. Then we move the reserv", tmp_path=tmp_path, finish="length"
    )
    assert out["value"]["plan"] == "We open talks."


def test_the_prompt_asks_for_prose_only_for_one_text_field():
    prose = user_prompt(ask(), "", flat_json_schema(Plan))
    structured = user_prompt(ask(), "", flat_json_schema(choice_schema({"options": ["a"]})))
    assert prose.endswith(ask()["question"]) and "JSON" not in prose  # the question ends it
    assert "one JSON object with the fields: choice, evidence" in structured


# --- unusable replies: re-asked, then the fallback, never recorded as the model's answer ----------


def test_an_unusable_reply_twice_ends_in_the_fallback_with_reasons(tmp_path):
    out, trace, _ = decide(Plan, ask(), '{ "plan": "{[', '{ "plan": "{[', tmp_path=tmp_path)
    assert out["source"] == "fallback" and out["value"] == {"plan": "FALLBACK"}
    events = [e["event"] for e in trace]
    assert events == ["call", "rejected", "call", "rejected", "fallback"]
    rejected = [e for e in trace if e["event"] == "rejected"]
    assert all("no text" in e["reason"] and e["output"] == '{ "plan": "{[' for e in rejected)
    assert trace[-1]["cause"] == "unusable" and "no text" in trace[-1]["reason"]
    # the re-ask carried the reason back to the model, with the plain-text instruction
    reask = trace[2]["messages"][-1]["content"]
    assert "not usable" in reask and "no text" in reask and "plain sentences" in reask


def test_an_unusable_reply_then_a_good_one_uses_the_good_one(tmp_path):
    out, trace, _ = decide(Plan, ask(), "[]", "We hold the bridge.", tmp_path=tmp_path)
    assert out == {"value": {"plan": "We hold the bridge."}, "source": "model"}
    assert [e["event"] for e in trace] == ["call", "rejected", "call"]
    assert "JSON, not plain text" in trace[1]["reason"]


def test_invalid_json_for_a_structured_schema_is_re_asked_then_falls_back(tmp_path):
    schema = choice_schema({"options": ["yes", "no"]})
    fallback = {"choice": "undetermined", "evidence": ""}
    the_ask = ask("choice", schema_args={"options": ["yes", "no"]}, fallback=fallback)
    out, trace, _ = decide(
        schema, the_ask, '{"choice": "ye', '{"choice": "maybe"}', tmp_path=tmp_path
    )
    assert out["source"] == "fallback" and out["value"] == fallback
    assert [e["event"] for e in trace] == ["call", "rejected", "call", "rejected", "fallback"]
    assert "not valid JSON" in trace[1]["reason"] and "did not match" in trace[3]["reason"]
    assert trace[-1]["cause"] == "unusable"


def test_an_answer_that_is_only_its_given_first_words_is_asked_again(tmp_path):
    # SmolLM2 stopped right after "In move 1," (the narration's given start): an empty narration
    trace_path = tmp_path / "t.jsonl"
    model = recording("In move 1,", "In move 1, the border stays closed.")
    seat = {"model": "gguf:/models/any.gguf", "trace_path": str(trace_path), "retries": 0}
    the_ask = ask(answer_start="In move 1,")
    out = LLMDecider(seat, model=model).decide(the_ask, Plan)
    assert out == {"value": {"plan": "In move 1, the border stays closed."}, "source": "model"}
    trace = read_trace(trace_path)
    assert [e["event"] for e in trace] == ["call", "rejected", "call"]
    assert "stops after its first words" in trace[1]["reason"]
    assert model.calls[0]["answer_start"] == "In move 1,"


# --- instructions restated in an answer ---------------------------------------------------------

PLAN_QUESTION = (
    "Move 1 of 2. Write the plan of Azuristan for the next year in two to four sentences: what "
    "Azuristan does, who acts, and what for."
)


def test_a_sentence_restating_the_question_is_left_out_of_the_recorded_plan(tmp_path):
    # seen on SmolLM2: a plan, then the question's instruction as its second line
    plan = "Azuristan moves two brigades to the border to deter a raid."
    restated = "In one year: In two to four sentences (no more than three) describe it."
    the_ask = ask(question=PLAN_QUESTION)
    out, trace, _ = decide(Plan, the_ask, plan + "\n" + restated, tmp_path=tmp_path)
    assert out["value"] == {"plan": plan} and out["source"] == "model"
    assert "1 sentence(s) restating the question left out" in out["note"]
    corrected = next(e for e in trace if e["event"] == "corrected")
    assert corrected["restated"] == [restated] and corrected["corrections"] == []
    assert next(e for e in trace if e["event"] == "call")["output"].endswith(restated)  # raw kept


def test_a_plan_that_only_restates_the_question_is_asked_again(tmp_path):
    echo = "The plan of Azuristan for the next year: what Azuristan does, who acts, and what for."
    good = "Azuristan opens talks with Crimsonia over the dam."
    out, trace, _ = decide(Plan, ask(question=PLAN_QUESTION), echo, good, tmp_path=tmp_path)
    assert out["value"] == {"plan": good}
    assert [e["event"] for e in trace] == ["call", "rejected", "call"]
    assert "only restates its instructions" in trace[1]["reason"]


def test_a_plan_using_some_of_the_question_s_words_is_kept_whole(tmp_path):
    plan = (
        "In the next year Azuristan does what it promised: its envoys act for peace.\n"
        "Crimsonia is told what the brigades are for."
    )
    out, trace, _ = decide(Plan, ask(question=PLAN_QUESTION), plan, tmp_path=tmp_path)
    assert out == {"value": {"plan": plan}, "source": "model"}
    assert [e["event"] for e in trace] == ["call"]


def test_json_free_text_loses_restated_sentences_and_enum_fields_stay(tmp_path):
    # a Diplomacy diary whose summary copied the question's field description
    from wargraph.graphs.diplomacy.schemas import diary_schema

    question = (
        "You are FRANCE. Write your private diary entry for S1901M (nobody else reads it). "
        "summary: what was said and agreed in this phase's messages above, one or two sentences. "
        "intent: what you will do this phase. goals: your goals now."
    )
    schema = diary_schema({"chars": 240, "others": ["ENGLAND"]})
    raw = (
        '{"summary": "England offered the Channel. What was said and agreed in this phase\'s '
        'messages above.", "intent": "Move to Burgundy.", "goals": "", "ENGLAND": "Friendly"}'
    )
    fallback = {"summary": "-", "intent": "", "goals": "", "ENGLAND": "Neutral"}
    the_ask = ask("diplomacy_diary", question=question, fallback=fallback)
    out, trace, _ = decide(schema, the_ask, raw, tmp_path=tmp_path)
    assert out["value"] == {
        "summary": "England offered the Channel.",
        "intent": "Move to Burgundy.",
        "goals": "",
        "ENGLAND": "Friendly",
    }
    only_echo = raw.replace("England offered the Channel. ", "")
    out, trace, _ = decide(schema, the_ask, only_echo, only_echo, tmp_path=tmp_path / "b")
    assert out["source"] == "fallback"  # the summary had nothing left: re-asked, then fallback
    assert "once the instructions restated in it were left out" in trace[1]["reason"]
