"""The tournament's report, rebuilt from the stored games without replaying them: report.md,
report.html, games.csv, leaderboard.csv, summary.json, a leaderboard figure with intervals and the crosstable as a heat map."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wargraph.evals.experiment.game import read_json, write_json
from wargraph.evals.tournament.ratings import (
    Fit,
    Ranking,
    crosstable,
    openskill_ratings,
    pairwise,
    plackett_luce,
)
from wargraph.evals.tournament.results import ranking, seat_scores
from wargraph.evals.tournament.schedule import Game
from wargraph.runs.records import RecordError

if TYPE_CHECKING:
    from wargraph.evals.tournament.play import Setup


@dataclass
class Standing:
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per game
    rankings: list[Ranking] = field(default_factory=list)  # rated entrants only
    fit: Fit | None = None
    openskill: dict[str, dict[str, float]] = field(default_factory=dict)
    pairwise: dict[str, Any] = field(default_factory=dict)
    crosstable: dict[str, Any] = field(default_factory=dict)
    per_seat: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    missing: list[dict[str, Any]] = field(default_factory=list)  # games not (yet) finished


def standings(s: Setup, games: list[Game], out: Path) -> Standing:
    from wargraph.evals.tournament.play import game_plan

    st = Standing()
    rated = set(s.rated)
    seat_sum: dict[str, dict[str, list[float]]] = {}
    for g in games:
        plan = game_plan(s, g)
        gdir = out / plan.folder
        outcome = read_json(gdir / "outcome.json")
        if not outcome or outcome.get("thread_id") != plan.thread_id or outcome["status"] != "done":
            st.missing.append(
                {
                    "game": g.index,
                    "folder": plan.folder,
                    "status": (outcome or {}).get("status", "not played"),
                }
            )
            continue
        try:
            scores = seat_scores(s.tournament.score, s.seats, gdir, outcome)
        except RecordError as err:
            st.missing.append({"game": g.index, "folder": plan.folder, "status": str(err)})
            continue
        groups, mean = ranking(g.seats, scores)
        rated_groups = [[e for e in grp if e in rated] for grp in groups]
        rated_groups = [grp for grp in rated_groups if grp]
        if len({e for grp in rated_groups for e in grp}) >= 2:
            st.rankings.append(rated_groups)
        for seat, e in g.seats.items():
            seat_sum.setdefault(e, {}).setdefault(seat, []).append(scores[seat])
        st.rows.append(
            {
                "game": g.index,
                "seed": g.seed,
                "folder": plan.folder,
                "thread_id": plan.thread_id,
                "seats": g.seats,
                "scores": scores,
                "ranking": groups,
                "model_calls": outcome.get("model_calls", 0),
                "cached_calls": outcome.get("cached_calls", 0),  # reused: no cost
                "tokens": outcome.get("tokens", 0),
                **({"free_orders": free} if (free := _free_orders(outcome, g.seats)) else {}),
            }
        )
    names = [n for n in s.rated if any(n in grp for r in st.rankings for grp in r)]
    if len(names) >= 2 and st.rankings:
        st.fit = plackett_luce(
            st.rankings, names, bootstrap=s.tournament.bootstrap, seed=s.tournament.seed
        )
        st.openskill = openskill_ratings(st.rankings, names)
        st.pairwise = pairwise(st.fit)
        st.crosstable = crosstable(st.rankings, names)
    st.per_seat = {
        e: {seat: {"games": len(v), "mean_score": sum(v) / len(v)} for seat, v in seats.items()}
        for e, seats in seat_sum.items()
    }
    return st


_FREE = ("written", "invalid", "reasked", "phases")


def _free_orders(outcome: dict[str, Any], seats: dict[str, str]) -> dict[str, dict[str, float]]:
    """Diplomacy's free orders (`diplomacy.orders: free`): each seat's first-try orders, refused
    orders and re-asked phases in one game, from its measures (`free_written.SEAT` ...); empty
    for any other game."""
    m = outcome.get("measures") or {}
    out = {}
    for seat in seats:
        keys = [f"free_{k}.{seat}" for k in _FREE]
        if all(k in m for k in keys):
            out[seat] = {k: float(m[key]) for k, key in zip(_FREE, keys, strict=True)}
    return out


def free_orders_by_entrant(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per entrant over its games: orders written on the first try, how many the engine
    refused, the invalid-order rate, phases re-asked and the re-ask rate."""
    sums: dict[str, dict[str, float]] = {}
    for r in rows:
        for seat, counts in (r.get("free_orders") or {}).items():
            total = sums.setdefault(r["seats"][seat], dict.fromkeys(_FREE, 0.0))
            for k in _FREE:
                total[k] += counts[k]
    return {
        e: {
            **t,
            "invalid_rate": t["invalid"] / t["written"] if t["written"] else None,
            "reask_rate": t["reasked"] / t["phases"] if t["phases"] else None,
        }
        for e, t in sums.items()
    }


def _order(st: Standing) -> list[str]:
    if st.fit is None:
        return []
    return [n for _, n in sorted(zip(-st.fit.strength, st.fit.names, strict=True))]


def silent_entrants(s: Setup, st: Standing) -> list[str]:
    """A warning for each entrant on a model (not scripted, not a bot) whose every rated game
    made no model call: its endpoint failed every call (its answers were fallbacks), so its
    rating says nothing about the model."""
    from wargraph.models.chat import ModelRefError, parse_model_ref

    out = []
    for name, entrant in s.tournament.entrants.items():
        try:
            provider = parse_model_ref(entrant.model).provider
        except ModelRefError:
            continue
        games = [r for r in st.rows if name in r["seats"].values()]
        if provider in ("scripted", "bot") or not games:
            continue
        if all(int(r.get("model_calls") or 0) == 0 for r in games):
            out.append(
                f"entrant {name} ({entrant.model}): no model call answered in its {len(games)} "
                "game(s): every answer was a fallback, so its rating says nothing about the "
                "model (check the endpoint: the game folders' trace.jsonl name the faults)"
            )
    return out


def summary(s: Setup, st: Standing, stopped_by: str) -> dict[str, Any]:
    fit = st.fit.table() if st.fit else {}
    return {
        "warnings": silent_entrants(s, st),
        "tournament": s.tournament.name,
        "scenario": s.tournament.scenario,
        "seats": s.seats,
        "score": s.tournament.score.model_dump(),
        "entrants": {n: e.model_dump() for n, e in s.tournament.entrants.items()},
        "games_scheduled": len(st.rows) + len(st.missing),
        "games_rated": len(st.rankings),
        "stopped_by": stopped_by,
        "leaderboard": [
            {"entrant": n, "plackett_luce": fit[n], "openskill": st.openskill.get(n)}
            for n in _order(st)
        ],
        "pairwise": st.pairwise,
        "crosstable": st.crosstable,
        "per_seat": st.per_seat,
        "games": [{k: v for k, v in r.items() if k != "write_view"} for r in st.rows],
        "missing": st.missing,
        **({"free_orders": free} if (free := free_orders_by_entrant(st.rows)) else {}),
        "model_calls": sum(int(r["model_calls"]) for r in st.rows),
        "cached_calls": sum(int(r.get("cached_calls", 0)) for r in st.rows),
        "tokens": sum(int(r["tokens"]) for r in st.rows),
        "written": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _fmt(x: float) -> str:
    return f"{x:+.2f}"


def markdown(s: Setup, st: Standing, data: dict[str, Any]) -> str:
    t = s.tournament
    lines = [f"# Tournament {t.name}", ""]
    if t.description:
        lines += [t.description.strip(), ""]
    lines += [
        f"Scenario `{t.scenario}`, seats {', '.join(s.seats)}; a game is ranked by "
        + (t.score.measure if t.score.kind == "measure" else t.score.kind)
        + f". {data['games_rated']} games rated of {data['games_scheduled']} scheduled; "
        f"stopped: {data['stopped_by']}. Model calls {data['model_calls']}, tokens {data['tokens']}"
        + (
            f"; {data['cached_calls']} answers reused from the model cache (no cost)."
            if data.get("cached_calls")
            else "."
        ),
        "",
        *[f"**Warning:** {w}" for w in data.get("warnings", [])],
        *([""] if data.get("warnings") else []),
        "## Leaderboard",
        "",
        "Plackett-Luce maximum likelihood (log-worth, centred; 95% bootstrap interval over "
        f"games, {t.bootstrap} draws) and OpenSkill Plackett-Luce (mu, 95% interval mu +- 1.96 sigma).",
        "",
        "![leaderboard](leaderboard.png)",
        "",
        "| rank | entrant | model | strength | 95% interval | OpenSkill mu | 95% interval |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, row in enumerate(data["leaderboard"], 1):
        pl, os_ = row["plackett_luce"], row["openskill"] or {}
        lines.append(
            f"| {i} | {row['entrant']} | `{t.entrants[row['entrant']].model}` | {_fmt(pl['strength'])} "
            f"| [{_fmt(pl['lo'])}, {_fmt(pl['hi'])}] | {os_.get('mu', 0):.1f} "
            f"| [{os_.get('lo', 0):.1f}, {os_.get('hi', 0):.1f}] |"
        )
    order = _order(st)
    if order:
        lines += ["", "## Pairwise: P(row finishes above column), 95% interval", ""]
        lines += ["| | " + " | ".join(order) + " |", "|---|" + "---|" * len(order)]
        for a in order:
            cells = [
                ""
                if a == b
                else f"{st.pairwise[a][b]['p']:.2f} [{st.pairwise[a][b]['lo']:.2f}, {st.pairwise[a][b]['hi']:.2f}]"
                for b in order
            ]
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        lines += ["", "## Crosstable: head to head (row above column / games met)", ""]
        lines += ["![crosstable](crosstable.png)", ""]
        lines += ["| | " + " | ".join(order) + " |", "|---|" + "---|" * len(order)]
        for a in order:
            cells = [
                "" if a == b else f"{st.crosstable[a][b]['score']:g}/{st.crosstable[a][b]['games']}"
                for b in order
            ]
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += ["", "## Per seat: mean score (games)", ""]
    lines += ["| entrant | " + " | ".join(s.seats) + " |", "|---|" + "---|" * len(s.seats)]
    for e in order + [n for n in st.per_seat if n not in order]:
        seats = st.per_seat.get(e, {})
        cells = [
            f"{seats[x]['mean_score']:.2f} ({seats[x]['games']})" if x in seats else ""
            for x in s.seats
        ]
        lines.append(f"| {e} | " + " | ".join(cells) + " |")
    if data.get("free_orders"):
        lines += ["", "## Free orders: written on the first try, refused by the engine", ""]
        lines += [
            "| entrant | written | invalid | invalid-order rate | re-asked | re-ask rate |",
            "|---|---|---|---|---|---|",
        ]
        for e, f in data["free_orders"].items():
            rates = ["–" if f[k] is None else f"{f[k]:.1%}" for k in ("invalid_rate", "reask_rate")]
            lines.append(
                f"| {e} | {f['written']:g} | {f['invalid']:g} | {rates[0]} "
                f"| {f['reasked']:g}/{f['phases']:g} | {rates[1]} |"
            )
    if st.missing:
        lines += ["", "## Not rated", ""]
        lines += [f"- game {m['game']} ({m['folder']}): {m['status']}" for m in st.missing]
    lines += [
        "",
        "## Files",
        "",
        "- `games.csv`: every rated game, one row per seat (entrant, score, place)",
        "- `leaderboard.csv`: the leaderboard's numbers; `summary.json`: every number here",
        "- `report.html`: this report as one page, its figures inside",
    ]
    # each game, with its view, last: the results come first in a browser
    lines += ["", "## Games", ""]
    lines += ["| game | seed | " + " | ".join(s.seats) + " | ranking | folder | view |"]
    lines += ["|---|---|" + "---|" * len(s.seats) + "---|---|---|"]
    for r in st.rows:
        cells = [f"{r['seats'][x]} ({r['scores'][x]:g})" for x in s.seats]
        rank = " > ".join("=".join(grp) for grp in r["ranking"])
        lines.append(
            f"| {r['game']} | {r['seed']} | "
            + " | ".join(cells)
            + f" | {rank} | [{r['folder']}]({r['folder']}/) | "
            + (f"[view]({r['view']})" if r.get("view") else f"`{r['write_view']}`")
            + " |"
        )
    if any(not r.get("view") for r in st.rows):
        lines += [
            "",
            "Pages not written for every game: `wargraph view FOLDER` writes one; "
            "`wargraph tournament FILE --report-only --pages` writes them all.",
        ]
    return "\n".join(lines) + "\n"


def figures(st: Standing, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    order = _order(st)
    if st.fit is None or not order:
        return
    fit = st.fit.table()
    y = np.arange(len(order))[::-1]
    fig, ax = plt.subplots(figsize=(6, 0.5 * len(order) + 1.2))
    est = [fit[n]["strength"] for n in order]
    # clamped: a bound a rounding step inside its estimate must not be a negative error bar
    lo = [max(0.0, fit[n]["strength"] - fit[n]["lo"]) for n in order]
    hi = [max(0.0, fit[n]["hi"] - fit[n]["strength"]) for n in order]
    ax.errorbar(est, y, xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(y, order)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("Plackett-Luce strength (log-worth), 95% bootstrap interval")
    fig.tight_layout()
    fig.savefig(out / "leaderboard.png", dpi=100)
    plt.close(fig)

    grid = np.full((len(order), len(order)), np.nan)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if a != b and st.crosstable[a][b]["rate"] is not None:
                grid[i, j] = st.crosstable[a][b]["rate"]
    fig, ax = plt.subplots(figsize=(1 + 0.8 * len(order), 0.8 + 0.7 * len(order)))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(len(order)), order, rotation=45, ha="right")
    ax.set_yticks(range(len(order)), order)
    for i in range(len(order)):
        for j in range(len(order)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label="row finishes above column")
    fig.tight_layout()
    fig.savefig(out / "crosstable.png", dpi=100)
    plt.close(fig)


def _link_views(st: Standing, out: Path, pages: bool) -> None:
    """Each rated game's page (`wargraph view`: who knew what, phase by phase): with `pages`,
    written where missing or older than its record (a report rebuilt later redraws nothing);
    without, linked where one is already there and up to date (`--pages` or `wargraph view
    FOLDER` writes the rest: a page costs more than a scripted game)."""
    from wargraph.view import ensure_views, fresh_view

    store = out / "checkpoints.sqlite"  # the games' store unless --db named another
    db = str(store) if store.exists() else None
    folders = [out / r["folder"] for r in st.rows]
    views = ensure_views(folders, db=db) if pages else [fresh_view(f) for f in folders]
    for r, view, folder in zip(st.rows, views, folders, strict=True):
        r["view"] = view.relative_to(out).as_posix() if view else None
        # a page not written: the report's cell says how to write it, not "–"
        r["write_view"] = f"wargraph view {shlex.quote(folder.as_posix())}"


def write_csvs(s: Setup, st: Standing, data: dict[str, Any], out: Path) -> list[Path]:
    """games.csv (one row per seat of each rated game: long form, ready for a data frame) and
    leaderboard.csv (strength and OpenSkill with their intervals)."""
    from wargraph.evals.report_page import CsvWriter

    games = out / "games.csv"
    with games.open("w", newline="", encoding="utf-8") as fh:
        w = CsvWriter(fh)
        w.writerow(["game", "seed", "seat", "entrant", "score", "place", "thread_id", "folder"])
        for r in st.rows:
            place = {e: i for i, grp in enumerate(r["ranking"], 1) for e in grp}
            for seat in s.seats:
                e = r["seats"][seat]
                w.writerow(
                    [r["game"], r["seed"], seat, e, r["scores"][seat], place.get(e, ""),
                     r["thread_id"], r["folder"]]
                )  # fmt: skip
    board = out / "leaderboard.csv"
    with board.open("w", newline="", encoding="utf-8") as fh:
        w = CsvWriter(fh)
        w.writerow(
            ["rank", "entrant", "model", "strength", "strength_lo", "strength_hi",
             "openskill_mu", "openskill_lo", "openskill_hi"]
        )  # fmt: skip
        for i, row in enumerate(data["leaderboard"], 1):
            pl, os_ = row["plackett_luce"], row["openskill"] or {}
            w.writerow(
                [i, row["entrant"], s.tournament.entrants[row["entrant"]].model, pl["strength"],
                 pl["lo"], pl["hi"], os_.get("mu", ""), os_.get("lo", ""), os_.get("hi", "")]
            )  # fmt: skip
    return [games, board]


def write_report(
    s: Setup,
    games: list[Game],
    st: Standing,
    out: Path,
    stopped_by: str,
    *,
    pages: bool = False,
) -> Path:
    from wargraph.evals.report_page import write_page

    _link_views(st, out, pages)
    data = summary(s, st, stopped_by)
    write_json(out / "summary.json", data)
    write_csvs(s, st, data, out)
    figures(st, out)
    path = out / "report.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(markdown(s, st, data), encoding="utf-8")
    tmp.replace(path)
    write_page(path)
    return path
