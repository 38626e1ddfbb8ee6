"""langgraph.json names every game graph by file path, and LangGraph's own loader (what `langgraph
dev` runs: `langgraph_api.graph._graph_from_spec`) loads each entry: `graph.py:graph` as the
compiled default game, `graph.py:make_graph` as the per-run factory the server uses. Loading a
module a second time by its path shares the package's family registry and graph cache."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import pytest
from langgraph.pregel import Pregel

from tests.aio import run

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = json.loads((ROOT / "langgraph.json").read_text())["graphs"]


@pytest.fixture(scope="module")
def load():
    # what `langgraph dev` sets before it imports the API (its in-memory runtime)
    for key, value in {"REDIS_URI": "fake", "DATABASE_URI": ":memory:"}.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("MIGRATIONS_PATH", "__inmem")
    from langgraph_api.graph import GraphSpec, _graph_from_spec

    def load(gid: str, spec: str):
        path, _, variable = spec.rpartition(":")
        return _graph_from_spec(GraphSpec(gid, path=str(ROOT / path), variable=variable))

    return load


@pytest.mark.parametrize("gid", sorted(ENTRIES))
def test_langgraphs_loader_loads_each_entry_by_file_path(load, gid):
    spec = ENTRIES[gid]
    assert spec == f"./src/wargraph/graphs/{gid}/graph.py:make_graph"
    families = sys.modules.get("wargraph.kernel.families")
    package = importlib.import_module(f"wargraph.graphs.{gid}.graph")

    default = load(gid, spec.replace(":make_graph", ":graph"))
    assert isinstance(default, Pregel)
    assert any(n.startswith("agent_") for n in default.get_graph().nodes)

    factory = load(gid, spec)
    assert callable(factory) and not isinstance(factory, Pregel)

    async def served():
        async with factory({"configurable": {}}, None) as graph:
            return graph

    # the factory serves the package's own graph: one registry, one cache, not a second copy
    assert run(served()) is package.graph
    assert families is None or sys.modules["wargraph.kernel.families"] is families
