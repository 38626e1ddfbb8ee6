"""Which seats a phase may ask, declared on the node so a graph draws only real edges."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wargraph.kernel.phase import PhaseFn, PhaseSpec, SeatsOf

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.world import World


def nobody(scenario: Scenario, world: World) -> list[str]:
    return []


def players(scenario: Scenario, world: World) -> list[str]:
    return [r for r in scenario.roles if r != scenario.control.name]


def control(scenario: Scenario, world: World) -> list[str]:
    return [scenario.control.name]


def everyone(scenario: Scenario, world: World) -> list[str]:
    return list(scenario.roles)


def asks(seats: SeatsOf, *, loops: bool = False) -> Callable[[PhaseFn], PhaseSpec]:
    """Declare a phase function with the seats it may ask (and whether it may run itself again
    before the next phase, as negotiation exchanges do): the function becomes a `PhaseSpec`."""

    def declare(fn: PhaseFn) -> PhaseSpec:
        return PhaseSpec(fn, seats=seats, loops=loops)

    return declare
