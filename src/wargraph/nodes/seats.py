"""Which seats a phase may ask, declared on the node so a graph draws only real edges."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.world import World

SeatsOf = Callable[["Scenario", "World"], list[str]]


def nobody(scenario: Scenario, world: World) -> list[str]:
    return []


def players(scenario: Scenario, world: World) -> list[str]:
    return [r for r in scenario.roles if r != scenario.control.name]


def control(scenario: Scenario, world: World) -> list[str]:
    return [scenario.control.name]


def everyone(scenario: Scenario, world: World) -> list[str]:
    return list(scenario.roles)


def asks(seats: SeatsOf, *, loops: bool = False) -> Callable[[Any], Any]:
    """Mark a phase function with the seats it may ask (and whether it may run itself again
    before the next phase, as negotiation exchanges do)."""

    def mark(fn: Any) -> Any:
        fn.seats = seats
        fn.loops = loops
        return fn

    return mark
