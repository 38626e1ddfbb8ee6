"""The public API for a game's rules: `World` and its parts, `Question` and `Check`."""

from wargraph.kernel.parts import (
    FALLBACK_PLAN,
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
from wargraph.kernel.question import (
    ADJUDICATE,
    NEGOTIATE,
    ORDER,
    SECRETARY,
    SUMMARIZE,
    Check,
    Question,
    side_name,
)
from wargraph.kernel.world import NARRATIVE, World

# This module was a package: its old submodules (`wargraph.worlds.diplomacy.engine` ...) still
# import for one release through wargraph._moved, which needs the parent to look like a package.
__path__: list[str] = []  # searched by nothing: empty

__all__ = [
    "ADJUDICATE",
    "FALLBACK_PLAN",
    "NARRATIVE",
    "NEGOTIATE",
    "ORDER",
    "SECRETARY",
    "SUMMARIZE",
    "Cast",
    "Check",
    "Debrief",
    "Diary",
    "Narration",
    "Opening",
    "Orders",
    "Press",
    "Question",
    "Resolution",
    "Secretary",
    "World",
    "side_name",
]
