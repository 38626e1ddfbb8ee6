"""The Resolution part: every country's actions applied at once (`rounds`), each recorded as an
event for the countries that observe it, and the game stopped when the board and stick stay
still."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wargraph.graphs.waragent.actions import Action
from wargraph.graphs.waragent.board import observers
from wargraph.graphs.waragent.orders import load
from wargraph.graphs.waragent.rounds import apply_round, should_stop
from wargraph.graphs.waragent.scenario import war, world_of, world_update
from wargraph.worlds import Resolution

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


def _action_text(actor: str, a: Action) -> str:
    what = a.type.replace("_", " ")
    head = (
        f"{actor}: {what}"
        if a.type in ("wait", "general_mobilization")
        else f"{actor}: {what} -> {a.target}"
    )
    return head + (f'\nMessage: "{a.message.strip()}"' if a.message.strip() else "")


class SimultaneousRound(Resolution):
    """By code alone: the true board takes every action, each country's beliefs what reached
    it; a round limit or a still board ends the game."""

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        s = war(table)
        cfg = s.waragent
        actions = {c: load(v) for c, v in proposals.items()}
        new = apply_round(world_of(table), actions, cfg.visibility_map())
        events = []
        for c in s.countries:
            for i, a in enumerate(actions.get(c, [])):
                if a.type == "wait":
                    continue
                seen = observers(c, a, s.countries, cfg.visibility_map())
                events.append(
                    table.event(
                        kind="message" if a.type == "send_message" else "action",
                        author=c,
                        text=_action_text(c, a),
                        audience=["*"] if seen == s.countries else seen,
                        data={"action": a.model_dump()},
                        key=str(i),
                    )
                )
        update: dict[str, Any] = {"world": world_update(new)}
        reason = should_stop(new, s.rounds, cfg.stop_unchanged)
        if reason and "unchanged" in reason:
            update["done"] = True
            update["world"]["stopped"] = reason
            events.append(
                table.event(
                    kind="narration",
                    author=s.control.name,
                    text=f"The game ends: {reason}.",
                )
            )
        update["events"] = events
        return update
