"""The parts a world is made of, each with the narrative defaults; a family replaces the parts
whose rules it changes (see `wargraph.worlds.World`)."""

from wargraph.worlds.parts.cast import Cast
from wargraph.worlds.parts.debrief import Debrief
from wargraph.worlds.parts.diary import Diary
from wargraph.worlds.parts.opening import Opening
from wargraph.worlds.parts.orders import FALLBACK_PLAN, Orders
from wargraph.worlds.parts.press import Press
from wargraph.worlds.parts.resolution import Narration, Resolution
from wargraph.worlds.parts.secretary import Secretary

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
]
