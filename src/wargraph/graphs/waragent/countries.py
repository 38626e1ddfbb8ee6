"""The Cast part: every country acts in every phase, reads the system prompt of its agent
setting, and sees its own board and stick beyond its events."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wargraph.graphs.waragent.prompt_text import action_menu, describe_board
from wargraph.graphs.waragent.scenario import war, world_of
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt
from wargraph.worlds import Cast

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


class Countries(Cast):
    """The countries, each on its own beliefs (the secretary seat sees only its events)."""

    def actors(self, table: Table, phase: str) -> list[str]:
        return war(table).countries

    def system(self, table: Table, role: str) -> str:
        s = war(table)
        # The action list is our own fixed text (no scenario words), so it may sit in the system
        # prompt, where it is part of the prefix every country's prompt shares.
        return render_prompt(
            f"waragent_system_{s.setting_of(role)}", table.variant(role), actions=action_menu()
        )

    def private_view(self, table: Table, role: str) -> str:
        world = world_of(table)
        if role not in world.beliefs:
            return ""
        board = quote(describe_board(world.beliefs[role], role))
        return f"What you know now (your board and stick):\n{board}"
