"""Measures of a finished Diplomacy game, computed from records only (never from logs): scores,
orders by type and outcome, relationships over time, press volume, the secretary's work.

Inputs are plain JSON data the graph keeps:

* the engine's saved-game dict (``record["world"]``; see ``wargraph.graphs.diplomacy.rules``);
* order records, one per order given (or attempted)::

      {"phase": "S1901M", "power": "FRANCE", "order": "A PAR - BUR",
       "result": "success" | "bounced" | "void" | "dislodged" | "cut" | ... | None,
       "invalid": False, "defaulted": False}

  ``invalid`` marks an order the secretary rejected (it never reached the engine; the unit
  held); ``result`` is the adjudication outcome (``outcome`` from
  ``wargraph.graphs.diplomacy.rules.adjudicate``; a list of engine results is accepted too).
  :func:`records_from_results` builds them from ``adjudicate`` results.
* diary entries: ``{"phase", "power", "relationships": {other: "Enemy" | ... | "Ally"}}``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wargraph.graphs.diplomacy.engine import POWERS, order_type, outcome_of, phase_info, phase_key
from wargraph.graphs.diplomacy.schemas import RELATION_VALUES

__all__ = [
    "SOLO_CENTRES",
    "RELATION_VALUES",
    "ORDER_TYPES",
    "phase_key",
    "game_score",
    "records_from_results",
    "order_stats",
    "relationship_series",
    "relationship_chart",
    "played_year",
    "saved_game_of",
    "game_measures",
    "measures_markdown",
    "write_measures",
    "record_measures",
]

SOLO_CENTRES = 18
ORDER_TYPES: tuple[str, ...] = ("move", "hold", "support", "convoy", "build", "disband", "retreat")


def _year(name: str) -> int:
    return int(name[1:-1])


# ---------------------------------------------------------------------------------------------
# Game score
# ---------------------------------------------------------------------------------------------


def game_score(saved: Mapping[str, Any], max_year: int) -> dict[str, float]:
    """Score per power (years counted as calendar year - 1900; ``max_year`` may be given either
    way, e.g. 1905 or 5):

    * eliminated: the year it was eliminated;
    * solo winner (``SOLO_CENTRES`` centres): max_year + (max_year - win_year) + 18;
    * alive at the end otherwise: max_year + its supply centres.

    The year of an event is the year of the phase whose adjudication produced it (a power
    with no units, centres or dislodged units in the state after W1903A was eliminated in
    1903). A power eliminated in the opening state counts the opening year.
    """
    y_max = max_year - 1900 if max_year > 1900 else max_year
    phases = list(saved["phases"])
    if not phases:
        raise ValueError("saved game has no phases")
    powers = sorted(phases[0]["state"]["units"])
    eliminated: dict[str, int] = {}
    winner: tuple[str, int] | None = None
    prev_name = phases[0]["name"]
    for i, phase in enumerate(phases):
        state = phase["state"]
        # State i is the result of adjudicating phase i-1.
        event_name = prev_name if i > 0 else phase["name"]
        event_year = _year(event_name) - 1900 if event_name[1:-1].isdigit() else y_max
        for p in powers:
            alive = (
                state["units"].get(p) or state["centers"].get(p) or state.get("retreats", {}).get(p)
            )
            if not alive and p not in eliminated:
                eliminated[p] = event_year
            if winner is None and len(state["centers"].get(p, [])) >= SOLO_CENTRES:
                winner = (p, event_year)
        if phase["name"] != "COMPLETED":
            prev_name = phase["name"]

    final = phases[-1]["state"]["centers"]
    scores: dict[str, float] = {}
    for p in powers:
        if p in eliminated:
            scores[p] = float(eliminated[p])
        elif winner and winner[0] == p:
            scores[p] = float(y_max + (y_max - winner[1]) + SOLO_CENTRES)
        else:
            scores[p] = float(y_max + len(final.get(p, [])))
    return scores


# ---------------------------------------------------------------------------------------------
# Orders
# ---------------------------------------------------------------------------------------------


def records_from_results(
    results: Mapping[str, Any],
    rejected: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> list[dict[str, Any]]:
    """Order records from one ``adjudicate`` result, plus the secretary's final rejections
    (``{power: [(order, reason), ...]}``) as invalid records."""
    phase = results["phase"]
    rejected = rejected or {}
    # A unit whose order was rejected held by default: its invalid record stands for it, so
    # the engine's defaulted hold is dropped (one record per unit, no double count).
    rejected_units = {
        (power.upper(), " ".join(str(order).upper().split()[:2]))
        for power, rej in rejected.items()
        for order, _ in rej
    }
    out = []
    for power, recs in sorted(results["orders"].items()):
        for r in recs:
            if r["type"] == "waive":
                continue
            if r.get("defaulted") and (power, r["unit"]) in rejected_units:
                continue
            out.append(
                {
                    "phase": phase,
                    "power": power,
                    "order": r["order"],
                    "result": r["outcome"],
                    "invalid": False,
                    "defaulted": bool(r.get("defaulted")),
                }
            )
    for power, rej in sorted(rejected.items()):
        for order, reason in rej:
            out.append(
                {
                    "phase": phase,
                    "power": power,
                    "order": order,
                    "result": None,
                    "invalid": True,
                    "reason": reason,
                }
            )
    return out


def _outcome(rec: Mapping[str, Any]) -> str | None:
    res = rec.get("result", rec.get("outcome"))
    if res is None:
        return None
    if isinstance(res, str):
        return "success" if res in ("", "ok", "success") else res
    return outcome_of(list(res))


def order_stats(records: Iterable[Mapping[str, Any]], power: str | None = None) -> dict[str, Any]:
    """Per order type (move, hold, support, convoy, build, disband, retreat; anything
    unparseable under "other"): count, success, bounced, void, dislodged, cut, invalid; plus
    totals, the invalid-order rate (invalid / all orders) and the hold rate (holds / valid
    orders in movement phases, counting holds the engine defaulted; invalid orders are left out
    of it since they never reached the engine). ``power`` filters to one power.
    """
    keys = ("count", "success", "bounced", "void", "dislodged", "cut", "invalid")
    by_type: dict[str, dict[str, int]] = {t: dict.fromkeys(keys, 0) for t in ORDER_TYPES}
    total = invalid = holds = movement = 0
    for rec in records:
        if power and rec.get("power") != power:
            continue
        kind = order_type(str(rec.get("order", "")))
        if kind == "waive":
            continue
        if kind not in by_type:
            kind = "other"
            by_type.setdefault(kind, dict.fromkeys(keys, 0))
        row = by_type[kind]
        row["count"] += 1
        total += 1
        if rec.get("invalid"):
            row["invalid"] += 1
            invalid += 1
            continue
        if str(rec.get("phase", ""))[-1:] == "M":
            movement += 1
            holds += kind == "hold"
        out = _outcome(rec)
        if out in row:
            row[out] += 1
    return {
        "by_type": by_type,
        "total": total,
        "invalid": invalid,
        "invalid_rate": invalid / total if total else 0.0,
        "hold_rate": holds / movement if movement else 0.0,
    }


# ---------------------------------------------------------------------------------------------
# Relationships
# ---------------------------------------------------------------------------------------------


def relationship_series(diaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Relationship scores over time (Enemy -2, Unfriendly -1, Neutral 0, Friendly 1, Ally 2).

    Returns ``{"phases": [...sorted...], "outgoing": {power: {phase: mean}}, "incoming":
    {power: {phase: mean}}}``: outgoing is the mean of what a power says about the others in
    its diary entry of that phase, incoming the mean of what the others say about it. Unknown
    labels are ignored; a phase without data for a power is absent from its series.
    """
    out_vals: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    in_vals: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    phases: set[str] = set()
    for entry in diaries:
        phase, me = entry["phase"], entry["power"]
        for other, label in (entry.get("relationships") or {}).items():
            value = RELATION_VALUES.get(str(label).strip().title())
            if value is None or other == me:
                continue
            phases.add(phase)
            out_vals[me][phase].append(value)
            in_vals[other][phase].append(value)

    def means(vals: Mapping[str, Mapping[str, list[int]]]) -> dict[str, dict[str, float]]:
        return {
            p: {ph: sum(v) / len(v) for ph, v in sorted(by.items(), key=lambda x: phase_key(x[0]))}
            for p, by in sorted(vals.items())
        }

    return {
        "phases": sorted(phases, key=phase_key),
        "outgoing": means(out_vals),
        "incoming": means(in_vals),
    }


def relationship_chart(series: Mapping[str, Any], path: str | Path) -> Path:
    """Line chart of outgoing and incoming relationship means per power (PNG or SVG by the
    file suffix), drawn with matplotlib's Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    phases: list[str] = list(series["phases"])
    x_of = {ph: i for i, ph in enumerate(phases)}
    fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 0.5 * len(phases) + 3), 7), sharex=True)
    for ax, key, title in (
        (axes[0], "outgoing", "Outgoing (how a power sees the others)"),
        (axes[1], "incoming", "Incoming (how the others see a power)"),
    ):
        for power, by_phase in sorted(series[key].items()):
            pts = sorted((x_of[ph], v) for ph, v in by_phase.items() if ph in x_of)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=power.title())
        ax.set_title(title)
        ax.set_ylim(-2.2, 2.2)
        ax.set_yticks(list(RELATION_VALUES.values()), list(RELATION_VALUES))
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.grid(True, alpha=0.3)
    axes[1].set_xticks(range(len(phases)), phases, rotation=45, ha="right")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper right", fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------
# A whole game from its record
# ---------------------------------------------------------------------------------------------


def saved_game_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    from wargraph.runs.records import RecordError

    saved = (record.get("world") or {}).get("diplomacy")
    if not isinstance(saved, Mapping) or not saved.get("phases"):
        raise RecordError(
            "not a Diplomacy record: world.diplomacy (the engine's saved game) is missing"
        )
    return saved


def played_year(saved: Mapping[str, Any], max_year: int) -> int:
    """The last calendar year adjudicated (a game stopped early scores up to that year)."""
    years = [int(p["name"][1:-1]) for p in list(saved["phases"])[:-1] if p["name"][1:-1].isdigit()]
    return min(max(years), max_year) if years else max_year


def game_measures(record: Mapping[str, Any]) -> dict[str, Any]:
    """Every measure of one game, from its record: scores, centres, orders by type and power,
    relationships over time and their reciprocity, aggression, press volume, the secretary's
    work and real token use."""
    from wargraph.graphs.diplomacy.analyses import measures_of

    saved = saved_game_of(record)
    cfg = (record.get("scenario") or {}).get("diplomacy") or {}
    max_year = played_year(saved, int(cfg.get("max_year", 1905)))
    events = list(record.get("events") or [])
    results = [
        e for e in events if e.get("kind") == "narration" and "records" in (e.get("data") or {})
    ]
    orders = [r for e in results for r in e["data"]["records"]]
    diaries = [
        {
            "phase": e["data"]["phase"],
            "power": e["author"],
            "relationships": e["data"].get("relationships", {}),
        }
        for e in events
        if e.get("kind") == "diary"
    ]
    messages = [e for e in events if e.get("kind") == "message"]
    verdicts = [e for e in events if e.get("kind") == "verdict" and e.get("data", {}).get("status")]
    info = phase_info(saved)
    engine_errors = sum(
        len(v) for e in results for v in e["data"].get("engine_errors", {}).values()
    )
    usage = (record.get("usage") or {}).get("per_role") or {}
    return {
        "max_year": max_year,
        "final_phase": info.name,
        "phases": [e["data"]["phase"] for e in results],
        "scores": game_score(saved, max_year),
        "centres": {p: len(info.centers.get(p, [])) for p in POWERS},
        "orders": order_stats(orders),
        "orders_by_power": {p: order_stats(orders, p) for p in POWERS},
        "engine_errors": engine_errors,
        "secretary": {
            "revisions": sum(int(v["data"].get("revisions", 0)) for v in verdicts),
            "held": sum(v["data"]["status"] == "held" for v in verdicts),
        },
        "messages": {
            p: {
                "public": sum(m["author"] == p and "*" in m["audience"] for m in messages),
                "private": sum(m["author"] == p and "*" not in m["audience"] for m in messages),
            }
            for p in POWERS
        },
        "relationships": relationship_series(diaries),
        # AI_Diplomacy's reciprocity and aggression (wargraph.graphs.diplomacy.analyses)
        **measures_of(diaries, orders, saved),
        "usage": {p: usage[p] for p in sorted(usage)},
        # free orders only (`diplomacy.orders: free`): what the models wrote themselves
        **(free_order_measures(free) if (free := free_order_stats(results)) else {}),
    }


# per power at the top two levels, which experiments and tournaments keep by default
FREE_SERIES = {
    "free_written": "written",
    "free_invalid": "invalid",
    "free_invalid_rate": "invalid_rate",
    "free_reasked": "reasked",
    "free_phases": "phases",
    "free_reask_rate": "reask_rate",
}


def free_order_measures(free: Mapping[str, Any]) -> dict[str, Any]:
    """`free_orders` (all of it, nested) and each per-power series at the top two levels
    (`free_invalid_rate.FRANCE`, for the powers that wrote free orders): an experiment's and a
    tournament's default measures."""
    # a power that wrote no free orders (a bot's, a person's seat) has no rate, not a rate of 0
    by_power = {p: r for p, r in free["by_power"].items() if r["phases"]}
    return {
        "free_orders": dict(free),
        **{name: {p: r[key] for p, r in by_power.items()} for name, key in FREE_SERIES.items()},
    }


def _rates(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    rows = list(rows)
    written = sum(int(r.get("written", 0)) for r in rows)
    invalid = sum(int(r.get("invalid", 0)) for r in rows)
    reasked = sum(int(r.get("revisions", 0)) > 0 for r in rows)
    return {
        "phases": len(rows),
        "written": written,
        "invalid": invalid,
        "missing": sum(int(r.get("missing", 0)) for r in rows),
        "reasked": reasked,
        "fallbacks": sum(r.get("source") == "fallback" for r in rows),
        # no orders written (a model that only fell back): no rate, rather than a perfect 0
        "invalid_rate": invalid / written if written else None,
        "reask_rate": reasked / len(rows) if rows else None,
    }


def free_order_stats(results: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Free orders' measures from the adjudication narrations (None when no phase had them):
    the invalid-order rate (orders refused on the first try / orders written on the first try)
    and the re-ask rate (phases with at least one revision / phases ordered), in all and per
    power and per model. A decider's fallback writes no order, so it adds none to the rates'
    orders (it is counted under `fallbacks`)."""
    rows = [
        {"power": p, **c}
        for e in results
        for p, c in ((e.get("data") or {}).get("free_orders") or {}).items()
    ]
    if not rows:
        return None
    models = sorted({str(r.get("model") or "") for r in rows})
    return {
        **_rates(rows),
        "by_power": {p: _rates(r for r in rows if r["power"] == p) for p in POWERS},
        "by_model": {m: _rates(r for r in rows if str(r.get("model") or "") == m) for m in models},
    }


def measures_markdown(m: Mapping[str, Any], title: str = "Diplomacy") -> str:
    lines = [f"# {title}", "", f"Played to {m['max_year']} (final phase {m['final_phase']}).", ""]
    lines += ["| power | score | centres | public msgs | private msgs |", "|---|---|---|---|---|"]
    for p, s in sorted(m["scores"].items(), key=lambda x: -x[1]):
        msg = m["messages"].get(p, {})
        lines.append(
            f"| {p} | {s:g} | {m['centres'].get(p, 0)} | {msg.get('public', 0)} "
            f"| {msg.get('private', 0)} |"
        )
    o = m["orders"]
    lines += [
        "",
        f"Orders: {o['total']}, invalid {o['invalid']} ({o['invalid_rate']:.1%}), "
        f"hold rate {o['hold_rate']:.1%}, engine errors {m['engine_errors']}, "
        f"secretary revisions {m['secretary']['revisions']}, units held after refusals "
        f"{m['secretary']['held']}.",
        "",
        "| type | count | success | bounced | void | dislodged | cut | invalid |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, row in o["by_type"].items():
        if row["count"]:
            lines.append(
                f"| {kind} | {row['count']} | {row['success']} | {row['bounced']} | {row['void']} "
                f"| {row['dislodged']} | {row['cut']} | {row['invalid']} |"
            )
    if m.get("free_orders"):
        lines += ["", *free_orders_markdown(m["free_orders"])]
    if m.get("reciprocity") or m.get("aggression_detail"):
        from wargraph.graphs.diplomacy.analyses import analyses_markdown

        lines += ["", *analyses_markdown(m)]
    if m["usage"]:
        lines += [
            "",
            "| role | calls | prompt tokens | completion tokens | seconds |",
            "|---|---|---|---|---|",
        ]
        for role, u in m["usage"].items():
            lines.append(
                f"| {role} | {u.get('calls', 0)} | {u.get('prompt_tokens', 0)} "
                f"| {u.get('completion_tokens', 0)} | {u.get('latency_s', 0):.1f} |"
            )
    return "\n".join(lines) + "\n"


def pct(rate: float | None) -> str:
    """A rate as a percentage; "–" where there is none (nothing to divide by)."""
    return "–" if rate is None else f"{rate:.1%}"


def free_orders_markdown(f: Mapping[str, Any]) -> list[str]:
    """The free-order table: per power and per model, orders written on the first try, how many
    the engine refused, the invalid-order rate and the re-ask rate."""
    lines = [
        f"Free orders: invalid-order rate {pct(f['invalid_rate'])} ({f['invalid']} of "
        f"{f['written']} written on the first try), re-ask rate {pct(f['reask_rate'])} "
        f"({f['reasked']} of {f['phases']} phases), units left without an order {f['missing']}, "
        f"fallbacks {f['fallbacks']}.",
        "",
        "| power or model | written | invalid | invalid rate | re-asked | re-ask rate |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in [*f["by_power"].items(), *f["by_model"].items()]:
        if r["phases"]:
            lines.append(
                f"| {name or '(default)'} | {r['written']} | {r['invalid']} "
                f"| {pct(r['invalid_rate'])} | {r['reasked']}/{r['phases']} "
                f"| {pct(r['reask_rate'])} |"
            )
    return lines


def write_measures(
    m: Mapping[str, Any], folder: str | Path, *, stem: str = "measures", chart: bool = False
) -> list[Path]:
    """`<stem>.json`, `<stem>.md` and, with `chart` and diary entries, `relationships.png`
    (matplotlib takes longer than a scripted game: the end of play leaves it to `wargraph eval
    diplomacy`, which draws it on request)."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / f"{stem}.json", folder / f"{stem}.md"]
    out[0].write_text(json.dumps(m, indent=2), encoding="utf-8")
    out[1].write_text(measures_markdown(m), encoding="utf-8")
    if chart and m["relationships"]["phases"]:
        out.append(relationship_chart(m["relationships"], folder / "relationships.png"))
    return out


def record_measures(record: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The family's measures for experiments (`Family.measures`)."""
    return game_measures(record)
