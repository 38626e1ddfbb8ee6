"""Every seat of a Diplomacy phase has its call in flight at once against a slow endpoint (a
real loopback server answering after a fixed delay): seven powers, seven requests together,
with the shipped defaults (no endpoint setting, no thread-pool setting)."""

from __future__ import annotations

import pytest

from benchmarks.fake_endpoint import FakeEndpoint
from wargraph.kernel.context import GameContext
from wargraph.models.chat import set_endpoint_concurrency
from wargraph.runs.runner import play

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

ORDERS_ONLY = [
    "diplomacy.max_year=1901",
    "diplomacy.negotiation_rounds=0",
    "diplomacy.diary=false",
    "diplomacy.maps=none",
]


def test_seven_powers_call_together(tmp_path, monkeypatch):
    monkeypatch.delenv("WARGRAPH_ENDPOINT_CONCURRENCY", raising=False)
    previous = set_endpoint_concurrency(None)  # the shipped default, whatever ran before
    try:
        with FakeEndpoint(latency_s=0.4, log_dir=tmp_path) as endpoint:
            endpoint.stats()
            result = play(
                "diplomacy",
                overrides=ORDERS_ONLY,
                context=GameContext(model=endpoint.model(), seed=0, call_timeout=30),
                db=None,
                out_dir=tmp_path / "out",
            )
            stats = endpoint.stats()
    finally:
        set_endpoint_concurrency(previous)
    assert result.finished
    # two movement phases of seven order sets (winter has nothing to adjust in 1901)
    assert stats["requests"] >= 14
    assert stats["peak_in_flight"] == 7  # was 4: the endpoint limit, then 6: the thread pool


def _overlap(a: dict, b: dict) -> bool:
    """Two requests the endpoint held at the same time."""
    return a["arrived"] < b["answered"] and b["arrived"] < a["answered"]


def test_a_seats_questions_of_one_step_are_in_flight_together(tmp_path, monkeypatch):
    """Spring 1902: each power's diary entry and its digest of 1901 at once (more requests in
    flight than seats); with `diary: with_orders`, its diary and its orders at once."""
    monkeypatch.delenv("WARGRAPH_ENDPOINT_CONCURRENCY", raising=False)
    previous = set_endpoint_concurrency(None)
    base = ["diplomacy.negotiation_rounds=1", "diplomacy.maps=none"]
    try:
        # long enough that two requests sent together overlap even on a starved machine (0.2 s
        # once failed under the full suite's load)
        with FakeEndpoint(latency_s=0.5, log_dir=tmp_path) as endpoint:
            endpoint.stats()
            endpoint.requests()
            play(
                "diplomacy",
                overrides=[*base, "diplomacy.max_year=1902"],
                context=GameContext(model=endpoint.model(), seed=0, call_timeout=30),
                db=None,
            )
            stats, spring = endpoint.stats(), endpoint.requests()
            play(
                "diplomacy",
                overrides=[*base, "diplomacy.max_year=1901", "diplomacy.diary=with_orders"],
                context=GameContext(model=endpoint.model(), seed=0, call_timeout=30),
                db=None,
            )
            joined = endpoint.requests()
    finally:
        set_endpoint_concurrency(previous)
    digests = [r for r in spring if r["fields"] == "prose"]  # the digest is one text field
    assert digests
    for digest in digests:
        diary = [r for r in spring if r["seat"] == digest["seat"] and "summary" in r["fields"]]
        assert any(_overlap(digest, d) for d in diary), digest["seat"]
    assert stats["peak_in_flight"] > 7
    diaries = [r for r in joined if "summary" in r["fields"]]
    assert diaries
    for diary in diaries:
        orders = [r for r in joined if r["seat"] == diary["seat"] and " " in r["fields"]]
        assert any(_overlap(diary, o) for o in orders), diary["seat"]
