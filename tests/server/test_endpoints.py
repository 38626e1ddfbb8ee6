"""The operator's allow-list of models (no server): what a request may name, and the last check
where a chat model is built."""

from __future__ import annotations

import pytest

import wargraph.models.chat as models
import wargraph.server.endpoints as endpoints
from wargraph.models.chat import ModelRefError, chat_model
from wargraph.server.endpoints import (
    ALLOWED_ENV,
    parse_allowed,
    request_refusal,
    requested_models,
    why_refused,
)

EVIL = "openai:gpt-4o@http://169.254.169.254/v1"


def test_only_embedded_scripted_and_the_operators_entries_are_allowed():
    entries = ["embedded", "scripted", "openai:gpt-4o-mini", "openai:*@http://10.0.0.5:8000/v1/"]
    for ok in (
        "embedded",
        "scripted",
        "openai:gpt-4o-mini",
        "openai:qwen@http://10.0.0.5:8000/v1",
        "openai:other@http://10.0.0.5:8000/v1/",
    ):
        assert why_refused(ok, entries) is None, ok
    for bad in (
        EVIL,
        "openai:gpt-4o",  # another model at the default endpoint
        "openai:gpt-4o-mini@http://127.0.0.1:9/v1",  # an allowed name at another endpoint
        "openai:qwen@http://10.0.0.5:8001/v1",
        "gguf:/etc/passwd",
    ):
        why = why_refused(bad, entries)
        assert why and "not allowed on this server" in why and "--allow-model" in why, bad


def test_allow_lists_are_checked_and_read_from_the_environment(monkeypatch):
    assert parse_allowed(" openai:a , gguf:/m.gguf,,") == ["openai:a", "gguf:/m.gguf"]
    with pytest.raises(ModelRefError):
        parse_allowed("nonsense")
    with pytest.raises(ModelRefError, match="only for openai"):
        parse_allowed("gguf:*")
    monkeypatch.setenv(ALLOWED_ENV, "openai:a")
    assert endpoints.allowed() == ["embedded", "scripted", "openai:a"]


def test_every_model_a_request_names_is_found_at_any_depth():
    request = {
        "kwargs": {
            "context": {"model": "openai:a", "role_models": {"x": "openai:b", "y": 3}},
            "input": {
                "scenario": {"players": {"p": {"model": "openai:c"}}, "control": {"model": None}},
                "overrides": {"players.q.model": "openai:d"},
            },
            "config": {"configurable": {"scenario": {"teams": [{"model": "openai:e"}]}}},
        }
    }
    assert sorted(requested_models(request)) == [f"openai:{c}" for c in "abcde"]


def test_a_request_is_refused_for_a_foreign_model_or_a_trace_file(monkeypatch):
    monkeypatch.delenv(ALLOWED_ENV, raising=False)
    assert request_refusal({"kwargs": {"context": {"model": "scripted"}}}) is None
    assert "not allowed" in request_refusal({"kwargs": {"context": {"role_models": {"a": EVIL}}}})
    assert "trace_path" in request_refusal({"kwargs": {"context": {"trace_path": "/tmp/x"}}})
    # a model cache is a file or database of the server's too (wargraph.models.cache)
    cached = {"kwargs": {"context": {"model_cache": "/tmp/answers.sqlite"}}}
    assert "model_cache" in request_refusal(cached)


def test_the_policy_refuses_before_a_chat_model_is_built(monkeypatch):
    monkeypatch.setenv(ALLOWED_ENV, "openai:*@http://127.0.0.1:9/v1")
    monkeypatch.setattr(models, "_policy", None)
    endpoints.enforce()
    try:
        with pytest.raises(ModelRefError, match="not allowed on this server"):
            chat_model(EVIL)
        with pytest.raises(ModelRefError, match="not allowed on this server"):
            chat_model("gguf:/etc/hostname")
        assert chat_model("openai:any@http://127.0.0.1:9/v1") is not None  # allowed: built
    finally:
        models.set_model_policy(None)


def test_a_bad_allow_list_stops_the_server_before_it_starts(tmp_path, monkeypatch):
    from wargraph.server.serve import ServeError, free_port, start

    monkeypatch.delenv(ALLOWED_ENV, raising=False)
    with pytest.raises(ServeError, match="allowed models: model 'nonsense'"):
        start(port=free_port(), state_dir=tmp_path, allow_models=["nonsense"])
    monkeypatch.setenv(ALLOWED_ENV, "gguf:*")
    with pytest.raises(ServeError, match="only for openai"):
        start(port=free_port(), state_dir=tmp_path)
    assert not (tmp_path / "langgraph.json").exists()


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"call_timeout": 1e9}, "call_timeout"),
        ({"retries": 10**6}, "retries"),
        ({"max_faults": 0}, "max_faults"),
        ({"max_tokens": 10**5}, "max_tokens"),
        ({"temperature": -1}, "temperature"),
        ({"retries": "many"}, "retries"),
        ({"retries": True}, "retries"),
    ],
)
def test_run_settings_that_would_hold_a_worker_are_refused(settings, named):
    why = request_refusal({"kwargs": {"context": {"model": "scripted", **settings}}})
    assert why and why.startswith(named)
    assert request_refusal({"config": {"configurable": settings}}).startswith(named)


def test_run_settings_within_bounds_pass():
    ok = {
        "call_timeout": 30.0,
        "retries": 2,
        "max_faults": 5,
        "max_tokens": 200,
        "temperature": 0.7,
    }
    assert request_refusal({"kwargs": {"context": {"model": "scripted", **ok}}}) is None


def test_a_game_stopped_by_the_allow_list_says_so(monkeypatch, tmp_path):
    """Not "once the model answers": a refused model is the operator's choice, not a fault."""
    from wargraph.kernel.context import GameContext
    from wargraph.models.faults import ModelUnavailable
    from wargraph.runs.runner import play

    monkeypatch.setenv(ALLOWED_ENV, "openai:*@http://127.0.0.1:9/v1")
    monkeypatch.setattr(models, "_policy", None)
    endpoints.enforce()
    try:
        ctx = GameContext(model=EVIL, trace_path=str(tmp_path / "trace.jsonl"))
        with pytest.raises(ModelUnavailable) as stopped:
            play("azuristan_crimsonia", context=ctx, db=str(tmp_path / "g.sqlite"), thread_id="r")
    finally:
        models.set_model_policy(None)
    message = str(stopped.value)
    assert "not allowed here" in message and "operator allows the model" in message
    assert "once the model answers" not in message and "cannot be loaded" not in message
