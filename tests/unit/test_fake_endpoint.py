"""The benchmark's fake OpenAI-compatible endpoint answers what wargraph asks: JSON valid for the
schema of `response_format`, prose when no format is asked, the same answer to the same request."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from benchmarks.fake_endpoint import PROSE, answer_for
from wargraph.models.chat import parse_model_ref, structured_kwargs
from wargraph.seats.schemas import flat_json_schema, grammar_schema


class Order(BaseModel):
    unit: str
    action: Literal["hold", "move", "support"]


class Orders(BaseModel):
    orders: list[Order] = Field(min_length=1, max_length=3)
    escalation: int = Field(ge=0, le=5)
    public: bool


def request(messages: list[dict], **kwargs) -> dict:
    return {"model": "fake", "messages": messages, **kwargs}


def test_a_schema_asked_as_wargraph_asks_it_gets_valid_json():
    ref = parse_model_ref("openai:fake@http://127.0.0.1:1/v1")
    fmt = structured_kwargs(ref, grammar_schema(flat_json_schema(Orders)))
    for turn in range(5):
        answer = answer_for(request([{"role": "user", "content": f"turn {turn}"}], **fmt))
        Orders.model_validate(json.loads(answer))  # raises if the answer breaks the schema


def test_openai_json_schema_format_is_answered_too():
    ref = parse_model_ref("openai:gpt-4o-mini")  # OpenAI's own API: `json_schema`
    fmt = structured_kwargs(ref, grammar_schema(flat_json_schema(Orders)))
    assert fmt["response_format"]["type"] == "json_schema"
    body = request([{"role": "user", "content": "x"}], **fmt)
    assert Orders.model_validate(json.loads(answer_for(body)))


def test_plain_text_questions_get_prose_and_answers_are_deterministic():
    plain = request([{"role": "user", "content": "Write your plan."}], stop=["\n\n"])
    assert answer_for(plain) == PROSE and not PROSE.lstrip().startswith("{")
    fmt = {"response_format": {"type": "json_object", "schema": flat_json_schema(Orders)}}
    one = request([{"role": "user", "content": "a"}], **fmt)
    other = request([{"role": "user", "content": "b"}], **fmt)
    assert answer_for(one) == answer_for(dict(one))
    assert {answer_for(request([{"role": "user", "content": c}], **fmt)) for c in "abcdef"} != {
        answer_for(one)
    }  # the answer follows the request, not a constant
    assert answer_for(other)
