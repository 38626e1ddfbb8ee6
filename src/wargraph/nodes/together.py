"""`together`: phases of the library asked in one step, mounted as one node. Each runs as if
mounted under its own name (its asks, answers and events are named by it), on the same state:
none sees what another records in that step, and their seats' calls are in flight at once, one
model latency for all instead of one each.

A game chooses it where a phase needs nothing the one before it records: Diplomacy's diaries
with the orders (`diplomacy.diary: with_orders`), whose orders then read the diary of the phase
before rather than this phase's entry (docs/performance.md).

What each phase may do: ask its seats over one or more steps and, once answered, return its
update. A phase that loops on its own (`next`; negotiation exchanges) cannot be joined. Updates
are merged as the graph would merge them one after the other: events in order, `world` key by
key, other keys the later phase's."""

from __future__ import annotations

from typing import Any

from wargraph.kernel.graphkit import Phase
from wargraph.kernel.phase import PhaseSpec, phase_spec
from wargraph.kernel.state import CLEAR, GameState
from wargraph.kernel.table import Table


class JoinedPhaseError(ValueError):
    """A phase that cannot be asked together with others (it loops on its own)."""


def together(*phases: tuple[str, Phase]) -> PhaseSpec:
    """One node running `phases` ((name, phase) pairs, in the order their updates apply)."""
    names = [name for name, _ in phases]
    if len(set(names)) != len(names) or len(names) < 2:
        raise JoinedPhaseError(f"together: two or more phases of distinct names (got {names})")
    specs = [(name, phase_spec(fn)) for name, fn in phases]
    looping = [name for name, spec in specs if spec.loops]
    if looping:
        raise JoinedPhaseError(f"together: {looping} loop on their own and cannot be joined")

    def joined(state: GameState, table: Table) -> dict[str, Any]:
        updates = []
        for name, spec in specs:
            # the same step under the phase's own name; the cache (engine position, legal
            # orders) is the state's, whichever phase asks
            own = Table(
                table.scenario,
                table.context,
                {**table.state, "phase": name},
                table.world,
                cache=table.cache,
            )
            update = spec.run(own.state, own) or {}
            if "next" in update:
                raise JoinedPhaseError(
                    f"together: phase {name!r} chose the next node ({update['next']!r}); a "
                    "phase that does cannot be joined"
                )
            updates.append(update)
        waiting = [a for u in updates for a in u.get("asks") or []]
        if waiting:
            # a phase whose answers are all in keeps them (`pending` is cleared only below) and
            # gives the same update again next time
            return {"asks": waiting}
        merged: dict[str, Any] = {}
        for update in updates:
            for key, value in update.items():
                if key == "events":
                    merged["events"] = [*merged.get("events", []), *value]
                elif key in ("world", "pending"):
                    merged[key] = {**merged.get(key, {}), **value}
                else:
                    merged[key] = value
        if merged.get("pending", {}).get(CLEAR):
            merged["pending"] = {CLEAR: True}  # every phase's answers read: none kept
        return merged

    def seats(scenario: Any, world: Any) -> list[str]:
        found: list[str] = []
        for _, spec in specs:
            found += spec.seats(scenario, world) if spec.seats else list(scenario.roles)
        return list(dict.fromkeys(found))

    joined.__name__ = "_".join(names)
    return PhaseSpec(joined, seats=seats)
