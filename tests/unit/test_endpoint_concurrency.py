"""Calls at once per OpenAI-compatible endpoint: by default every seat a step asks (at least 8),
a provider's own number where one is set, and the wait a rate-limited endpoint asks for."""

from __future__ import annotations

import email.utils

import httpx
import openai
import pytest

import wargraph.models.chat as models
from wargraph.models.chat import (
    ModelRefError,
    endpoint_concurrency,
    endpoint_concurrency_for,
    endpoint_limit,
    parse_model_ref,
    seats_act_together,
    set_endpoint_concurrency,
    set_endpoint_limit,
)
from wargraph.models.ratelimit import MAX_WAIT_S, retry_after_s
from wargraph.runs.runner import step_workers, thread_config

LOCAL = parse_model_ref("openai:m@http://127.0.0.1:9/v1")
LIMITED = parse_model_ref("openai:m@https://api.example.com/v1/")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv("WARGRAPH_ENDPOINT_CONCURRENCY", raising=False)
    monkeypatch.setattr(models, "_seats_together", 0)
    monkeypatch.setattr(models, "_per_url", {})
    previous = set_endpoint_concurrency(None)
    yield
    set_endpoint_concurrency(previous)


def test_the_default_lets_every_seat_of_a_step_call_at_once():
    assert endpoint_concurrency() == 8 and endpoint_limit(LOCAL)._initial_value == 8
    seats_act_together(7)  # Diplomacy: still 8
    assert endpoint_concurrency() == 8
    seats_act_together(12)
    assert endpoint_concurrency() == 12 and endpoint_limit(LOCAL)._initial_value == 12
    seats_act_together(3)  # another, smaller game in the same process: never lower
    assert endpoint_concurrency() == 12
    assert endpoint_limit(parse_model_ref("embedded"))._initial_value == 1


def test_a_provider_gets_its_own_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv(
        "WARGRAPH_ENDPOINT_CONCURRENCY", "16, https://API.example.com/v1=3, openai=2"
    )
    assert endpoint_concurrency_for(LIMITED) == 3  # case and the trailing slash ignored
    assert endpoint_concurrency_for(LOCAL) == 16
    assert endpoint_limit(LIMITED)._initial_value == 3
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "https://api.example.com/v1=3")
    seats_act_together(10)
    assert endpoint_concurrency_for(LOCAL) == 10  # no general number: the default
    # OpenAI's own API by its URL
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "https://api.openai.com/v1=5")
    assert endpoint_concurrency_for(parse_model_ref("openai:gpt-4o-mini")) == 5


def test_a_limit_set_in_code_wins_and_can_be_taken_back(monkeypatch):
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "https://api.example.com/v1=3")
    set_endpoint_limit("https://api.example.com/v1", 2)
    set_endpoint_concurrency(40)
    assert endpoint_concurrency_for(LIMITED) == 2 and endpoint_concurrency_for(LOCAL) == 40
    set_endpoint_limit("https://api.example.com/v1", None)
    assert endpoint_concurrency_for(LIMITED) == 3
    with pytest.raises(ModelRefError, match="expected a whole number >= 1"):
        set_endpoint_limit("https://api.example.com/v1", 0)


@pytest.mark.parametrize("raw", ["lots", "0", "http://x/v1=", "=4", "http://x/v1=-1", "4,x=y"])
def test_a_bad_setting_is_one_clear_error(monkeypatch, raw):
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", raw)
    with pytest.raises(ModelRefError, match="WARGRAPH_ENDPOINT_CONCURRENCY=.*URL=N"):
        endpoint_limit(LOCAL)


def test_the_graph_gets_a_worker_per_seat():
    """LangGraph runs a step's tasks on a pool sized by `max_concurrency` (default cores + 4)."""
    assert thread_config("t")["max_concurrency"] == step_workers() >= 16
    assert thread_config("t", seats=40)["max_concurrency"] >= 40


def _error(status: int, headers: dict[str, str]) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    cls = openai.RateLimitError if status == 429 else openai.APIStatusError
    return cls("limited", response=response, body=None)


def test_retry_after_is_read_from_a_rate_limited_answer():
    assert retry_after_s(_error(429, {"Retry-After": "2"})) == 2.0
    assert retry_after_s(_error(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after_s(_error(503, {"Retry-After": "0.5"})) == 0.5
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after_s(_error(429, {"Retry-After": when}), now=1_000_000) == 30.0
    assert retry_after_s(_error(429, {"Retry-After": "86400"})) == MAX_WAIT_S  # bounded
    assert retry_after_s(_error(429, {"Retry-After": "-3"})) == 0.0


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (429, {}),
        (429, {"Retry-After": "soon"}),
        (429, {"Retry-After": "nan"}),
        (500, {"Retry-After": "2"}),
    ],
)
def test_no_usable_retry_after_leaves_the_back_off(status, headers):
    assert retry_after_s(_error(status, headers)) is None
    assert retry_after_s(ValueError("not an HTTP error")) is None


def test_ray_workers_inherit_a_general_number_and_keep_each_providers(monkeypatch):
    from wargraph.models.chat import endpoint_env_with

    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", "4,https://api.example.com/v1=3")
    monkeypatch.setenv("WARGRAPH_ENDPOINT_CONCURRENCY", endpoint_env_with(32))
    assert endpoint_concurrency_for(LOCAL) == 32 and endpoint_concurrency_for(LIMITED) == 3
