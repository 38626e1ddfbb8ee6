"""Assemble a game graph: `setup`, phase nodes (the spine) and one agent node per seat.

A phase node returns a state update. If it sets `asks`, the graph fans out with `Send` to the
agent nodes of those roles, which route back to the same phase (by `state["phase"]`), so the
phase collects their answers from `pending`. With no asks it moves on to `next`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, Send

from wargraph.agents import agent_node_name, make_agent_node
from wargraph.context import GameContext, context_of
from wargraph.deciders import Ask
from wargraph.scenario import Scenario, ScenarioError, load_scenario
from wargraph.state import CLEAR, GameInput, GameState, make_event
from wargraph.table import Table, scenario_of

Phase = Callable[[GameState, Table], dict[str, Any]]
Opening = Callable[[Scenario, dict[str, Any]], dict[str, Any]]


class KitState(GameState, total=False):
    asks: list[Ask]
    next: str


def opening_events(scenario: Scenario) -> list:
    """Round 0: the setting for everyone, and each seat's private brief (persona, goals, secrets)."""
    events = [
        make_event(
            round=0,
            phase="setup",
            kind="setting",
            author="scenario",
            text=f"{scenario.title}\n{scenario.setting}",
        )
    ]
    for name, role in scenario.players.items():
        brief = [f"You are {name}."]
        if role.persona_text:
            brief.append(f"Persona: {role.persona_text}")
        if role.goals:
            brief.append("Goals: " + "; ".join(role.goals))
        if role.secrets:
            brief.append("Known only to you: " + " ".join(role.secrets))
        events.append(
            make_event(
                round=0,
                phase="setup",
                kind="brief",
                author="scenario",
                text="\n".join(brief),
                audience=[name],
                key=name,
            )
        )
    return events


def make_setup(roster: list[str], first: str, opening: Opening | None) -> Callable:
    def setup(state: GameInput, runtime: Runtime[GameContext]) -> dict[str, Any]:
        if state.get("spec"):  # resumed or forked games keep their scenario
            return {"next": first, "asks": []}
        try:
            overrides = dict(state.get("overrides") or {})
            if state.get("rounds"):
                overrides["rounds"] = state["rounds"]
            scenario = load_scenario(state.get("scenario") or "", overrides)
        except ScenarioError as err:
            return {"error": str(err), "done": True, "next": END, "asks": []}
        missing = sorted(set(scenario.roles) - set(roster))
        if missing:
            return {
                "error": (
                    f"this graph was built for the seats {sorted(roster)}; the scenario also has "
                    f"{missing}. Build the graph for this scenario (graphs.<family>.build(scenario))."
                ),
                "done": True,
                "next": END,
                "asks": [],
            }
        update: dict[str, Any] = {
            "spec": scenario.model_dump(),
            "round": 1,
            "done": False,
            "events": opening_events(scenario),
            "pending": {CLEAR: True},
            "next": first,
            "asks": [],
        }
        if opening:
            update.update(opening(scenario, update))
        return update

    return setup


def make_phase(name: str, fn: Phase, spine: list[str], end: list[str]) -> Callable:
    def phase(state: KitState, runtime: Runtime[GameContext]) -> dict[str, Any]:
        table = Table(scenario_of(state), context_of(runtime), {**state, "phase": name})
        update = fn(table.state, table) or {}
        update["phase"] = name
        update.setdefault("asks", [])
        if not update["asks"] and "next" not in update:
            update.update(_after(name, table, update, spine, end))
        return update

    phase.__name__ = name
    return phase


def _after(name: str, table: Table, update: dict[str, Any], spine: list[str], end: list[str]):
    """Where a finished phase leads: the next spine phase, the next round, or the end phases."""
    if name in end:
        i = end.index(name)
        return {"next": end[i + 1] if i + 1 < len(end) else END}
    finished = update.get("done") or table.state.get("done")
    i = spine.index(name)
    if not finished and i + 1 < len(spine):
        return {"next": spine[i + 1]}
    if not finished and table.round < table.scenario.rounds:
        return {"next": spine[0], "round": table.round + 1}
    return {"next": end[0] if end else END, "done": True}


def route_phase(state: KitState) -> list[Send] | str:
    asks = state.get("asks") or []
    if not asks:
        return state.get("next") or END
    by_role: dict[str, list[Ask]] = {}
    for a in asks:
        by_role.setdefault(a["role"], []).append(a)
    return [Send(agent_node_name(r), {"asks": rs}) for r, rs in by_role.items()]


def route_back(state: KitState) -> str:
    return state["phase"]


def build_game(
    spine: dict[str, Phase],
    roster: list[str],
    *,
    end: dict[str, Phase] | None = None,
    state_schema: type = KitState,
    opening: Opening | None = None,
) -> StateGraph:
    """`spine`: the phases of one round, in order; `end`: phases after the last round (analysis);
    `roster`: every seat that can be asked."""
    end = end or {}
    phases = {**spine, **end}
    g = StateGraph(state_schema, context_schema=GameContext, input_schema=GameInput)
    g.add_node("setup", make_setup(roster, next(iter(spine)), opening))
    for name, fn in phases.items():
        g.add_node(name, make_phase(name, fn, list(spine), list(end)))
    retry = RetryPolicy(max_attempts=2, initial_interval=0.5)
    for role in roster:
        g.add_node(agent_node_name(role), make_agent_node(role), retry_policy=retry)
    agent_names = [agent_node_name(r) for r in roster]
    phase_names = list(phases)
    g.add_edge(START, "setup")
    forward = {n: n for n in phase_names + agent_names} | {END: END}
    g.add_conditional_edges("setup", route_phase, forward)
    for name in phase_names:
        g.add_conditional_edges(name, route_phase, forward)
    back = {n: n for n in phase_names}
    for a in agent_names:
        g.add_conditional_edges(a, route_back, back)
    return g
