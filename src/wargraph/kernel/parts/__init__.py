"""The parts a world is made of, each with the narrative defaults; a family replaces the parts
whose rules it changes (see `wargraph.worlds.World`)."""

from wargraph.kernel.parts.cast import Cast
from wargraph.kernel.parts.debrief import Debrief
from wargraph.kernel.parts.diary import Diary
from wargraph.kernel.parts.opening import Opening
from wargraph.kernel.parts.orders import FALLBACK_PLAN, Orders, in_turn
from wargraph.kernel.parts.press import Press
from wargraph.kernel.parts.resolution import Narration, Resolution
from wargraph.kernel.parts.secretary import Secretary

__all__ = [
    "FALLBACK_PLAN",
    "Cast",
    "Debrief",
    "Diary",
    "Narration",
    "Opening",
    "Orders",
    "Press",
    "Resolution",
    "Secretary",
    "in_turn",
]
