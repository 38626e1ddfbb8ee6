"""How a chat completion reaches an OpenAI-compatible server given by URL: the request body as
the OpenAI client would send it, posted as JSON on a pooled keep-alive connection (urllib3),
with one deadline for the whole exchange; failures raised as the OpenAI client's exceptions.

Why not the OpenAI client and its httpx client: for the same bytes on the wire, the client's
request building and typed reply were about two thirds of a call's CPU, and httpx's request
and response objects, connection pool and HTTP/1.1 state machine half of what was left
(0.67 ms of CPU a call against urllib3's 0.34 ms, the same request to a loopback stub). A
Diplomacy movement phase makes ~25 calls, each paid before the seat's request leaves
(issue 43). A payload holding anything the client must shape still goes its way
(`plain_body`, `plain_client`).

LangChain's `invoke` around a call (its callback manager, the run's events, the cache and
rate-limiter checks, the result's wrapping) cost another 0.27 ms a call when nothing listens:
`unheard` tells when a call can go straight to the model's `_generate` with nothing any
listener, cache, limiter or stream would have seen (no callback handler once LangChain's own
configuration has looked at the run's callbacks, the model's, LangSmith tracing and verbose
mode). Studio's message stream and LangSmith tracing are handlers: calls they watch take
`invoke`'s whole way."""

from __future__ import annotations

import functools
import json
import threading
import time
import uuid
from typing import Any, cast

import httpx
import urllib3
from langchain_core.caches import BaseCache
from langchain_core.callbacks import CallbackManager
from langchain_core.globals import get_llm_cache
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig, ensure_config

# What a payload may hold to be posted as it is: JSON values the OpenAI client would send
# unchanged (it leaves out only its "not given" markers, which a payload never holds).
_PLAIN_KEYS = frozenset(
    {
        "model",
        "messages",
        "stream",
        "seed",
        "temperature",
        "top_p",
        "n",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "presence_penalty",
        "frequency_penalty",
        "extra_body",
    }
)

MAX_REDIRECTS = 20  # httpx's own limit, which the OpenAI client's calls had
_CHUNK = 65536
DEFAULT_TOTAL_S = 600.0  # the OpenAI client's own default timeout


def capped_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """langchain-openai sends `max_tokens=` as `max_completion_tokens` only; llama.cpp's server
    (and others) read only `max_tokens` and run uncapped without it. Both names carry the cap."""
    cap = payload.get("max_completion_tokens", payload.get("max_tokens"))
    if cap is not None:
        payload["max_tokens"] = payload["max_completion_tokens"] = cap
    return payload


def schema_as_sent(payload: dict[str, Any]) -> dict[str, Any]:
    """A server's `response_format` (a JSON schema for its grammar) and plain text messages go
    into the body as they are, through `extra_body`. Given as parameters, langchain-openai asks
    through the OpenAI client's `parse`, and the client walks them against its parameter types
    on every call (each message against every message type) to send the same JSON: about half
    of a call's CPU, paid by every seat of every wave. Messages with anything but text (parts,
    tool calls) keep the client's way."""
    extra: dict[str, Any] = {}
    fmt = payload.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        extra["response_format"] = payload.pop("response_format")
    messages = payload.get("messages")
    if isinstance(messages, list) and all(_plain_message(m) for m in messages):
        extra["messages"] = messages
        payload["messages"] = []  # the client's required argument; the body takes extra's
    if extra:
        payload["extra_body"] = {**(payload.get("extra_body") or {}), **extra}
    return payload


def _plain_message(message: Any) -> bool:
    return isinstance(message, dict) and all(isinstance(v, str) for v in message.values())


def plain_client(model: Any) -> bool:
    """A server model whose client adds nothing of its own to a request: no headers, query,
    organisation or project beyond the key, the response headers not asked for; and the
    installed openai and langchain-openai still have the internals `post_completion` uses
    (else every call goes through the OpenAI client, as before)."""
    return _internals_present() and not (
        model.default_headers
        or model.default_query
        or model.openai_organization
        or getattr(model, "openai_project", None)
        or model.include_response_headers
    )


@functools.cache
def _internals_present() -> bool:
    import openai
    from langchain_openai.chat_models import base as lc_openai

    client = openai.OpenAI
    return all(
        hasattr(owner, name)
        for owner, name in (
            (client, "_make_status_error_from_response"),
            (client, "_process_response_data"),
            (client, "user_agent"),
            (lc_openai, "_handle_openai_bad_request"),
            (lc_openai, "_handle_openai_api_error"),
        )
    )


def plain_body(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON body the OpenAI client would send for `payload` (`extra_body` merged over the
    parameters, as it does), or None when the payload holds anything it would reshape."""
    if payload.get("stream") or not set(payload) <= _PLAIN_KEYS:
        return None
    extra = payload.get("extra_body") or {}
    if not isinstance(extra, dict):
        return None
    return {**{k: v for k, v in payload.items() if k != "extra_body"}, **extra}


class _Reply:
    """A server's answer, read whole: status, headers, body."""

    __slots__ = ("status", "headers", "content")

    def __init__(self, status: int, headers: Any, content: bytes) -> None:
        self.status, self.headers, self.content = status, headers, content

    def as_httpx(self, request: Any = None) -> httpx.Response:
        """The answer as the OpenAI client's error and reply builders take it (and its text
        decoded as httpx decodes it)."""
        return httpx.Response(
            self.status, headers=list(self.headers.items()), content=self.content, request=request
        )


_POOL: urllib3.PoolManager | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> urllib3.PoolManager:
    """One connection pool per process for every server model: a connection per request in
    flight is kept alive for the next (up to 100 a server; more are opened and closed). Its TLS
    settings are httpx's, as the OpenAI client had them (certifi's roots, or SSL_CERT_FILE /
    SSL_CERT_DIR), made once and only for a server reached over https."""
    global _POOL
    if _POOL is not None:  # every call asks: no lock once it is made
        return _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _TlsOnDemand(num_pools=64, maxsize=100, block=False)
        return _POOL


class _TlsOnDemand(urllib3.PoolManager):
    """A PoolManager whose TLS context is made on the first https server (~10-40 ms of CPU)."""

    _tls: Any = None

    def connection_from_pool_key(self, pool_key: Any, request_context: Any = None) -> Any:
        if request_context is not None and request_context.get("scheme") == "https":
            if self._tls is None:
                self._tls = httpx.create_ssl_context()
            request_context.setdefault("ssl_context", self._tls)
        return super().connection_from_pool_key(pool_key, request_context)


def post_json(url: str, body: bytes, headers: dict[str, str], total: float) -> _Reply:
    """POST `body` to `url` and read the answer whole within `total` seconds in all: a server
    that trickles its answer a byte at a time (each read within the per-read timeout) cannot
    hold the caller longer. Raises TimeoutError past the deadline or on a read or connect
    timeout; urllib3's HTTPError or OSError when the server cannot be reached or the connection
    breaks."""
    deadline = time.monotonic() + total
    retries = urllib3.Retry(
        total=None, connect=0, read=0, status=0, other=0, redirect=MAX_REDIRECTS
    )
    try:
        response = _pool().urlopen(
            "POST",
            url,
            body=body,
            headers=headers,
            timeout=urllib3.Timeout(connect=total, read=total),
            retries=retries,
            preload_content=False,
        )
    except urllib3.exceptions.MaxRetryError as err:
        # what failed, with its own causes (a refused port, a certificate), not the retry wrapper
        raise _unwrapped(err.reason if isinstance(err.reason, BaseException) else err) from None
    except urllib3.exceptions.HTTPError as err:
        raise _unwrapped(err) from None
    try:
        chunks: list[bytes] = []
        while True:
            try:
                chunk = response.read1(_CHUNK)
            except urllib3.exceptions.HTTPError as err:
                raise _unwrapped(err) from None
            if not chunk:
                break
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise TimeoutError(f"the answer took longer than {total:g} s in all")
        return _Reply(response.status, response.headers, b"".join(chunks))
    except BaseException:
        response.close()  # a part-read answer: its connection is not used again
        raise
    finally:
        response.release_conn()


def _unwrapped(err: BaseException) -> BaseException:
    """A timeout as TimeoutError; anything else as urllib3 raised it (a refused connection is a
    NewConnectionError, which urllib3 derives from its connect timeout: not a timeout here)."""
    timed_out = isinstance(err, urllib3.exceptions.TimeoutError)
    if timed_out and not isinstance(err, urllib3.exceptions.NewConnectionError):
        return TimeoutError(str(err))
    return err


def post_completion(model: Any, body: dict[str, Any]) -> Any:
    """One chat completion of a server model, posted without the OpenAI client (module
    docstring). The answer is the reply's JSON (a reply not labelled JSON and not JSON: its
    text, which langchain-openai names). A failure is the OpenAI client's exception for it
    (status, timeout, connection), as LangChain raises it."""
    import openai
    from langchain_openai.chat_models import base as lc_openai

    root = model.root_client
    key = model.openai_api_key.get_secret_value() if model.openai_api_key else ""
    url = f"{str(root.base_url).rstrip('/')}/chat/completions"
    timeout = model.request_timeout  # a server model's call timeout (`chat_model`'s)
    total = float(timeout) if isinstance(timeout, int | float) else DEFAULT_TOTAL_S
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": root.user_agent,
        "Authorization": f"Bearer {key}",
    }
    content = json.dumps(body).encode()
    try:
        try:
            reply = post_json(url, content, headers, total)
        except TimeoutError as err:
            raise openai.APITimeoutError(request=_request(root, url, content, headers)) from err
        except Exception as err:
            raise openai.APIConnectionError(request=_request(root, url, content, headers)) from err
        if reply.status >= 400:
            raise root._make_status_error_from_response(
                reply.as_httpx(_request(root, url, content, headers))
            )
    except openai.BadRequestError as err:
        lc_openai._handle_openai_bad_request(err)
        raise
    except openai.APIError as err:
        lc_openai._handle_openai_api_error(err)
        raise
    kind = str(reply.headers.get("content-type", "*")).split(";")[0]
    if kind.endswith("json"):
        data = json.loads(reply.content)  # not JSON after all: its JSONDecodeError, as before
    else:
        try:
            data = json.loads(reply.content)
        except ValueError:
            return reply.as_httpx().text
    if isinstance(data, dict) and isinstance(data.get("choices"), list):
        return data
    # another shape: the client's typed reply, so that it fails as it did
    from openai.types.chat import ChatCompletion

    response = reply.as_httpx(_request(root, url, content, headers))
    return root._process_response_data(data=data, cast_to=ChatCompletion, response=response)


def _request(root: Any, url: str, content: bytes, headers: dict[str, str]) -> Any:
    """The request as the OpenAI client's exceptions hold it, built by the HTTP client it was
    given (`chat._shared_client`); made only when one is raised."""
    return root._client.build_request("POST", url, content=content, headers=headers)


_BYPASS_REFUSED = ("stream", "ls_structured_output_format", "structured_output_format")


def unheard(model: Any, input: Any, config: RunnableConfig | None, kwargs: dict[str, Any]) -> bool:
    """True when LangChain's `invoke` would do nothing but call `model._generate` (module
    docstring): text messages in, no streaming, cache or rate limiter, content as the
    provider gave it, and no callback handler for the run."""
    if not isinstance(input, list) or any(
        not isinstance(m, BaseMessage) or not isinstance(m.content, str) for m in input
    ):
        return False
    if (
        model.streaming
        or model.rate_limiter is not None
        or any(k in kwargs for k in _BYPASS_REFUSED)
    ):
        return False
    if model.output_version not in (None, "v0") or model.callbacks:
        return False
    if isinstance(model.cache, BaseCache) or (model.cache is not False and get_llm_cache()):
        return False
    config = ensure_config(config)  # the calling node's config (its callbacks) when none given
    manager = CallbackManager.configure(config.get("callbacks"), None, model.verbose)
    return not manager.handlers


def reply_of(result: ChatResult) -> AIMessage:
    """The message `invoke` returns for `result`: its response metadata merged as LangChain
    merges it, and a run id of LangChain's form."""
    generation = result.generations[0]
    message = generation.message
    metadata = {**(generation.generation_info or {}), **message.response_metadata}
    if len(result.generations) == 1 and result.llm_output is not None:
        metadata = {**result.llm_output, **metadata}
    message.response_metadata = metadata
    if message.id is None:
        message.id = f"lc_run--{uuid.uuid4()}-0"
    return cast("AIMessage", message)
