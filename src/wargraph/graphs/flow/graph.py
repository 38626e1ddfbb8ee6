"""Compose a game from the phase library: a scenario's `flow.phases` become the spine of a round,
in any order and under any node name (`{talks: negotiate}` mounts `negotiate` as `talks`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.graphkit import GameGraph, Phase, build_game
from wargraph.kernel.parts import Orders
from wargraph.kernel.phase import phase_spec
from wargraph.kernel.scenario import FlowMount, Scenario, ScenarioError, load_scenario
from wargraph.kernel.world import NARRATIVE, World
from wargraph.nodes.library import LIBRARY
from wargraph.server.factory import served_graph

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

DEFAULT_SCENARIO = "summit"


@dataclass(frozen=True)
class FlowOrders(Orders):
    """The narrative `Orders` of a flow's `order` mount, asking `seats` (when named) in order."""

    seats: tuple[str, ...] = ()

    def actors(self, table: Table) -> list[str]:
        return list(self.seats) if self.seats else super().actors(table)


def _entries(scenario: Scenario) -> list[tuple[str, FlowMount]]:
    assert scenario.flow is not None
    out = []
    for entry in scenario.flow.phases:
        name, mount = (entry, entry) if isinstance(entry, str) else next(iter(entry.items()))
        out.append((name, FlowMount(phase=mount) if isinstance(mount, str) else mount))
    return out


def world_of(scenario: Scenario) -> World:
    """The narrative world, with one `Orders` per `order` mount when a mount has options."""
    mounts = [(n, m) for n, m in _entries(scenario) if m.phase == "order"]
    if not any(m.sequential or m.seats for _, m in mounts):
        return NARRATIVE
    for name, m in mounts:
        unknown = sorted(set(m.seats or []) - set(scenario.players))
        if unknown:
            raise ScenarioError(f"flow.phases: {name}: seats {unknown} are not players")
    orders = {n: FlowOrders(sequential=m.sequential, seats=tuple(m.seats or ())) for n, m in mounts}
    return dataclasses.replace(NARRATIVE, name="flow", orders=orders)


def mounted(scenario: Scenario) -> dict[str, Phase]:
    """`flow.phases` as {node name: library phase}; a clear error for unknown or repeated ones."""
    if scenario.flow is None:
        raise ScenarioError("flow: this scenario declares no flow (phases, rounds)")
    spine: dict[str, Phase] = {}
    for name, mount in _entries(scenario):
        kind = mount.phase
        if kind != "order" and (mount.sequential or mount.seats):
            raise ScenarioError(
                f"flow.phases: {name}: sequential and seats are options of order, not {kind}"
            )
        if kind not in LIBRARY:
            raise ScenarioError(
                f"flow.phases: unknown phase(s) [{kind!r}] (known: {sorted(LIBRARY)})"
            )
        if name in spine or name in ("setup", "analyze") and kind != name:
            raise ScenarioError(f"flow.phases: the node name {name!r} is used twice")
        spine[name] = _asking_only(LIBRARY[kind], mount)
    return spine


def _asking_only(phase: Phase, mount: FlowMount) -> Phase:
    """An `order` mount with `seats` declares only the seats it asks (those seats, and the
    members and leaders of the scenario's teams, whom `order` always asks), so the graph draws
    its edges to them alone, not to every player."""
    if not mount.seats:
        return phase
    named = list(mount.seats)

    def seats(scenario: Scenario, world: World) -> list[str]:
        teams = [[*t.members, t.leader] for t in scenario.teams.values()]
        return list(dict.fromkeys([*named, *(m for t in teams for m in t)]))

    return dataclasses.replace(phase_spec(phase), seats=seats)


def build(scenario: Scenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> GameGraph:
    sc = load_scenario(scenario)
    spine = mounted(sc)
    end = {} if "analyze" in spine else {"analyze": LIBRARY["analyze"]}
    return build_game(spine, roster=list(sc.roles), world=world_of(sc), scenario=sc, end=end)


# LangGraph's convention: the default scenario's `builder` (tests) and `graph` (a server);
# langgraph.json serves `make_graph`: another scenario per run, a stored game's lease.
builder = build()
graph = builder.compile()
make_graph = served_graph("flow")
