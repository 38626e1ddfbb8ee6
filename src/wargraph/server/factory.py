"""The graph factories a LangGraph server calls: a family's graph for a run.

Each family module (`wargraph.graphs.<family>`) exports `graph`, built for its default scenario,
and `build(scenario)`: a game graph has one agent node per seat, so another scenario may need
another graph. langgraph-api calls a factory with the run's config (assistant config merged with
the run's), so an assistant or a run selects a scenario with
`config={"configurable": {"scenario": NAME | {inline scenario}, "overrides": {...}}}` (a name
of a shipped or registered scenario, never a path: see `catalog`);
with neither, a game kept in the server's store (`serve --db`) gets the graph of its stored
scenario (`shared.scenario_of`), anything else the module's own `graph`. Thread reads use the thread's stored config, so
they see the same graph as the runs of that thread.

A factory gives an async context manager (langgraph-api enters it for each use): a cache miss
builds in a worker thread (scenario files are read from disk, which the server's event loop must
not do), and a run of a game kept in a wargraph store holds the game's lease while it runs
(`wargraph.server.stored`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph_sdk.runtime import ServerRuntime

import wargraph.kernel.families as families
from wargraph.kernel.scenario import ScenarioError
from wargraph.server.catalog import open_scenario
from wargraph.server.shared import scenario_of
from wargraph.server.stored import run_lease

log = logging.getLogger(__name__)

_modules: dict[str, Any] = {}
_errors: dict[str, str] = {}
_cache: OrderedDict[str, Any] = OrderedDict()
_CACHE_SIZE = 32


class GraphUnavailable(RuntimeError):
    """A family whose module is missing or fails to import, or a scenario it cannot build."""


def _load(family: str) -> Any:
    """Import a family module once; remember why it failed, so other graphs still serve."""
    if family in _modules:
        return _modules[family]
    if family in _errors:
        raise GraphUnavailable(_errors[family])
    try:
        module = families.graph_module(family)
        if not hasattr(module, "graph") or not hasattr(module, "build"):
            raise AttributeError(f"{module.__name__} must export `graph` and `build`")
    except Exception as exc:  # any import-time failure: this graph is off, the server stays up
        _errors[family] = (
            f"game family {family!r} is not available ({type(exc).__name__}: {exc}); "
            "reinstall wargraph, or leave this graph out of langgraph.json"
        )
        log.warning(_errors[family])
        raise GraphUnavailable(_errors[family]) from None
    _modules[family] = module
    return module


def available() -> dict[str, str | None]:
    """Each family and why it cannot be served (None when it can). Imports the modules."""
    out: dict[str, str | None] = {}
    for family in families.families():
        try:
            _load(family)
            out[family] = None
        except GraphUnavailable as err:
            out[family] = str(err)
    return out


def selection(config: RunnableConfig | None) -> tuple[Any, dict[str, Any]]:
    """The scenario and overrides a config asks for (None, {} when it asks for none)."""
    configurable = (config or {}).get("configurable") or {}
    scenario = configurable.get("scenario") or None
    overrides = configurable.get("overrides") or {}
    if scenario is not None and not isinstance(scenario, str | dict):
        raise GraphUnavailable("configurable.scenario: expected a scenario name or a mapping")
    if not isinstance(overrides, dict):
        raise GraphUnavailable("configurable.overrides: expected a mapping of dotted keys")
    return scenario, overrides


def build_compiled(family: str, scenario: Any, overrides: dict[str, Any]) -> Any:
    """Build and compile (without a checkpointer: the server brings its own). Sync: file I/O."""
    module = _load(family)
    try:
        scenario = scenario or getattr(module, "DEFAULT_SCENARIO", None)
        if scenario is None:
            raise GraphUnavailable("configurable.scenario: this graph needs a scenario name")
        sc = open_scenario(scenario, overrides)
        if sc.family != family:
            raise GraphUnavailable(
                f"the scenario is of family {sc.family!r}; run it on the {sc.family!r} graph"
            )
        return module.build(sc).compile()
    except ScenarioError as err:
        raise GraphUnavailable(f"configurable.scenario: {err}") from None


async def graph_for(family: str, config: RunnableConfig | None) -> Any:
    """The graph for a request; a bad selection is a 422 with the reason, not a server error."""
    try:
        return await _graph_for(family, config)
    except GraphUnavailable as err:
        from starlette.exceptions import HTTPException

        raise HTTPException(status_code=422, detail=str(err)) from None


async def _graph_for(family: str, config: RunnableConfig | None) -> Any:
    module = _load(family)
    scenario, overrides = selection(config)
    if scenario is None and not overrides:
        # a game kept in the server's store is played with its stored scenario's graph (a
        # game adopted from another server of the store names none in its config)
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        scenario = await scenario_of(str(thread)) if thread else None
        if scenario is None:
            return module.graph
    key = json.dumps([family, scenario, overrides], sort_keys=True, default=str)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    compiled = await asyncio.to_thread(build_compiled, family, scenario, overrides)
    _cache[key] = compiled
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return compiled


@contextlib.asynccontextmanager
async def serving(
    family: str, config: RunnableConfig | None, runtime: ServerRuntime | None = None
) -> AsyncIterator[Any]:
    """What a graph factory gives langgraph-api: the graph, and for a run of a game kept in a
    wargraph store (`wargraph serve --db`), the game's lease while the run lasts."""
    graph = await graph_for(family, config)
    async with run_lease(config, runtime):
        yield graph


def served_graph(family: str) -> Callable[..., Any]:
    """A family's graph factory for a LangGraph server (`graph.py:make_graph` in langgraph.json):
    the module's own `graph`, or the scenario an assistant or a run names in
    `configurable.scenario`, and a stored game's lease while its run lasts. Everything it keeps
    lives in this module, so a graph module loaded again by file path (as LangGraph's
    loader does) shares one cache and one family registry with the package."""

    def make_graph(
        config: RunnableConfig, runtime: ServerRuntime
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        return serving(family, config, runtime)

    make_graph.__name__ = make_graph.__qualname__ = family
    with contextlib.suppress(families.FamilyError):
        make_graph.__doc__ = families.get(family).description or f"The {family} game."
    return make_graph
