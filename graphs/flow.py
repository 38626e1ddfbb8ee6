"""Compose a game from the phase library: a scenario's `flow.phases` become the spine of a round."""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.graph import StateGraph

from wargraph.graphkit import Phase, build_game
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.inject import inject
from wargraph.nodes.negotiate import negotiate
from wargraph.nodes.order import order
from wargraph.nodes.summarize import summarize
from wargraph.scenario import Scenario, ScenarioError, load_scenario

DEFAULT_SCENARIO = "summit"


def library(scenario: Scenario) -> dict[str, Phase]:
    """The phases a flow may name; options come from the scenario's `flow` section."""
    exchanges = scenario.flow.exchanges if scenario.flow else 1
    return {
        "inject": inject,
        "negotiate": partial(negotiate, exchanges=exchanges),
        "summarize": summarize,
        "order": order,
        "adjudicate": adjudicate,
    }


def build(scenario: Scenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> StateGraph:
    sc = load_scenario(scenario)
    if sc.flow is None:
        raise ScenarioError("flow: this scenario declares no flow (phases, rounds)")
    phases = library(sc)
    unknown = [p for p in sc.flow.phases if p not in phases]
    if unknown:
        raise ScenarioError(f"flow.phases: unknown phase(s) {unknown} (known: {sorted(phases)})")
    if len(set(sc.flow.phases)) != len(sc.flow.phases):
        raise ScenarioError("flow.phases: a phase may appear once per round")
    spine = {p: phases[p] for p in sc.flow.phases}
    return build_game(spine, roster=list(sc.roles), end={"analyze": analyze})


builder = build()
graph = builder.compile()
