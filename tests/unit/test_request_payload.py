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


def _served_model(answer, monkeypatch):
    """A server model on a mock transport, counting the OpenAI client's `create` calls."""
    import openai.resources.chat.completions.completions as completions

    created: list[object] = []
    real = completions.Completions.create

    def counting(self, *args, **kwargs):
        created.append(kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(completions.Completions, "create", counting)
    ref = parse_model_ref("openai:m@http://127.0.0.1:9/v1")
    model = chat_model(ref, max_tokens=17, seed=12, timeout=5.0)
    model.root_client._client = httpx.Client(transport=httpx.MockTransport(answer))
    return ref, model, created


def test_a_servers_call_is_posted_without_the_openai_client(monkeypatch):
    """The body is the one the client sent (issue 43: the client's request building and typed
    reply were most of a seat's CPU before its request left)."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        reply = {"role": "assistant", "content": '{"to": "GLOBAL"}'}
        return httpx.Response(
            200,
            json={
                "id": "y",
                "model": "m",
                "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
            },
        )

    ref, model, created = _served_model(answer, monkeypatch)
    reply = model.invoke("hi", **structured_kwargs(ref, SCHEMA), seed=3)
    assert created == []
    assert reply.content == '{"to": "GLOBAL"}'
    assert reply.usage_metadata["input_tokens"] == 5
    assert str(sent[0].url) == "http://127.0.0.1:9/v1/chat/completions"
    assert sent[0].headers["authorization"].startswith("Bearer ")
    body = json.loads(sent[0].content)
    assert body == {
        "model": "m",
        "stream": False,
        "seed": 3,
        "temperature": 0.7,
        "max_tokens": 17,
        "max_completion_tokens": 17,
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_object", "schema": SCHEMA},
    }


def test_a_rate_limit_fails_as_the_openai_clients_error(monkeypatch):
    """Posted without the client, a 429 is still its RateLimitError (as langchain-openai raises
    it), with the response whose Retry-After the decider waits for."""
    import openai

    from wargraph.models.ratelimit import retry_after_s

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            429, json={"error": {"message": "slow down"}}, headers={"retry-after": "2"}
        )

    ref, model, created = _served_model(answer, monkeypatch)
    try:
        model.invoke("hi")
    except openai.RateLimitError as err:
        assert retry_after_s(err) == 2.0
        assert "slow down" in str(err)
    else:
        raise AssertionError("a 429 must raise")
    assert created == []
