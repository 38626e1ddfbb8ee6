"""A server model's answer schema goes into the request as it is (issue 43): through the OpenAI
client's `parse`, every call walked the whole schema against its parameter types (a fifth of a
Diplomacy movement phase's CPU) to send the same JSON."""

from __future__ import annotations

import json

import httpx
import openai._utils._transform as transform

from wargraph.models.chat import chat_model, parse_model_ref, structured_kwargs

SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string", "enum": ["GLOBAL", "FRANCE"]}},
    "required": ["to"],
}


def test_a_servers_schema_is_sent_whole_without_the_clients_schema_walk(monkeypatch):
    sent: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        reply = {"role": "assistant", "content": '{"to": "FRANCE"}'}
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
            },
        )

    walked: list[object] = []
    real = transform._transform_recursive

    def counting(data, **kwargs):
        if isinstance(data, dict) and (data.get("schema") == SCHEMA or data.get("content") == "hi"):
            walked.append(data)
        return real(data, **kwargs)

    monkeypatch.setattr(transform, "_transform_recursive", counting)
    ref = parse_model_ref("openai:m@http://127.0.0.1:9/v1")
    model = chat_model(ref, max_tokens=17, seed=11, timeout=5.0)
    model.root_client._client = httpx.Client(transport=httpx.MockTransport(answer))
    reply = model.invoke("hi", **structured_kwargs(ref, SCHEMA))
    assert reply.content == '{"to": "FRANCE"}'
    assert sent[0]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert sent[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert sent[0]["max_tokens"] == 17  # the cap under both names, as before
    assert walked == []
