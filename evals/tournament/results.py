"""A game's result from its stored record: every seat's score, and the entrants' ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wargraph.evals.tournament.ratings import Ranking
from wargraph.evals.tournament.spec import Score
from wargraph.records import RecordError, load_record


def seat_scores(
    score: Score, seats: list[str], gdir: Path, outcome: dict[str, Any]
) -> dict[str, float]:
    """Higher is better. `centres`: Diplomacy's game score (supply centres while alive, else the
    year of elimination: centres, then the order of elimination); `points`: Blotto's points;
    `measure`: the family measure named with `{seat}`."""
    if score.kind == "measure":
        measures = outcome.get("measures") or {}
        missing = [s for s in seats if score.measure.format(seat=s) not in measures]
        if missing:
            raise RecordError(
                f"{gdir}: no measure {score.measure.format(seat=missing[0])!r} "
                f"(measures: {', '.join(sorted(measures)[:8]) or 'none'})"
            )
        return {s: float(measures[score.measure.format(seat=s)]) for s in seats}
    record = load_record(gdir)
    if score.kind == "centres":
        from wargraph.worlds.diplomacy.measures import game_measures

        scores = game_measures(record)["scores"]
    else:
        results = [e for e in record.get("events") or [] if e.get("kind") == "result"]
        if not results:
            raise RecordError(f"{gdir}: no round result in the record (is it a Blotto game?)")
        scores = results[-1]["data"]["scores"]
    return {s: float(scores.get(s, 0.0)) for s in seats}


def ranking(seats: dict[str, str], scores: dict[str, float]) -> tuple[Ranking, dict[str, float]]:
    """Entrants best first, ties grouped. An entrant holding several seats of a game is ranked
    by the mean score of its seats."""
    per: dict[str, list[float]] = {}
    for seat, entrant in seats.items():
        per.setdefault(entrant, []).append(scores[seat])
    mean = {e: sum(v) / len(v) for e, v in per.items()}
    groups: Ranking = []
    for value in sorted(set(mean.values()), reverse=True):
        groups.append(sorted(e for e, v in mean.items() if v == value))
    return groups, mean
