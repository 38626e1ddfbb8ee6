"""A model that cannot answer stops the game instead of playing it out on fallbacks: after
`max_faults` failed calls in a row (each after its retries) the game stops, saved, and resumes
once the model answers; a model that cannot load stops it at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability._support import FakeEndpoint, closed_port
from wargraph.kernel.context import GameContext
from wargraph.models.faults import ModelUnavailable, summarize
from wargraph.runs.runner import play, resume
from wargraph.runs.trace import read_trace

SCENARIO = {
    "title": "Fault drill",
    "setting": "Two neighbours argue over a river.",
    "rounds": 2,
    "players": {"upriver": {"persona": "A cautious leader.", "goals": ["Keep the dam"]}},
}


def stopped_game(model: str, tmp_path: Path, *, max_faults: int) -> ModelUnavailable:
    ctx = GameContext(model=model, retries=0, call_timeout=2.0, max_faults=max_faults)
    with pytest.raises(ModelUnavailable) as caught:
        play(
            SCENARIO,
            context=ctx,
            db=tmp_path / "games.sqlite",
            thread_id="drill",
            out_dir=tmp_path / "out",
        )
    return caught.value


@pytest.mark.timeout(60)
def test_an_endpoint_refusing_every_call_stops_the_game(tmp_path):
    exc = stopped_game(f"openai:fake@http://127.0.0.1:{closed_port()}/v1", tmp_path, max_faults=3)
    message = str(exc)
    assert "3 model calls in a row failed" in message
    assert "wargraph resume --thread drill" in message and exc.thread_id == "drill"
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    events = [e["event"] for e in trace]
    # two calls end in their fallback (the game goes on), the third stops it: nothing after
    assert events.count("fault") == 3 and events.count("fallback") == 2
    assert events[-1] == "stop" and trace[-1]["thread"] == "drill"
    assert summarize(trace, "drill")["stops"] == 1


@pytest.mark.timeout(60)
def test_a_stopped_game_resumes_once_the_model_answers(tmp_path):
    endpoint = FakeEndpoint(script=["500", "500"], reply="The river rises.").start()
    try:
        exc = stopped_game(f"openai:fake@{endpoint.url}", tmp_path, max_faults=2)
        assert "Error code: 500" in str(exc)
        result = resume(db=tmp_path / "games.sqlite", thread_id="drill", out_dir=tmp_path / "out")
    finally:
        endpoint.stop()
    assert result.finished and result.values["round"] == 2
    events = result.record["events"]
    plans = [e for e in events if e["kind"] == "plan"]
    narrations = [e for e in events if e["kind"] == "narration"]
    # round 1's plan fell back; the narration that stopped the game was asked again on resume
    assert [p["data"]["source"] for p in plans] == ["fallback", "model"]
    assert [n["data"]["source"] for n in narrations] == ["model", "model"]
    assert narrations[0]["text"] == "The river rises."


@pytest.mark.timeout(60)
def test_a_model_that_cannot_load_stops_at_its_first_call(tmp_path):
    exc = stopped_game(f"gguf:{tmp_path / 'missing.gguf'}", tmp_path, max_faults=5)
    assert "cannot be loaded" in str(exc) and "missing.gguf" in str(exc)
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert [e["event"] for e in trace] == ["fault", "stop"]


def test_faults_in_a_row_count_per_game_and_an_answer_resets_them():
    from wargraph.models.faults import streaks

    assert streaks.failed("game-a") == 1 and streaks.failed("game-a") == 2
    assert streaks.failed("game-b") == 1
    streaks.answered("game-a")
    assert streaks.failed("game-a") == 1
    streaks.answered("game-a")
    streaks.answered("game-b")


@pytest.mark.timeout(60)
def test_a_new_game_on_a_reused_thread_id_counts_its_own_faults(tmp_path):
    """Two one-round games (two failed calls each) on one thread id: neither reaches three."""
    ctx = GameContext(
        model=f"openai:fake@http://127.0.0.1:{closed_port()}/v1", retries=0, max_faults=3
    )
    for game in range(2):
        out = tmp_path / f"out{game}"
        result = play(
            {**SCENARIO, "rounds": 1}, context=ctx, db=None, thread_id="again", out_dir=out
        )
        assert result.finished and result.record["usage"]["fallbacks"] == 2
