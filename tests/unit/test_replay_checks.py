"""A replay checks before it forks (issue 40, item 11): every model its seats play is asked
once (a dead endpoint or a model the server does not serve is one line, and no fork's thread is
made), and `--set rounds=N` that would end the game before the fork's round is refused instead
of accepted and ignored. Scripted games in a real SQLite store; a real loopback port."""

from __future__ import annotations

import socket

import pytest

from tests.unit.test_preflight import ModelsServer
from wargraph.kernel.context import GameContext
from wargraph.runs.replay import replay
from wargraph.runs.runner import GameError, list_runs, play


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    db = tmp_path_factory.mktemp("replay-checks") / "g.sqlite"
    play(
        "azuristan_crimsonia",
        overrides=["rounds=5"],
        context=GameContext(model="scripted", seed=3),
        db=db,
        thread_id="long",
    )
    return db


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _threads(db) -> set[str]:
    return set(list_runs(db))


def test_a_dead_endpoint_is_one_line_and_no_fork(stored):
    before = _threads(stored)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(GameError) as err:
        replay(db=stored, thread_id="long", phase="4", runs=2, model=f"openai:m@{url}")
    assert url in str(err.value) and "unreachable" in str(err.value)
    assert "no replay was forked" in str(err.value)
    assert _threads(stored) == before


def test_a_model_the_server_does_not_serve_is_named(stored):
    server = ModelsServer(200, ["served-one"])
    try:
        with pytest.raises(GameError, match="unknown model 'missing'"):
            replay(
                db=stored, thread_id="long", phase="4", runs=1, model=f"openai:missing@{server.url}"
            )
    finally:
        server.stop()


def test_rounds_that_end_before_the_fork_are_refused(stored):
    with pytest.raises(GameError, match="fork is in round 4"):
        replay(db=stored, thread_id="long", phase="4", runs=1, overrides=["rounds=3"])
    result = replay(db=stored, thread_id="long", phase="4", runs=1, overrides=["rounds=4"])
    assert len(result.runs) == 1
