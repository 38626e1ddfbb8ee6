"""Adjudication: the engine processes the phase with each power's orders as the secretary left
them; the results (with an order record per unit) are the round's narration, and the game ends
when the engine says so or after `diplomacy.max_year`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import wargraph.graphs.diplomacy.engine as engine
from wargraph.graphs.diplomacy.free_orders import free_counts, is_free
from wargraph.graphs.diplomacy.measures import records_from_results
from wargraph.graphs.diplomacy.orders import finalize_orders
from wargraph.graphs.diplomacy.phase import info_of, legal_of, position_of, saved_of
from wargraph.graphs.diplomacy.scenario import SECRETARY, diplomacy_scenario
from wargraph.kernel.parts import Resolution
from wargraph.kernel.state import Event

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Adjudication(Resolution):
    """By the engine alone (nobody narrates)."""

    def prepare(self, table: Table) -> None:
        """The engine loaded at this position for the adjudication (`Position.make_spare`),
        while the powers talk or write their orders."""
        if not info_of(table).is_done:
            position_of(table).make_spare(saved_of(table))

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        s = diplomacy_scenario(table)
        saved = saved_of(table)
        w = table.state.get("world") or {}
        pos = position_of(table)
        game = pos.game
        info = engine.phase_info(saved)
        final = {}
        for p in info.powers_alive:
            legal = legal_of(table, p)
            if legal:
                final[p] = finalize_orders(game, p, proposals.get(p) or {}, legal=legal)
        new, results = engine.adjudicate(saved, final, spare=pos.take_spare(saved))
        status = w.get("status") or {}
        held = table.world.secretary.give_up_status
        trails = w.get("trail") or {}
        invalid = {
            p: [tuple(x) for x in (t[-1].get("detail") or {}).values()]
            for p, t in trails.items()
            if status.get(p) == held
        }
        free = {p: t for p, t in trails.items() if t and is_free(t[0].get("proposal"))}
        for p, t in free.items():  # every refused order written is an invalid record (accepted
            # or not, the power was not asked again for an extra one); a unit written no order
            # holds by default: no invalid record for it
            invalid[p] = [tuple(x) for x in (t[-1].get("detail") or {}).values() if x[0]]
        records = records_from_results(results, {p: v for p, v in invalid.items() if v})
        after = engine.phase_info(new)
        centres = {p: len(after.centers.get(p, [])) for p in engine.POWERS}
        events: list[Event] = [
            table.event(
                kind="narration",
                author=SECRETARY,
                text=results_text(info.name, results, centres),
                data={
                    "phase": info.name,
                    "next_phase": results["next_phase"],
                    "orders": final,
                    "records": records,
                    "engine_errors": results["errors"],
                    "centres": centres,
                    # who answered each attempt: model, fallback, human, scripted
                    "sources": {
                        p: [t["source"] for t in v] for p, v in (w.get("trail") or {}).items()
                    },
                    # free orders only: what each power wrote first and how often it was re-asked
                    **(
                        {
                            "free_orders": {
                                p: {
                                    **free_counts(t, int((w.get("attempts") or {}).get(p, 0))),
                                    "model": str(table.seat(p).get("model") or ""),
                                }
                                for p, t in sorted(free.items())
                            }
                        }
                        if free
                        else {}
                    ),
                },
            )
        ]
        done = after.is_done or after.year > s.diplomacy.max_year
        update: dict[str, Any] = {"world": {"diplomacy": new}, "events": events}
        if done:
            why = (
                "the game is over"
                if after.is_done
                else f"the last year ({s.diplomacy.max_year}) is played"
            )
            events.append(
                table.event(
                    kind="narration",
                    author=SECRETARY,
                    text=f"The game ends after {info.name}: {why}.",
                    key="end",
                    data={"final_phase": after.name},
                )
            )
            update["done"] = True
        return update


def results_text(phase: str, results: dict[str, Any], centres: dict[str, int]) -> str:
    lines = [f"{phase} adjudicated."]
    for power, recs in sorted(results["orders"].items()):
        shown = [
            f"{r['order']} ({r['outcome']}{', by default' if r['defaulted'] else ''})"
            for r in recs
            if r["type"] != "waive"
        ]
        if shown:
            lines.append(f"{power}: " + "; ".join(shown))
    lines.append("Centres: " + ", ".join(f"{p} {n}" for p, n in centres.items() if n))
    lines.append(f"Next: {results['next_phase']}")
    return "\n".join(lines)
