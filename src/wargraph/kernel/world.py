"""`World`: a game's rules, made of parts that the phase nodes of `src/wargraph/nodes/` consult.

A world holds the rules; the nodes hold the rhythm. Each phase calls one part: `negotiate` the
press, `summarize` the diary, `order` the orders, `secretary_validate` the secretary,
`adjudicate` the resolution, `analyze` the debrief; the cast says who acts in each phase and
what a seat sees, the opening sets the world up and brings the injects. A part never asks anyone
and keeps no state of its own: everything it knows is in `table.state` (`world` holds the
engine state), so resumes, forks and replays need nothing else. Every part has the narrative
game's defaults; a family replaces the parts whose rules it changes:

    BLOTTO = World("blotto", orders=Allocations(task="allocate"), secretary=Budget(...),
                   resolution=Fronts(task="narrate"))

See docs/new-game.md for a walk-through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from wargraph.kernel.parts import (
    Cast,
    Debrief,
    Diary,
    Narration,
    Opening,
    Orders,
    Press,
    Resolution,
    Secretary,
)


@dataclass(frozen=True)
class World:
    """A game's rules as parts; the defaults are the narrative world (players state plans, the
    control narrates, every proposal passes)."""

    name: str = "narrative"
    cast: Cast = field(default_factory=Cast)
    opening: Opening = field(default_factory=Opening)
    press: Press = field(default_factory=Press)
    diary: Diary = field(default_factory=Diary)
    orders: Orders | Mapping[str, Orders] = field(default_factory=Orders)
    """One `Orders` for every mount of `order`, or one per mount name (a turn-based round:
    `{"propose": Offers(), "respond": Replies()}`); the first also reads proposals elsewhere
    (e.g. a revision in `secretary_validate`)."""
    secretary: Secretary = field(default_factory=Secretary)
    resolution: Resolution = field(default_factory=Narration)
    debrief: Debrief = field(default_factory=Debrief)

    def __post_init__(self) -> None:
        if isinstance(self.orders, Mapping) and not self.orders:
            raise ValueError(f"world {self.name!r}: orders: name at least one mount's Orders")

    def orders_at(self, phase: str) -> Orders:
        """The orders of the mount named `phase` (the world's first where none is named)."""
        if isinstance(self.orders, Orders):
            return self.orders
        return self.orders.get(phase) or next(iter(self.orders.values()))


# Crisis and flows: the control narrates; every proposal passes.
NARRATIVE = World()
