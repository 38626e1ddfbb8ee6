"""Full-press Diplomacy as a World (`DIPLOMACY`), made of the package's parts: the powers, a new
engine game, negotiation under the press rules, diaries, orders one per unit, the engine as the
secretary and as the adjudicator, and the scores. One round is one engine phase (S1901M, F1901M,
F1901R, W1901A ...); retreats and adjustments have no talks and no diaries.

The graph state keeps only the engine's saved-game dict (`world["diplomacy"]`), never a `Game`
(not picklable, slow to copy); the engine at a phase is loaded once and shared by every step
that asks about it (`phase.position_of`). Nothing is drawn during play: the debrief writes the
measures and maps at the end, when the run has an output folder.
"""

from __future__ import annotations

import wargraph.graphs.diplomacy.schemas as schemas  # noqa: F401  (registers the answer schemas)
from wargraph.graphs.diplomacy.adjudication import Adjudication
from wargraph.graphs.diplomacy.debrief import Scores
from wargraph.graphs.diplomacy.diary import Diaries
from wargraph.graphs.diplomacy.negotiation import Negotiation
from wargraph.graphs.diplomacy.powers import Powers
from wargraph.graphs.diplomacy.scenario import DiplomacyScenario, NewGame
from wargraph.graphs.diplomacy.secretary import EngineSecretary
from wargraph.graphs.diplomacy.unit_orders import UnitOrders
from wargraph.kernel.world import World

__all__ = ["DIPLOMACY", "DiplomacyScenario"]  # the World, and the family's scenario class

DIPLOMACY = World(
    "diplomacy",
    cast=Powers(),
    opening=NewGame(),
    press=Negotiation(),
    diary=Diaries(),
    orders=UnitOrders(),
    secretary=EngineSecretary(),
    resolution=Adjudication(),
    debrief=Scores(),
)
