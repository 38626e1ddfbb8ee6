"""A server model's answer schema goes into the request as it is (issue 43): through the OpenAI
client's `parse`, every call walked the whole schema against its parameter types (a fifth of a
Diplomacy movement phase's CPU) to send the same JSON. The requests go to a real loopback
server, which records what arrived."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai._utils._transform as transform
import pytest

from wargraph.models.chat import chat_model, parse_model_ref, structured_kwargs

SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string", "enum": ["GLOBAL", "FRANCE"]}},
    "required": ["to"],
}

# (status, JSON body, extra headers) for one request
Answer = tuple[int, dict[str, Any], dict[str, str]]


class Arrived:
    """One request as the server read it."""

    def __init__(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.path, self.headers, self.body = path, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[Arrived], Answer]], tuple[str, list[Arrived]]]]:
    """`server(answer)` serves `answer(request)` on loopback: (base URL, requests arrived)."""
    servers: list[ThreadingHTTPServer] = []

    def serve(answer: Callable[[Arrived], Answer]) -> tuple[str, list[Arrived]]:
        arrived: list[Arrived] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = Arrived(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                arrived.append(request)
                status, data, extra = answer(request)
                if status == 200 and request.json().get("stream"):
                    return self._stream(data)
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, data: dict[str, Any]) -> None:
                """A completion asked with stream=true, as server-sent events."""
                message = data["choices"][0]["message"]
                chunks = [
                    {"role": "assistant", "content": message["content"]},
                    {},  # the last chunk: finish_reason only
                ]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for i, delta in enumerate(chunks):
                    done = "stop" if i == len(chunks) - 1 else None
                    choice = {"index": 0, "delta": delta, "finish_reason": done}
                    event = {**data, "object": "chat.completion.chunk", "choices": [choice]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1", arrived

    yield serve
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def _completion(content: str, **more: Any) -> dict[str, Any]:
    reply = {"role": "assistant", "content": content}
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
        **more,
    }


def test_a_servers_schema_is_sent_whole_without_the_clients_schema_walk(monkeypatch, server):
    url, arrived = server(lambda request: (200, _completion('{"to": "FRANCE"}'), {}))
    walked: list[object] = []
    real = transform._transform_recursive

    def counting(data, **kwargs):
        if isinstance(data, dict) and (data.get("schema") == SCHEMA or data.get("content") == "hi"):
            walked.append(data)
        return real(data, **kwargs)

    monkeypatch.setattr(transform, "_transform_recursive", counting)
    ref = parse_model_ref(f"openai:m@{url}")
    model = chat_model(ref, max_tokens=17, seed=11, timeout=5.0)
    reply = model.invoke("hi", **structured_kwargs(ref, SCHEMA))
    assert reply.content == '{"to": "FRANCE"}'
    sent = arrived[0].json()
    assert sent["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert sent["max_tokens"] == 17  # the cap under both names, as before
    assert walked == []


def _served_model(url: str, monkeypatch, seed: int = 12):
    """A server model of the loopback server `url`, counting the OpenAI client's `create`
    calls (none: a plain call is posted without it)."""
    import openai.resources.chat.completions.completions as completions

    created: list[object] = []
    real = completions.Completions.create

    def counting(self, *args, **kwargs):
        created.append(kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(completions.Completions, "create", counting)
    ref = parse_model_ref(f"openai:m@{url}")
    return ref, chat_model(ref, max_tokens=17, seed=seed, timeout=5.0), created


def test_a_servers_call_is_posted_without_the_openai_client(monkeypatch, server):
    """The body is the one the client sent (issue 43: the client's request building and typed
    reply were most of a seat's CPU before its request left)."""
    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    url, arrived = server(lambda request: (200, _completion('{"to": "GLOBAL"}', usage=usage), {}))
    ref, model, created = _served_model(url, monkeypatch)
    reply = model.invoke("hi", **structured_kwargs(ref, SCHEMA), seed=3)
    assert created == []
    assert reply.content == '{"to": "GLOBAL"}'
    assert reply.usage_metadata["input_tokens"] == 5
    assert arrived[0].path == "/v1/chat/completions"
    assert arrived[0].headers["authorization"].startswith("Bearer ")
    assert arrived[0].headers["content-type"] == "application/json"
    assert arrived[0].json() == {
        "model": "m",
        "stream": False,
        "seed": 3,
        "temperature": 0.7,
        "max_tokens": 17,
        "max_completion_tokens": 17,
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_object", "schema": SCHEMA},
    }


def test_a_rate_limit_fails_as_the_openai_clients_error(monkeypatch, server):
    """Posted without the client, a 429 is still its RateLimitError (as langchain-openai raises
    it), with the response whose Retry-After the decider waits for."""
    import openai

    from wargraph.models.ratelimit import retry_after_s

    url, _ = server(
        lambda request: (429, {"error": {"message": "slow down"}}, {"Retry-After": "2"})
    )
    ref, model, created = _served_model(url, monkeypatch)
    with pytest.raises(openai.RateLimitError) as caught:
        model.invoke("hi")
    assert retry_after_s(caught.value) == 2.0
    assert "slow down" in str(caught.value)
    assert created == []


def test_a_connection_refused_is_the_openai_clients_connection_error(monkeypatch):
    """Nothing listening: the OpenAI client's APIConnectionError, as the decider reports it."""
    import socket

    import openai

    with socket.socket() as sock:  # a port that was free a moment ago, and is closed again
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ref, model, created = _served_model(f"http://127.0.0.1:{port}/v1", monkeypatch)
    with pytest.raises(openai.APIConnectionError) as caught:
        model.invoke("hi")
    assert created == []
    # the seat's fault line says why, not only "Connection error."
    from wargraph.models.faults import fault_text

    said = fault_text(caught.value, ref)
    assert "Connection error" in said and "Connection refused" in said
    assert f"127.0.0.1:{port}" in said


def test_a_redirect_is_followed_and_a_reply_in_another_shape_fails_as_before(monkeypatch, server):
    """A server that moved (307 to its new address) is followed with the same body; a reply
    that is JSON but not a completion goes through the client's typed reply, as it did."""
    target, arrived_there = server(lambda request: (200, _completion("moved fine"), {}))
    origin, arrived_here = server(
        lambda request: (307, {}, {"Location": f"{target}/chat/completions"})
    )
    ref, model, created = _served_model(origin, monkeypatch)
    assert model.invoke("hi").content == "moved fine"
    assert arrived_here[0].body == arrived_there[0].body
    # the key stays with its origin: another port is another origin
    assert arrived_here[0].headers["authorization"].startswith("Bearer ")
    assert "authorization" not in arrived_there[0].headers
    assert created == []
    odd, _ = server(lambda request: (200, {"unexpected": True}, {}))
    _, model, _ = _served_model(odd, monkeypatch, seed=13)
    with pytest.raises(Exception) as caught:
        model.invoke("hi")
    assert not isinstance(caught.value, AssertionError)


def test_a_call_nothing_listens_to_skips_langchains_invoke_and_returns_the_same_message(
    monkeypatch, server
):
    """With no callback handler, a call goes straight to the model (issue 43: LangChain's
    `invoke` machinery was 0.27 ms of a call's 0.87); a handler gets the whole way, events and
    all; the two replies are the same message."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.chat_models import BaseChatModel

    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    url, _ = server(lambda request: (200, _completion("We hold.", usage=usage), {}))
    ref, model, _ = _served_model(url, monkeypatch)
    generated: list[object] = []
    real = BaseChatModel.generate

    def counting(self, *args, **kwargs):
        generated.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(BaseChatModel, "generate", counting)

    class Heard(BaseCallbackHandler):
        events: list[str] = []

        def on_chat_model_start(self, *args, **kwargs):
            self.events.append("start")

        def on_llm_end(self, *args, **kwargs):
            self.events.append("end")

    from langchain_core.messages import HumanMessage

    direct = model.invoke([HumanMessage("hi")])
    assert generated == []
    heard = Heard()
    whole = model.invoke([HumanMessage("hi")], config={"callbacks": [heard]})
    assert len(generated) == 1 and heard.events == ["start", "end"]
    assert direct.content == whole.content == "We hold."
    assert direct.usage_metadata == whole.usage_metadata
    assert direct.response_metadata == whole.response_metadata
    assert direct.id.startswith("lc_run--") and whole.id.startswith("lc_run--")
    from langchain_core.tracers.context import tracing_v2_enabled
    from langsmith import Client

    from wargraph.models.posting import unheard

    assert unheard(model, [HumanMessage("hi")], None, {})
    offline = Client(api_url="http://127.0.0.1:9", api_key="test")  # never reached: not invoked
    with tracing_v2_enabled(project_name="t", client=offline):  # a LangSmith tracer listens
        assert not unheard(model, [HumanMessage("hi")], None, {})


def test_studios_message_stream_still_sees_a_seats_call(monkeypatch, server):
    """A graph streamed with stream_mode="messages" (what Studio and the server's clients ask)
    gets the model's message; streamed by updates only, the call skips `invoke`'s machinery."""
    from typing import TypedDict

    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import HumanMessage
    from langgraph.graph import END, START, StateGraph

    url, _ = server(lambda request: (200, _completion("Hold the line."), {}))
    _, model, _ = _served_model(url, monkeypatch)
    generated: list[object] = []
    real = BaseChatModel.generate
    monkeypatch.setattr(
        BaseChatModel, "generate", lambda self, *a, **k: generated.append(a) or real(self, *a, **k)
    )

    class State(TypedDict):
        said: str

    def seat(state: State) -> State:
        return {"said": str(model.invoke([HumanMessage("your move?")]).content)}

    builder = StateGraph(State)
    builder.add_node("seat", seat)
    builder.add_edge(START, "seat")
    builder.add_edge("seat", END)
    graph = builder.compile()
    streamed = list(graph.stream({"said": ""}, stream_mode="messages"))
    assert "".join(str(m.content) for m, _ in streamed) == "Hold the line."
    assert len(generated) == 1
    updates = list(graph.stream({"said": ""}, stream_mode="updates"))
    assert updates == [{"seat": {"said": "Hold the line."}}]
    assert len(generated) == 1  # no second trip through LangChain's generate


def test_a_reply_that_is_not_json_is_its_text_decoded_by_its_charset(monkeypatch):
    """A server that answers in text (not labelled JSON, not JSON): `post_completion` hands
    langchain-openai the text, decoded by the reply's charset."""
    from wargraph.models.posting import plain_body, post_completion

    said = "Réponse: pas de JSON"

    class Text(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            raw = said.encode("latin-1")
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=latin-1")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Text)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        _, model, _ = _served_model(f"http://127.0.0.1:{httpd.server_address[1]}/v1", monkeypatch)
        from langchain_core.messages import HumanMessage

        body = plain_body(model._get_request_payload([HumanMessage("hi")]))
        assert post_completion(model, body) == said
    finally:
        httpd.shutdown()
        httpd.server_close()
