"""Two of AI_Diplomacy's analyses of a game, from its record alone (no judge):

* **relationship reciprocity**: in each phase, for each pair of powers that both rated the other
  in their diaries, whether the two ratings match; per power (and, across games, per model) the
  share of its ratings that match the other side's, that are friendlier than the other side's
  (it **over**-estimates the relationship) or less friendly (it **under**-estimates it);
* **aggression**: the share of a power's orders that move onto, or support a move onto, a
  province that holds another power's unit or is another power's supply centre, by year and by
  the power attacked (its neighbour).

Ratings are the diaries' labels (Enemy -2 ... Ally 2, `RELATION_VALUES`); a phase in which a
power wrote several diary entries counts its last. Orders are the adjudication's order records
(invalid ones never reached the board and are left out); the board an order met is the saved
game's state of its phase (units and centre owners before the orders were adjudicated).
Convoys are not counted as attacks (AI_Diplomacy counts moves and supports)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from wargraph.graphs.diplomacy.engine import POWERS, order_type, phase_key
from wargraph.graphs.diplomacy.schemas import RELATION_VALUES

# --- relationship reciprocity ------------------------------------------------------------------


def _last_ratings(diaries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """phase -> power -> other -> value (the power's last diary entry of the phase)."""
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for entry in diaries:
        values = {}
        for other, label in (entry.get("relationships") or {}).items():
            value = RELATION_VALUES.get(str(label).strip().title())
            if value is not None and other != entry["power"]:
                values[str(other)] = value
        if values:
            out[str(entry["phase"])][str(entry["power"])] = values
    return out


def reciprocity(diaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Pairs of ratings per phase: `pairs` (both sides rated each other), `matched` (the same
    label), `share_matched`; `by_pair` ("AUSTRIA-ITALY": matched and pairs); `by_power`:
    `rated` (its ratings the other side answered), `matched`, `over`, `under` and their shares
    (None where a power has no answered rating)."""
    by_phase = _last_ratings(diaries)
    pairs = matched = 0
    by_pair: dict[str, dict[str, int]] = {}
    counts: dict[str, dict[str, int]] = {
        p: {"rated": 0, "matched": 0, "over": 0, "under": 0} for p in POWERS
    }
    for phase in sorted(by_phase, key=phase_key):
        ratings = by_phase[phase]
        for me, mine in ratings.items():
            for other, value in mine.items():
                theirs = ratings.get(other, {}).get(me)
                if theirs is None:
                    continue
                c = counts.setdefault(me, {"rated": 0, "matched": 0, "over": 0, "under": 0})
                c["rated"] += 1
                c["matched" if value == theirs else "over" if value > theirs else "under"] += 1
                if me < other:  # each pair once per phase
                    pairs += 1
                    matched += value == theirs
                    row = by_pair.setdefault(f"{me}-{other}", {"pairs": 0, "matched": 0})
                    row["pairs"] += 1
                    row["matched"] += value == theirs
    return {
        "pairs": pairs,
        "matched": matched,
        "share_matched": matched / pairs if pairs else None,
        "by_pair": by_pair,
        "by_power": {p: {**c, **_shares(c, "rated")} for p, c in sorted(counts.items())},
    }


def _shares(c: Mapping[str, int], of: str) -> dict[str, float | None]:
    n = c[of]
    return {f"share_{k}": (c[k] / n if n else None) for k in ("matched", "over", "under") if k in c}


# --- aggression ---------------------------------------------------------------------------------


def _province(where: str) -> str:
    return where.split("/")[0].upper()


def _board(state: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Who holds a unit in each province, and who owns each supply centre."""
    units = {
        _province(u.split()[1]): power
        for power, held in (state.get("units") or {}).items()
        for u in held
        if len(u.split()) == 2
    }
    centres = {
        _province(c): power for power, owned in (state.get("centers") or {}).items() for c in owned
    }
    return units, centres


def attack_target(order: str) -> str | None:
    """The province an order attacks: a move's destination, or a supported move's; else None
    (holds, support to hold, convoys, builds ...)."""
    words = order.upper().split()
    kind = order_type(order.upper())
    if kind == "move" and len(words) >= 4:
        return _province(words[3])
    if kind == "support" and len(words) >= 7 and words[5] == "-":
        return _province(words[6])
    return None


def aggression(records: Iterable[Mapping[str, Any]], saved: Mapping[str, Any]) -> dict[str, Any]:
    """Per power: `orders` (valid orders of movement phases), `aggressive` (those that attack
    another power's unit or centre), `share`; `by_year` (year -> orders, aggressive, share) and
    `toward` (power attacked -> aggressive orders against it)."""
    states = {p["name"]: p.get("state") or {} for p in saved.get("phases") or []}
    boards = {name: _board(state) for name, state in states.items()}
    out: dict[str, dict[str, Any]] = {
        p: {"orders": 0, "aggressive": 0, "by_year": {}, "toward": {}} for p in POWERS
    }
    for rec in records:
        phase = str(rec.get("phase", ""))
        if rec.get("invalid") or not phase.endswith("M") or phase not in boards:
            continue
        me = str(rec.get("power", ""))
        row = out.setdefault(me, {"orders": 0, "aggressive": 0, "by_year": {}, "toward": {}})
        year = row["by_year"].setdefault(phase[1:-1], {"orders": 0, "aggressive": 0})
        row["orders"] += 1
        year["orders"] += 1
        target = attack_target(str(rec.get("order", "")))
        if target is None:
            continue
        units, centres = boards[phase]
        victim = units.get(target) or centres.get(target)
        if not victim or victim == me:
            continue
        row["aggressive"] += 1
        year["aggressive"] += 1
        row["toward"][victim] = row["toward"].get(victim, 0) + 1
    for row in out.values():
        row["share"] = row["aggressive"] / row["orders"] if row["orders"] else None
        for year in row["by_year"].values():
            year["share"] = year["aggressive"] / year["orders"] if year["orders"] else None
    return out


# --- a game's and many games' figures ----------------------------------------------------------


def power_models(record: Mapping[str, Any]) -> dict[str, str]:
    """Which model played each power: the record's models (from its trace), else the
    scenario's per-player model, else "unrecorded" (a game of scripted seats keeps no calls)."""
    out: dict[str, str] = {}
    for model, info in (record.get("models") or {}).items():
        for role in info.get("roles") or []:
            out[str(role)] = f"{out[role]}+{model}" if role in out else str(model)
    players = (record.get("scenario") or {}).get("players") or {}
    for power in POWERS:
        if power not in out:
            player = players.get(power) if isinstance(players, Mapping) else None
            model = (player or {}).get("model") if isinstance(player, Mapping) else None
            out[power] = str(model) if model else "unrecorded"
    return out


def measures_of(
    diaries: Iterable[Mapping[str, Any]],
    orders: Iterable[Mapping[str, Any]],
    saved: Mapping[str, Any],
) -> dict[str, Any]:
    """The analyses' part of `game_measures`: the detail (`reciprocity`, `aggression_detail`)
    and, at the top two levels an experiment keeps, `aggression.POWER`,
    `overestimated.POWER`, `underestimated.POWER` and `reciprocity.share_matched`."""
    rec = reciprocity(diaries)
    agg = aggression(orders, saved)
    return {
        "reciprocity": rec,
        "overestimated": {p: c["share_over"] for p, c in rec["by_power"].items() if c["rated"]},
        "underestimated": {p: c["share_under"] for p, c in rec["by_power"].items() if c["rated"]},
        "aggression": {p: r["share"] for p, r in agg.items() if r["orders"]},
        "aggression_detail": agg,
    }


def across_games(games: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any]:
    """Reciprocity and aggression pooled over games `(record, measures)`, per model: counts, and
    shares with Wilson 95% intervals (`wargraph.evals.stats.wilson`)."""
    from wargraph.evals.stats import wilson

    per_model: dict[str, dict[str, int]] = defaultdict(
        lambda: {"rated": 0, "matched": 0, "over": 0, "under": 0, "orders": 0, "aggressive": 0}
    )
    pairs = matched = 0
    for record, m in games:
        models = power_models(record)
        rec = m.get("reciprocity") or {}
        pairs += int(rec.get("pairs") or 0)
        matched += int(rec.get("matched") or 0)
        for power, c in (rec.get("by_power") or {}).items():
            row = per_model[models.get(power, "unrecorded")]
            for k in ("rated", "matched", "over", "under"):
                row[k] += int(c.get(k, 0))
        for power, a in (m.get("aggression_detail") or {}).items():
            row = per_model[models.get(power, "unrecorded")]
            row["orders"] += int(a.get("orders", 0))
            row["aggressive"] += int(a.get("aggressive", 0))

    def share(k: int, n: int) -> dict[str, Any]:
        w = wilson(k, n)
        return {"k": k, "n": n, "share": w.p, "lo": w.lo, "hi": w.hi, "text": w.text()}

    return {
        "matched": share(matched, pairs),
        "by_model": {
            model: {
                "matched": share(r["matched"], r["rated"]),
                "over": share(r["over"], r["rated"]),
                "under": share(r["under"], r["rated"]),
                "aggression": share(r["aggressive"], r["orders"]),
            }
            for model, r in sorted(per_model.items())
        },
    }


def analyses_markdown(m: Mapping[str, Any]) -> list[str]:
    """One game's reciprocity and aggression, as Markdown lines."""
    rec = m.get("reciprocity") or {}
    agg = m.get("aggression_detail") or {}
    lines: list[str] = []
    if rec.get("pairs"):
        lines += [
            f"Relationship reciprocity: {rec['matched']} of {rec['pairs']} pairs of ratings "
            f"matched ({rec['share_matched']:.0%}).",
            "",
            "| power | ratings answered | matched | over-estimated | under-estimated |",
            "|---|---|---|---|---|",
        ]
        for p, c in rec["by_power"].items():
            if c["rated"]:
                lines.append(
                    f"| {p} | {c['rated']} | {c['share_matched']:.0%} | {c['share_over']:.0%} "
                    f"| {c['share_under']:.0%} |"
                )
        lines.append("")
    rows = [(p, r) for p, r in agg.items() if r["orders"]]
    if rows:
        years = sorted({y for _, r in rows for y in r["by_year"]})
        lines += [
            "Aggression: share of a power's orders that move on, or support a move on, another "
            "power's unit or centre.",
            "",
            "| power | orders | aggressive | share | " + " | ".join(years) + " | attacked most |",
            "|---|---|---|---|" + "---|" * len(years) + "---|",
        ]
        for p, r in rows:
            by_year = [
                f"{r['by_year'][y]['share']:.0%}" if y in r["by_year"] else "–" for y in years
            ]
            toward = sorted(r["toward"].items(), key=lambda x: -x[1])[:2]
            most = ", ".join(f"{v} ({n})" for v, n in toward) or "–"
            lines.append(
                f"| {p} | {r['orders']} | {r['aggressive']} | {r['share']:.0%} | "
                + " | ".join(by_year)
                + f" | {most} |"
            )
        lines.append("")
    return lines


def across_markdown(a: Mapping[str, Any]) -> list[str]:
    """Reciprocity and aggression per model over all games, with 95% intervals."""
    if not a["by_model"]:
        return []
    lines = [
        "## Reciprocity and aggression per model",
        "",
        f"Pairs of ratings that matched, all games: {a['matched']['text']}.",
        "",
        "| model | ratings matched | over-estimated | under-estimated | aggressive orders |",
        "|---|---|---|---|---|",
    ]
    for model, r in a["by_model"].items():
        lines.append(
            f"| {model} | {r['matched']['text']} | {r['over']['text']} | {r['under']['text']} "
            f"| {r['aggression']['text']} |"
        )
    return [*lines, ""]
