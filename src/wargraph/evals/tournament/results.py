"""A game's result from its stored record: every seat's score, and the entrants' ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import wargraph.kernel.families as families
from wargraph.evals.tournament.ratings import Ranking
from wargraph.evals.tournament.spec import Score
from wargraph.runs.records import RecordError, load_record


def seat_scores(
    score: Score, seats: list[str], gdir: Path, outcome: dict[str, Any]
) -> dict[str, float]:
    """Higher is better. `centres`: Diplomacy's game score (supply centres while alive, else the
    year of elimination: centres, then the order of elimination); `points`: Blotto's points;
    both are the `scores` of the family's measures (its entry's `measures`). `measure`: the
    family measure named with `{seat}`. Each is read from the measures the game's outcome
    kept when they hold every seat's, else from its record."""
    measures = outcome.get("measures") or {}
    if score.kind == "measure":
        missing = [s for s in seats if score.measure.format(seat=s) not in measures]
        if missing:
            raise RecordError(
                f"{gdir}: no measure {score.measure.format(seat=missing[0])!r} "
                f"(measures: {', '.join(sorted(measures)[:8]) or 'none'})"
            )
        return {s: float(measures[score.measure.format(seat=s)]) for s in seats}
    kept = {s: measures.get(f"scores.{s}") for s in seats}
    numbers = {
        s: v for s, v in kept.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }
    if len(numbers) == len(seats):
        return {s: float(v) for s, v in numbers.items()}  # the record's, as extracted after play
    scores = family_scores(gdir, score.kind)
    return {s: float(scores.get(s, 0.0)) for s in seats}


def family_scores(gdir: Path, kind: str) -> dict[str, Any]:
    """The `scores` of the game's family measures (`Family.measures`), for `centres`/`points`."""
    record = load_record(gdir)
    family = str((record.get("scenario") or {}).get("family", "crisis"))
    try:
        measure = families.attribute(family, "measures")
    except families.FamilyError as exc:
        raise RecordError(f"{gdir}: {exc}") from None
    path = gdir / "record.json" if gdir.is_dir() else gdir
    scores = (measure(record, path) or {}).get("scores") if measure else None
    if not scores:
        raise RecordError(
            f"{gdir}: the {family} game's measures hold no scores to rank by {kind} "
            "(is it a game of the family the score is for?)"
        )
    return dict(scores)


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
