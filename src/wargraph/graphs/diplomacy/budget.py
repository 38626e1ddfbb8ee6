"""Token budgets for the sections of a power's context, enforced when the context is rendered.

These are the small profile's budgets (wargraph.models.profiles): a capable seat's view is sized
by its profile's context budget instead, every text whole (`view.power_context`).

The order prompt must stay small through a whole game whatever the powers write (issue 12: at
most 1,500 tokens through 1905 with 80-150-word diaries and messages). Each section the world
renders has a budget (`CONTEXT_BUDGETS`, in tokens of the embedded model's tokenizer); a section
over it is cut (`fit`) or rendered in less detail by its maker. The count is an estimate
(`estimate_tokens`): the world cannot load a tokenizer for whatever model plays, and the estimate
is calibrated on the embedded model's (SmolLM2) so it errs high on the board's upper-case codes
and on prose; `benchmarks/diplomacy_lean.py` counts the real tokens of every section.
"""

from __future__ import annotations

import re
from functools import lru_cache

from wargraph.kernel.views import estimate_tokens

__all__ = ["CONTEXT_BUDGETS", "estimate_tokens", "fit", "fit_lines"]

# Budgets per section (the section's heading in the context). The fixed parts of an order prompt
# take about 450 tokens (system 143, the game 62, the brief 80, the question 130) and the seat's
# own latest note up to about 150 (the kernel's), which leaves these.
CONTEXT_BUDGETS: dict[str, int] = {
    "The board": 280,  # bounded by the map (34 centres); over it, counts only
    "Last phase": 110,
    "Public messages this phase": 80,
    "Your private talks this phase": 120,
    "Your diary": 130,
    "Your units": 280,
}

ELLIPSIS = " …"


@lru_cache(maxsize=4096)
def fit(text: str, budget: int) -> str:
    """`text` cut to at most `budget` estimated tokens, at a word, marked with an ellipsis."""
    if estimate_tokens(text) <= budget:
        return text
    room = max(budget - estimate_tokens(ELLIPSIS), 0)
    used, end = 0, 0
    for m in re.finditer(r"\S+\s*", text):
        cost = estimate_tokens(m.group())
        if used + cost > room:
            break
        used, end = used + cost, m.end()
    return text[:end].rstrip() + ELLIPSIS


def fit_lines(lines: list[str], budget: int, *, dropped: str = "({n} more not shown)") -> list[str]:
    """As many whole lines as fit in `budget` (in order), then a note of how many were left."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        cost = estimate_tokens(line) + 1
        rest = len(lines) - i
        note = estimate_tokens(dropped.format(n=rest)) if rest > 1 else 0
        if used + cost + note > budget:
            return out + [dropped.format(n=rest)]
        out.append(line)
        used += cost
    return out
