"""The powers as the cast: who acts in each engine phase (only movement phases have talks and
diaries; only powers with something to order give orders), their system prompt and their view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wargraph.graphs.diplomacy.phase import info_of, legal_of
from wargraph.graphs.diplomacy.scenario import diplomacy_scenario
from wargraph.graphs.diplomacy.view import power_context
from wargraph.kernel.parts import Cast
from wargraph.kernel.question import NEGOTIATE, ORDER, SUMMARIZE
from wargraph.kernel.state import Event
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Powers(Cast):
    """The powers still alive, each its own seat."""

    def actors(self, table: Table, phase: str) -> list[str]:
        cfg = diplomacy_scenario(table).diplomacy
        info = info_of(table)
        if phase == ORDER:
            return [p for p in info.powers_alive if legal_of(table, p)]
        if info.type != "M":  # retreats and adjustments: no talks, no diary
            return []
        if phase == NEGOTIATE and not cfg.talks:
            return []
        if phase == SUMMARIZE and not cfg.diary:
            return []
        return list(info.powers_alive)

    def system(self, table: Table, role: str) -> str:
        return render_prompt("diplomacy_system", table.variant(role))

    def render_view(self, table: Table, role: str, events: list[Event]) -> str:
        return power_context(table, role, events)
