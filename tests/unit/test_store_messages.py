"""A PostgreSQL store that cannot be opened says why (issue 40, item 10): a server that answered
that the database does not exist is not "cannot reach the PostgreSQL server". Real PostgreSQL
(WARGRAPH_TEST_POSTGRES; skipped where it cannot be reached) and a loopback port with nothing."""

from __future__ import annotations

import socket
import uuid

import pytest

from tests.stores import postgres_or_skip
from wargraph.store.connect import StoreError, pool_for


def test_a_missing_database_is_named_as_missing():
    server = postgres_or_skip()
    url = server.rsplit("/", 1)[0] + f"/no_such_db_{uuid.uuid4().hex[:8]}"
    with pytest.raises(StoreError) as err:
        pool_for(url)
    text = str(err.value)
    assert "no such database" in text and "createdb" in text, text
    assert "cannot reach" not in text


def test_nothing_listening_is_still_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StoreError, match="cannot reach the PostgreSQL server"):
        pool_for(f"postgresql://postgres@127.0.0.1:{port}/x")
