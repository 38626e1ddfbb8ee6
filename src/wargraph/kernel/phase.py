"""A phase as the graph sees it: the function that plays it, the seats it may ask and whether it
may run again before the next phase. Typed here rather than set as attributes on a function, so
a phase's declaration is checked and read one way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.table import Table
    from wargraph.kernel.world import World

PhaseFn = Callable[[Any, "Table"], dict[str, Any]]
SeatsOf = Callable[["Scenario", "World"], list[str]]


@dataclass(frozen=True)
class PhaseSpec:
    """`run(state, table)` returns the phase's state update. `seats(scenario, world)` names the
    seats it may ask (None: every seat of the game), so a graph draws only real edges; `loops`:
    it may run itself again before the next phase (negotiation exchanges)."""

    run: PhaseFn
    seats: SeatsOf | None = None
    loops: bool = False

    def __call__(self, state: Any, table: Table) -> dict[str, Any]:
        return self.run(state, table)


def phase_spec(phase: PhaseSpec | PhaseFn) -> PhaseSpec:
    """A phase function of a game's own (any seat, no loop) or a declared PhaseSpec."""
    return phase if isinstance(phase, PhaseSpec) else PhaseSpec(phase)
