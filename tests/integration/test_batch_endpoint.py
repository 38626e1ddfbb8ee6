"""Games in flight against an OpenAI-compatible endpoint on loopback (the benchmark's fake
endpoint in its own process, 200 ms per call): real HTTP through the OpenAI client, the games
overlap at the endpoint, the per-endpoint limit holds, and a game whose endpoint is dead ends in
its own error while the others finish."""

from __future__ import annotations

import pytest

from benchmarks.common import free_port
from benchmarks.fake_endpoint import FakeEndpoint
from wargraph.kernel.context import GameContext
from wargraph.runs.batch import GameSpec, play_many
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.server, pytest.mark.timeout(120)]

SHORT = {"rounds": 1, "questions": []}  # three calls: two plans at once, then the narrative


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    with FakeEndpoint(0.2, log_dir=tmp_path_factory.mktemp("endpoint")) as ep:
        yield ep


def games(model: str, n: int) -> list[GameSpec]:
    return [
        GameSpec("azuristan_crimsonia", SHORT, GameContext(model=model, seed=s)) for s in range(n)
    ]


def test_four_games_overlap_at_the_endpoint_and_every_answer_is_the_models(endpoint, tmp_path):
    endpoint.stats()  # resets the peak
    runs = play_many(
        games(endpoint.model(), 4),
        db=tmp_path / "c.sqlite",
        out=tmp_path / "games",
        concurrency=4,
        endpoint_concurrency=8,
    )
    assert [r.status for r in runs] == ["finished"] * 4, [r.error for r in runs]
    served = endpoint.stats()
    # one game has at most two calls in flight (its two plans): more means games overlapped
    assert served["peak_in_flight"] > 2
    for r in runs:
        trace = read_trace(r.out_dir / "trace.jsonl")
        calls = [e for e in trace if e["event"] == "call"]
        assert len(calls) == 3 and all(e["model"] == endpoint.model() for e in calls)
        assert not [e for e in trace if e["event"] in ("fault", "fallback", "rejected")]


def test_the_endpoint_limit_caps_calls_in_flight_across_games(endpoint, tmp_path):
    endpoint.stats()
    runs = play_many(
        games(endpoint.model(), 2), db=None, out=tmp_path, concurrency=2, endpoint_concurrency=1
    )
    assert all(r.finished for r in runs)
    assert endpoint.stats()["peak_in_flight"] == 1


def test_a_dead_endpoint_fails_its_own_game_only(endpoint, tmp_path):
    dead = f"openai:fake@http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    specs = games(endpoint.model(), 3)
    specs[1] = GameSpec(
        "azuristan_crimsonia", SHORT, GameContext(model=dead, retries=0, max_faults=1)
    )
    runs = play_many(specs, db=tmp_path / "c.sqlite", out=tmp_path / "g", concurrency=3)
    assert [r.status for r in runs] == ["finished", "error", "finished"]
    assert runs[1].error.startswith("ModelUnavailable") and "resume" in runs[1].error
