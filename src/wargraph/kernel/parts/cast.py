"""`Cast`: who acts in each phase, the system prompt of a seat, and what it sees of the world."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wargraph.kernel.question import ORDER
from wargraph.kernel.state import Event
from wargraph.kernel.views import render_events
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Cast:
    """Players on no team act for themselves and a team through its leader (negotiate,
    summarize); orders come from the scenario's actors (teams included: their members propose,
    the leader combines). Every seat reads the shared player system prompt."""

    def actors(self, table: Table, phase: str) -> list[str]:
        """Who acts in a phase of this kind (`table.phase` tells two mounts apart), in the
        file's order."""
        s = table.scenario
        if phase == ORDER:
            return list(s.actors)
        return [a if a in s.players else s.teams[a].leader for a in s.actors]

    def system(self, table: Table, role: str) -> str:
        return render_prompt("player_system", table.variant(role))

    def private_view(self, table: Table, role: str) -> str:
        """What only `role` knows of the world beyond its events (e.g. its beliefs)."""
        return ""

    def render_view(self, table: Table, role: str, events: list[Event]) -> str:
        """The seat's context from its visible events (already cut by its memory policy)."""
        text = render_events(events, current_round=table.round, budget=table.view_budget(role))
        private = self.private_view(table, role)
        return f"{text}\n\n{private}" if private else text
