"""One real LangGraph server (langgraph dev, loopback, temporary folder) for the server tests."""

from __future__ import annotations

import pytest

from tests.server.support import game_server


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wargraph-server")
    with game_server(folder) as srv:
        yield srv
        if srv.process.poll() is not None:  # it died under a test: show why
            pytest.fail(f"the server exited during the tests:\n{srv.log_tail()}")
