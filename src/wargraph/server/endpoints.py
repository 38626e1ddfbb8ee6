"""Which models a served game may call: the operator's allow-list, never a request's choice.

A model reference names an endpoint (`openai:<model>@<url>`, called with the server's
`OPENAI_API_KEY`) or a file of the server (`gguf:/path`). A request that could name either would
make the server call any URL with its key, or open any file. So on a server (`wargraph serve`,
`wargraph studio`) every reference a game uses is `embedded`, `scripted`, or on the operator's
list: `--allow-model REF` (repeatable) or `WARGRAPH_ALLOWED_MODELS` (comma-separated). An entry
is a model reference; `openai:*@<url>` allows any model at that endpoint and `openai:*` any model
at the default endpoint (`OPENAI_BASE_URL`, else OpenAI's).

Checked where a request arrives (the facilitator's route: 400; the LangGraph API: 403) and again
where a model is built (`wargraph.models.chat.set_model_policy`), so no path around the first check
reaches an endpoint.
"""

from __future__ import annotations

import os
from typing import Any

from wargraph.kernel.context import SERVED_BOUNDS, served_bound_refusal
from wargraph.models.chat import ModelRef, ModelRefError, ModelRefused, parse_model_ref

ALLOWED_ENV = "WARGRAPH_ALLOWED_MODELS"
ALWAYS = ("embedded", "scripted")
ANY = "*"


def _key(ref: ModelRef) -> tuple[str, str, str]:
    return (ref.provider, ref.name, (ref.base_url or "").rstrip("/"))


def parse_allowed(raw: str | list[str] | None) -> list[str]:
    """The entries of an allow-list (comma-separated text or a list); ModelRefError names a bad one."""
    items = raw.split(",") if isinstance(raw, str) else list(raw or [])
    entries = [item.strip() for item in items if item and item.strip()]
    for entry in entries:
        ref = parse_model_ref(entry)  # raises with the expected forms
        if ref.name == ANY and ref.provider != "openai":
            raise ModelRefError(f"allowed model {entry!r}: '*' stands only for openai model names")
    return entries


def allowed(env: dict[str, str] | None = None) -> list[str]:
    """The allow-list of this server process (always with `embedded` and `scripted`)."""
    raw = (os.environ if env is None else env).get(ALLOWED_ENV, "")
    return [*ALWAYS, *parse_allowed(raw)]


def why_refused(reference: str, entries: list[str] | None = None) -> str | None:
    """Why a served game may not use `reference` (None: it may)."""
    try:
        ref = parse_model_ref(reference)
    except ModelRefError:
        return None  # not a model at all: the scenario's or the run's own check says so
    entries = allowed() if entries is None else entries
    want = _key(ref)
    for entry in entries:
        ok = parse_model_ref(entry)
        have = _key(ok)
        if have == want or (ok.name == ANY and ref.provider == "openai" and have[2] == want[2]):
            return None
    return (
        f"model {reference[:200]!r} is not allowed on this server: a served game calls only "
        "embedded, scripted or the models its operator allows (wargraph serve --allow-model REF, "
        f"or {ALLOWED_ENV})"
    )


def check(ref: ModelRef) -> None:
    """The policy `wargraph.models.chat.chat_model` applies in a server process."""
    why = why_refused(str(ref))
    if why:
        raise ModelRefused(why)


def requested_models(value: Any) -> list[str]:
    """Every model reference a request names: `model` and `*.model` keys (scenarios, run
    settings, dotted overrides) and `role_models` mappings, at any depth."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list | tuple):
            stack.extend(node)
        if not isinstance(node, dict):
            continue
        for key, item in node.items():
            name = str(key)
            if (name == "model" or name.endswith(".model")) and isinstance(item, str):
                found.append(item)
            elif (name == "role_models" or name.endswith(".role_models")) and isinstance(
                item, dict
            ):
                found.extend(v for v in item.values() if isinstance(v, str))
            else:
                stack.append(item)
    return found


def _names_a_trace(value: Any) -> bool:
    """Whether a request sets `trace_path` (a file the server would write) anywhere."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("trace_path") not in (None, "") or node.get("model_cache"):
                return True  # a model cache is a file or database of the server's too
            stack.extend(node.values())
    return False


def _settings_in(value: Any) -> list[dict[str, Any]]:
    """Every mapping in a request that holds run settings (a run's `context` or `configurable`,
    a facilitator's settings)."""
    found, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, dict):
            if any(name in node for name in SERVED_BOUNDS):
                found.append(node)
            stack.extend(v for v in node.values() if isinstance(v, dict | list | tuple))
    return found


def request_refusal(value: Any) -> str | None:
    """Why a request may not run as it is (None: it may): a model off the allow-list, or a
    trace file of the server's named by the request."""
    entries = allowed()
    for reference in requested_models(value):
        why = why_refused(reference, entries)
        if why:
            return why
    for settings in _settings_in(value):
        why = served_bound_refusal(settings)
        if why:
            return why
    if _names_a_trace(value):
        return (
            "trace_path, model_cache: a served game keeps its calls in the server's state; a "
            "request never names a file of the server"
        )
    return None


def enforce() -> list[str]:
    """Apply the allow-list to every model this (server) process builds; returns it. A malformed
    list raises ModelRefError, so the server refuses to start rather than allow too much."""
    from wargraph.models.chat import set_model_policy

    entries = allowed()
    set_model_policy(check)
    return entries
