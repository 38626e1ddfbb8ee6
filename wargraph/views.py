"""`view_for`: the only way an agent's context is built; information asymmetry lives here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wargraph.scenario import Scenario
from wargraph.state import EVERYONE, Event, GameState


def can_see(event: Event, groups: set[str]) -> bool:
    audience = event.get("audience") or [EVERYONE]
    return EVERYONE in audience or bool(groups.intersection(audience))


def visible_events(events: Iterable[Event], groups: set[str]) -> list[Event]:
    return [e for e in events if can_see(e, groups)]


def apply_memory(events: list[Event], policy: str, current_round: int) -> list[Event]:
    """full: everything; last_round: setup + last round + this round; diary: setup + this round."""
    if policy == "full":
        return events
    keep_from = current_round - 1 if policy == "last_round" else current_round
    return [e for e in events if e["round"] == 0 or e["round"] >= keep_from]


def view_for(
    state: GameState,
    role: str,
    scenario: Scenario,
    *,
    policy: str | None = None,
) -> list[Event]:
    """The events `role` may see (its own, its teams', public ones), cut by its memory policy.
    `policy="record"` is the whole record, for the control's questions after the game."""
    if policy == "record":
        return list(state.get("events", []))
    groups = scenario.groups_of(role)
    try:
        role_policy = scenario.role(role).memory
    except KeyError:
        role_policy = None
    chosen = policy or role_policy or scenario.memory
    seen = visible_events(state.get("events", []), groups)
    return apply_memory(seen, chosen, state.get("round", 1))


def quote(text: str) -> str:
    """Text from agents and scenario files is data: quote every line so it cannot pose as ours."""
    lines = str(text).splitlines() or [""]
    return "\n".join("> " + line for line in lines)


def render_events(events: list[Event], *, empty: str = "(nothing yet)") -> str:
    if not events:
        return empty
    blocks = []
    for e in events:
        to = "" if EVERYONE in e["audience"] else f" to {', '.join(e['audience'])}"
        head = f"[round {e['round']}, {e['kind']} from {e['author']}{to}]"
        blocks.append(f"{head}\n{quote(e['text'])}")
    return "\n".join(blocks)


def render_memory(memory: list[dict[str, Any]], *, limit: int = 6) -> str:
    """The agent's private notes (diary entries), newest last, bounded in number."""
    if not memory:
        return ""
    return "\n".join(quote(m.get("text", "")) for m in memory[-limit:])
