"""Compose a game from the phase library: a scenario's `flow.phases` become the spine of a round,
in any order and under any node name (`{talks: negotiate}` mounts `negotiate` as `talks`)."""

from __future__ import annotations

from typing import Any

from wargraph.kernel.graphkit import GameGraph, Phase, build_game, default_graphs
from wargraph.kernel.scenario import Scenario, ScenarioError, load_scenario
from wargraph.kernel.world import NARRATIVE
from wargraph.nodes.library import LIBRARY

DEFAULT_SCENARIO = "summit"


def mounted(scenario: Scenario) -> dict[str, Phase]:
    """`flow.phases` as {node name: library phase}; a clear error for unknown or repeated ones."""
    if scenario.flow is None:
        raise ScenarioError("flow: this scenario declares no flow (phases, rounds)")
    spine: dict[str, Phase] = {}
    for entry in scenario.flow.phases:
        name, kind = (entry, entry) if isinstance(entry, str) else next(iter(entry.items()))
        if kind not in LIBRARY:
            raise ScenarioError(
                f"flow.phases: unknown phase(s) [{kind!r}] (known: {sorted(LIBRARY)})"
            )
        if name in spine or name in ("setup", "analyze") and kind != name:
            raise ScenarioError(f"flow.phases: the node name {name!r} is used twice")
        spine[name] = LIBRARY[kind]
    return spine


def build(scenario: Scenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = load_scenario(scenario)
    spine = mounted(sc)
    end = {} if "analyze" in spine else {"analyze": LIBRARY["analyze"]}
    return build_game(spine, roster=list(sc.roles), world=NARRATIVE, scenario=sc, end=end)


# `builder` (for tests) and `graph` (for the server) are built on first use, not at import
__getattr__ = default_graphs(__name__, build)
