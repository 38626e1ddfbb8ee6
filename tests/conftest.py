"""Shared fixtures: offline by default, scripted contexts, temporary records."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGSMITH_TEST_TRACKING", "false")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist's workers get COLUMNS=80, which fixes Rich's width when wargraph.cli makes its
    # console: the CLI tests' own COLUMNS would then be ignored. A worker runs as pytest does.
    os.environ.pop("COLUMNS", None)


@pytest.fixture
def scripted():
    """A run context for the scripted decider (deterministic, seeded; plays no strategy)."""
    from wargraph.kernel.context import GameContext

    def make(tmp_path=None, **kw):
        trace = str(tmp_path / "trace.jsonl") if tmp_path is not None else None
        return GameContext(model="scripted", trace_path=trace, **kw)

    return make


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request, tmp_path):
    """Every graph test runs on both the in-memory and the SQLite checkpointer."""
    if request.param == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    else:
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(str(tmp_path / "cp.sqlite"), check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_db(request, tmp_path):
    """A `--db` value for an empty store: a SQLite file, then PostgreSQL in a fresh schema
    (skipped, with the reason, where WARGRAPH_TEST_POSTGRES cannot be reached)."""
    from tests.stores import store

    with store(request.param, tmp_path) as db:
        yield db


@pytest.fixture
def entry_points(monkeypatch):
    """Stand-in entry points for the plug-in families' group (what installed packages would
    declare): `entry_points(name="module:FAMILY", ...)`; undone after the test."""
    import importlib.metadata

    import wargraph.kernel.families as families

    def install(**targets: str) -> None:
        eps = [
            importlib.metadata.EntryPoint(name=n, value=v, group=families.GROUP)
            for n, v in targets.items()
        ]
        monkeypatch.setattr(
            families.importlib.metadata,
            "entry_points",
            lambda group=None: [e for e in eps if group in (None, e.group)],
        )
        families.refresh()

    yield install
    monkeypatch.undo()
    families.refresh()


# Where a test's folder says what it is (tests/reliability: kill/resume, load, fuzzing), and which
# tests share one thing under `pytest -n N --dist loadgroup`: tests/server's session server and
# tests/browser's Chromium and page server. Other tests use their own temporary folders, free
# loopback ports and PostgreSQL schemas, so they run on any worker; the embedded model's tests
# too: each worker loads the model once, and `make test` gives it one thread per worker
# (WARGRAPH_LLAMA_THREADS=1), so two workers' models fill two cores without spinning. (Grouped,
# the model's tests ran one after another on one worker: the suite's longest path.)
_FOLDER_MARKS = {"reliability": "reliability"}
_FOLDER_GROUPS = ("server", "browser")


# tryfirst: pytest-xdist reads the groups in its own pytest_collection_modifyitems, which pytest
# calls before a conftest's plain one (a group added after it was never seen).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    tests = os.path.dirname(__file__)
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        folder = os.path.relpath(str(item.path), tests).split(os.sep)[0]
        if folder in _FOLDER_MARKS:
            item.add_marker(_FOLDER_MARKS[folder])
        grouped = item.get_closest_marker("xdist_group")
        if grouping and folder in _FOLDER_GROUPS and not grouped:
            item.add_marker(pytest.mark.xdist_group(folder))


class _GroupsInNodeIds:
    """pytest-xdist 3.8 tells the controller a test's group by appending `@group` to its node id,
    written to `item._nodeid`; pytest 9.2 keeps the id in `item._id` (a NodeId), so the suffix
    never arrived and `--dist loadgroup` grouped nothing (pytest-xdist issue #1386). Runs after
    xdist's hook and appends the suffix where it is missing, the way xdist spells it."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not getattr(config.option, "loadgroup", False):  # set on xdist's loadgroup workers
            return
        from _pytest.nodeid import NodeId

        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})  # fmt: skip
            suffix = "@" + "_".join(names)
            if names and not item.nodeid.endswith(suffix) and isinstance(item._id, NodeId):
                item._id = NodeId.parse(item.nodeid + suffix)


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_GroupsInNodeIds(), "wargraph-xdist-group-ids")
