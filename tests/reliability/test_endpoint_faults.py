"""Endpoint faults: an OpenAI-compatible endpoint on loopback that refuses connections, answers
500, hangs past the call timeout, or sends malformed JSON. Each call is retried with back-off,
then re-asked, then the node's documented fallback is used; the game completes and the trace
names every fault."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.reliability._support import FakeEndpoint, closed_port
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.worlds import FALLBACK_PLAN

# One player and the control, one round, no post-game questions: two asks (a plan and the
# umpire's narrative), so each fault mode costs a few seconds at most.
SCENARIO = {
    "title": "Fault drill",
    "setting": "Two neighbours argue over a river.",
    "rounds": 1,
    "players": {"upriver": {"persona": "A cautious leader.", "goals": ["Keep the dam"]}},
}
ASKS = 2
# A transport fault is retried `retries` times with back-off, then the fallback: no re-ask,
# since there is no answer to correct (the re-ask is for unusable answers).


def run_game(model: str, tmp_path: Path, *, retries: int, timeout: float = 2.0):
    ctx = GameContext(model=model, seed=1, retries=retries, call_timeout=timeout, max_tokens=50)
    started = time.perf_counter()
    result = play(SCENARIO, context=ctx, db=None, thread_id="faults", out_dir=tmp_path / "out")
    return result, read_trace(tmp_path / "out" / "trace.jsonl"), time.perf_counter() - started


def assert_fallback_game(result, trace, *, retries: int, error_has: tuple[str, ...]) -> None:
    assert result.finished and not result.values.get("error")
    plans = [e for e in result.record["events"] if e["kind"] == "plan"]
    narrations = [e for e in result.record["events"] if e["kind"] == "narration"]
    assert [p["text"] for p in plans] == [FALLBACK_PLAN["plan"]]
    assert plans[0]["data"]["source"] == "fallback"
    assert len(narrations) == 1 and narrations[0]["data"]["source"] == "fallback"

    faults = [t for t in trace if t["event"] == "fault"]
    fallbacks = [t for t in trace if t["event"] == "fallback"]
    assert not [t for t in trace if t["event"] == "call"], "no call can have succeeded"
    assert len(faults) == ASKS * (retries + 1)
    for f in faults:
        assert any(word in f["error"] for word in error_has), f["error"]
    # each ask: its faults, then one fallback naming the last fault as its reason
    assert sorted(f["ask_id"] for f in fallbacks) == sorted({f["ask_id"] for f in faults})
    for fb in fallbacks:
        mine = [i for i, t in enumerate(trace) if t.get("ask_id") == fb["ask_id"]]
        assert trace[mine[-1]] is fb, "the fallback comes after the ask's faults"
        assert any(word in fb["reason"] for word in error_has), fb["reason"]
    assert result.record["usage"]["fallbacks"] == ASKS


@pytest.fixture
def endpoint():
    server = FakeEndpoint().start()
    yield server
    server.stop()


@pytest.mark.timeout(60)
def test_connection_refused(tmp_path):
    retries = 1
    result, trace, _ = run_game(
        f"openai:fake@http://127.0.0.1:{closed_port()}/v1", tmp_path, retries=retries
    )
    assert_fallback_game(
        result, trace, retries=retries, error_has=("ConnectionError", "Connection error")
    )


@pytest.mark.timeout(60)
def test_http_500_is_retried_with_growing_back_off(endpoint, tmp_path):
    endpoint.mode = "500"
    retries = 2
    result, trace, _ = run_game(f"openai:fake@{endpoint.url}", tmp_path, retries=retries)
    assert_fallback_game(result, trace, retries=retries, error_has=("Error code: 500",))
    # the endpoint really received every retry (the client's own retries are off)
    assert len(endpoint.requests) == ASKS * (retries + 1)
    # back-off: within one attempt of one ask, the waits grow (0.25 s, then 0.5 s)
    by_attempt: dict[tuple[str, int], list[float]] = {}
    for r in endpoint.requests:
        by_attempt.setdefault((r["prompt"], len(r["body"]["messages"])), []).append(r["at"])
    assert len(by_attempt) == ASKS
    for times in by_attempt.values():
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert len(gaps) == retries
        assert gaps[0] >= 0.2 and gaps[1] >= 0.45 and gaps[1] > gaps[0], gaps


@pytest.mark.timeout(60)
def test_hang_past_the_call_timeout(endpoint, tmp_path):
    endpoint.mode = "hang"
    endpoint.hang_s = 5.0
    retries = 1
    result, trace, seconds = run_game(
        f"openai:fake@{endpoint.url}", tmp_path, retries=retries, timeout=0.4
    )
    assert_fallback_game(result, trace, retries=retries, error_has=("TimeoutError", "timed out"))
    assert len(endpoint.requests) == ASKS * (retries + 1)
    # every call was cut at the timeout, not after the endpoint's 5 s
    assert all(f["latency_s"] < 2.0 for f in trace if f["event"] == "fault")
    assert seconds < 15


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["badjson", "badshape"])
def test_malformed_json_from_the_endpoint(endpoint, tmp_path, mode):
    endpoint.mode = mode
    retries = 1
    result, trace, _ = run_game(f"openai:fake@{endpoint.url}", tmp_path, retries=retries)
    assert result.finished
    faults = [t for t in trace if t["event"] == "fault"]
    assert len(endpoint.requests) == len(faults) == ASKS * (retries + 1)
    expected = {"badjson": ("JSONDecodeError",), "badshape": ("TypeError",)}[mode]
    assert_fallback_game(result, trace, retries=retries, error_has=expected)


@pytest.mark.timeout(60)
def test_a_fault_then_a_good_answer_uses_the_model(endpoint, tmp_path):
    """A transient fault costs one retry, not the model's answer."""
    endpoint.script = ["500", "hang"]
    endpoint.hang_s = 3.0
    endpoint.reply = '{"plan": "Open the sluices by a tenth.", "narrative": "Water flows again."}'
    result, trace, _ = run_game(f"openai:fake@{endpoint.url}", tmp_path, retries=2, timeout=0.5)
    assert result.finished
    plans = [e for e in result.record["events"] if e["kind"] == "plan"]
    assert (
        plans[0]["text"] == "Open the sluices by a tenth." and plans[0]["data"]["source"] == "model"
    )
    events = [t["event"] for t in trace]
    assert events[:3] == ["fault", "fault", "call"], events
    assert "Error code: 500" in trace[0]["error"] and "TimeoutError" in trace[1]["error"]
    assert "fallback" not in events
    assert len(endpoint.requests) == ASKS + 2


@pytest.mark.timeout(60)
def test_a_rate_limit_waits_as_long_as_the_endpoint_asks(endpoint, tmp_path):
    """HTTP 429 with Retry-After: the next try comes after that wait, not after the back-off
    (0.25 s), which would only meet the limit again."""
    endpoint.script = ["429"]
    endpoint.retry_after = "1.2"
    endpoint.reply = '{"plan": "Open the sluices by a tenth.", "narrative": "Water flows again."}'
    result, trace, _ = run_game(f"openai:fake@{endpoint.url}", tmp_path, retries=2)
    assert result.finished
    first, second = endpoint.requests[0], endpoint.requests[1]
    assert first["prompt"] == second["prompt"]  # the same ask, tried again
    assert 1.15 <= second["at"] - first["at"] < 5.0
    faults = [t for t in trace if t["event"] == "fault"]
    assert len(faults) == 1 and "429" in faults[0]["error"]
