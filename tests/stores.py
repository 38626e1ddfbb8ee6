"""The checkpoint stores tests run on: a SQLite file, and PostgreSQL in a fresh schema.

PostgreSQL is reached through WARGRAPH_TEST_POSTGRES (default: the local server every machine
of the project runs). Where it cannot be reached the PostgreSQL cases skip, saying why."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

POSTGRES = os.environ.get("WARGRAPH_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = ("sqlite", "postgres")
_unreachable: list[str] = []


def postgres_or_skip() -> str:
    """The server URL, or skip (with the reason printed) when it cannot be reached."""
    import psycopg

    if not _unreachable:
        try:
            psycopg.connect(POSTGRES, connect_timeout=3).close()
            _unreachable.append("")
        except psycopg.Error as exc:
            _unreachable.append(str(exc).strip().splitlines()[0])
    if _unreachable[0]:
        pytest.skip(f"PostgreSQL at {POSTGRES} unreachable: {_unreachable[0]}")
    return POSTGRES


def with_schema(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@contextlib.contextmanager
def store(kind: str, folder: Path) -> Iterator[str]:
    """A `--db` value for an empty store of this kind; a PostgreSQL schema is dropped after."""
    if kind == "sqlite":
        yield str(folder / "store.sqlite")
        return
    import psycopg

    from wargraph.store.connect import close

    server = postgres_or_skip()
    schema = f"wgtest_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = with_schema(server, schema)
    try:
        yield url
    finally:
        close(url)
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def params(slow: set[str] = frozenset()) -> list[Any]:
    """The store kinds as test parameters; those in `slow` are marked slow (the second run of
    a long parametrised test: `make test` runs it, `make test-fast` leaves it out)."""
    return [pytest.param(k, id=k, marks=[pytest.mark.slow] if k in slow else []) for k in KINDS]
