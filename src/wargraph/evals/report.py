"""The experiment report: Markdown tables per condition with intervals, comparisons between
conditions, bar charts with intervals (matplotlib, Agg, no display), a CSV of every game's
outcomes and a JSON of every number in the tables.

Built from the games' `outcome.json` files (themselves built from `record.json`), never from
logs, so `write_report(out_dir)` can be run again at any time on a finished experiment.
"""

from __future__ import annotations

import itertools
import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import wargraph.kernel.families as families

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure
import wargraph.evals.stats as stats
from wargraph.evals.report_page import CsvWriter, write_page
from wargraph.nodes.schemas import UNDETERMINED


def _pp(x: float | None) -> str:
    """A difference of shares in percentage points."""
    return "–" if x is None else f"{x * 100:+.0f} pp"


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return "–"
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(_md_cell(h) for h in head) + " |"]
    out.append("|" + "|".join("---" for _ in head) + "|")
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return out


# --- numbers ---------------------------------------------------------------------------------


def shown_options(question: Mapping[str, Any], outcomes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The options a table shows: all of them, plus "undetermined" when any game got it."""
    opts = list(question["options"])
    qid = question["id"]
    if any(o.get("answers", {}).get(qid) == UNDETERMINED for o in outcomes):
        opts.append(UNDETERMINED)
    return opts


def _done(outcomes: Sequence[Mapping[str, Any]], cid: str) -> list[Mapping[str, Any]]:
    return [o for o in outcomes if o["condition"] == cid and o["status"] == "done"]


def question_table(
    question: Mapping[str, Any],
    conditions: Sequence[Mapping[str, Any]],
    outcomes: Sequence[Mapping[str, Any]],
) -> dict[str, dict[str, stats.Proportion]]:
    """condition id -> option -> Wilson proportion over the condition's judged games."""
    qid = question["id"]
    opts = shown_options(question, outcomes)
    out: dict[str, dict[str, stats.Proportion]] = {}
    for c in conditions:
        answers = [o["answers"].get(qid) for o in _done(outcomes, c["id"]) if qid in o["answers"]]
        out[c["id"]] = {
            opt: stats.wilson(sum(a == opt for a in answers), len(answers)) for opt in opts
        }
    return out


def measure_names(outcomes: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for o in outcomes:
        for k in o.get("measures") or {}:
            names.setdefault(k, None)
    return list(names)


def _is_flag(name: str, outcomes: Sequence[Mapping[str, Any]]) -> bool:
    vals = [o["measures"][name] for o in outcomes if name in (o.get("measures") or {})]
    return bool(vals) and all(isinstance(v, bool) for v in vals)


def measure_values(name: str, outcomes: Sequence[Mapping[str, Any]], cid: str) -> list[float]:
    return [
        float(o["measures"][name])
        for o in _done(outcomes, cid)
        if (o.get("measures") or {}).get(name) is not None
    ]


def compare_pairs(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The file's `compare` pairs (ids or labels); by default every pair of up to four
    conditions, else the first condition against each other (a baseline)."""
    conds = meta["conditions"]
    by_name = {c["id"]: c["id"] for c in conds} | {c["label"]: c["id"] for c in conds}
    if meta.get("compare"):
        return [
            (by_name[a], by_name[b]) for a, b in meta["compare"] if a in by_name and b in by_name
        ]
    ids = [c["id"] for c in conds]
    if len(ids) < 2:
        return []
    if len(ids) <= 4:
        return list(itertools.combinations(ids, 2))
    return [(ids[0], other) for other in ids[1:]]


# --- figures --------------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)  # the OO API: no pyplot state across threads
    FigureCanvasAgg(fig)
    return fig


def question_figure(
    question: Mapping[str, Any],
    conditions: Sequence[Mapping[str, Any]],
    table: Mapping[str, Mapping[str, stats.Proportion]],
    path: Path,
) -> Path:
    """Grouped bars: share of games per option and condition, with Wilson 95% intervals. Every
    option has its bar, "no" of a yes/no question too (and "undetermined" when any game got it):
    a missing bar would read as a share of zero."""
    opts = list(next(iter(table.values())).keys()) if table else []
    n_c = len(conditions)
    fig = _figure(max(5.5, 0.5 * n_c * max(1, len(opts)) + 3.5), 3.6)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(opts))
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#999999"]
    for j, opt in enumerate(opts):
        xs, ys, lo, hi, labels = [], [], [], [], []
        for i, c in enumerate(conditions):
            pr = table[c["id"]][opt]
            p = pr.p if pr.p is not None else 0.0
            xs.append(i + (j - (len(opts) - 1) / 2) * width)
            ys.append(p)
            lo.append(max(0.0, p - pr.lo) if pr.p is not None else 0.0)
            hi.append(max(0.0, pr.hi - p) if pr.p is not None else 0.0)
            labels.append(f"{pr.k}/{pr.n}")
        colour = "#bbbbbb" if opt == UNDETERMINED else colours[j % len(colours)]
        ax.bar(
            xs, ys, width=width * 0.95, label=opt, color=colour, edgecolor="black", linewidth=0.4
        )
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", ecolor="black", capsize=3, linewidth=0.9)
        for x, y, h, t in zip(xs, ys, hi, labels, strict=True):
            ax.text(x, min(1.02, y + h + 0.02), t, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(n_c))
    ax.set_xticklabels(
        [c["label"] for c in conditions],
        rotation=20 if n_c > 4 else 0,
        ha="right" if n_c > 4 else "center",
        fontsize=8,
    )
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("share of games (95% Wilson interval)", fontsize=8)
    ax.set_title("\n".join(textwrap.wrap(question["text"], 70)), fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def measure_figure(
    name: str,
    conditions: Sequence[Mapping[str, Any]],
    values: Mapping[str, list[float]],
    summaries: Mapping[str, stats.Summary],
    path: Path,
) -> Path:
    """Bars of the mean per condition with the bootstrap 95% interval, and every game as a dot."""
    fig = _figure(max(4.0, 1.0 * len(conditions) + 2), 3.4)
    ax = fig.add_subplot(1, 1, 1)
    for i, c in enumerate(conditions):
        s = summaries[c["id"]]
        if s.mean is None or s.lo is None or s.hi is None:  # all None together: no values
            continue
        ax.bar(i, s.mean, width=0.6, color="#4c72b0", alpha=0.8, edgecolor="black", linewidth=0.4)
        ax.errorbar(
            i,
            s.mean,
            # clamped: rounding must never make a bar's half-length negative (matplotlib refuses)
            yerr=[[max(0.0, s.mean - s.lo)], [max(0.0, s.hi - s.mean)]],
            fmt="none",
            ecolor="black",
            capsize=4,
        )
        vs = values[c["id"]]
        jitter = [((k % 5) - 2) * 0.05 for k in range(len(vs))]
        ax.scatter([i + j for j in jitter], vs, s=10, color="black", zorder=3)
    ax.set_xticks(range(len(conditions)))
    ax.set_xticklabels([c["label"] for c in conditions], fontsize=8)
    ax.set_ylabel(f"{name} (mean, 95% bootstrap interval)", fontsize=8)
    ax.set_title(name, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def board_figures(
    out_dir: Path, conditions: Sequence[Mapping[str, Any]], outcomes: Sequence[Mapping[str, Any]]
) -> list[tuple[str, Path]]:
    """For the first finished game of each condition, its family's figure (`Family.
    report_figure`; WarAgent: the board's evolution). A family without one, or a figure that
    cannot be drawn: no figure, no error; a reference that does not resolve is named on stderr."""
    out = []
    for c in conditions:
        done = _done(outcomes, c["id"])
        if not done:
            continue
        record = out_dir / done[0]["folder"] / "record.json"
        path = out_dir / "figures" / f"board_{c['id']}.png"
        try:
            family = json.loads(record.read_text(encoding="utf-8"))["scenario"]["family"]
            draw = families.attribute(str(family), "report_figure")
            if draw is None:
                continue
            draw(record, path, f"{c['label']}: board (run {done[0]['run']})")
        except families.FamilyError as exc:
            print(f"note: no figure for {c['label']}: {exc}", file=sys.stderr)
            continue
        except (ValueError, KeyError, OSError, TypeError):
            continue
        out.append((c["label"], path))
    return out


def game_views(
    out_dir: Path, outcomes: Sequence[Mapping[str, Any]], pages: bool = False
) -> list[str]:
    """A link to each game's view (`wargraph view`: who knew what, phase by phase): with
    `pages`, written now where missing; without, linked where one is already there and up to
    date (a page costs more than a scripted game). A game without one is listed without a link."""
    try:
        from wargraph.view import ensure_views, fresh_view
    except ImportError:
        return []
    store = out_dir / "checkpoints.sqlite"
    db = str(store) if store.exists() else None
    folders = {i: out_dir / str(o["folder"]) for i, o in enumerate(outcomes) if o.get("folder")}
    paths = list(folders.values())
    found = ensure_views(paths, db=db) if pages else [fresh_view(f) for f in paths]
    views = dict(zip(folders, found, strict=True))
    rows = []
    for i, o in enumerate(outcomes):
        view = views.get(i)
        link = f"[view]({view.relative_to(out_dir).as_posix()})" if view else "–"
        rows.append(
            [o.get("label", o.get("condition", "?")), o.get("run", "?"), o.get("status", "?"), link]
        )
    if not rows:
        return []
    return ["", "<details><summary>each game's view</summary>", "", *_table(
        ["condition", "run", "status", "view"], rows
    ), "", "</details>"]  # fmt: skip


# --- CSV -------------------------------------------------------------------------------------------


def write_csv(path: Path, meta: Mapping[str, Any], outcomes: Sequence[Mapping[str, Any]]) -> Path:
    axes = list(meta.get("axes") or [])
    qids = [q["id"] for q in meta.get("questions", [])]
    measures = measure_names(outcomes)
    head = (
        ["experiment", "condition", "label", *axes, "run", "seed", "status", "how", "rounds"]
        + [f"answer:{q}" for q in qids]
        + [f"quote:{q}" for q in qids]
        + [f"measure:{m}" for m in measures]
        + ["model_calls", "cached_calls", "tokens", "fallbacks", "counts_incomplete"]
        + ["error", "thread_id", "folder"]
    )
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = CsvWriter(fh)
        w.writerow(head)
        for o in outcomes:
            judged = {j["id"]: j for j in o.get("judgements", [])}
            w.writerow(
                [o["experiment"], o["condition"], o["label"]]
                + [o.get("levels", {}).get(a, "") for a in axes]
                + [o["run"], o["seed"], o["status"], o.get("how", ""), o.get("rounds", "")]
                + [o.get("answers", {}).get(q, "") for q in qids]
                + [
                    " / ".join(x["line"] for x in judged[q]["quotes"]) if q in judged else ""
                    for q in qids
                ]
                + [(o.get("measures") or {}).get(m, "") for m in measures]
                + [o.get("model_calls", ""), o.get("cached_calls", 0), o.get("tokens", "")]
                + [o.get("fallbacks", ""), bool(o.get("counts_incomplete"))]
                + [o.get("error", ""), o["thread_id"], o["folder"]]
            )
    return path


# --- the report ------------------------------------------------------------------------------------


def write_report(
    out_dir: str | Path,
    meta: Mapping[str, Any] | None = None,
    outcomes: Sequence[Mapping[str, Any]] | None = None,
    *,
    pages: bool = False,
) -> Path:
    """Write report.md, report.html, outcomes.csv, summary.json and figures/ into `out_dir`; without
    `meta`/`outcomes` they are read from the experiment folder (experiment.json, outcome.json).
    `pages`: also each game's page (view.html) where missing."""
    out = Path(out_dir)
    if meta is None:
        try:
            meta = json.loads((out / "experiment.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"{out}: not an experiment folder ({err})") from None
    if outcomes is None:
        outcomes = []
        for f in sorted(out.glob("games/*/*/outcome.json")):
            try:
                outcomes.append(json.loads(f.read_text(encoding="utf-8")))
            except (OSError, json.JSONDecodeError):
                continue
    seed = int(meta.get("seed", 0))
    conds = list(meta["conditions"])
    figs = out / "figures"
    summary: dict[str, Any] = {"questions": {}, "measures": {}, "comparisons": []}
    lines = [f"# Experiment: {meta['name']}", ""]
    if meta.get("description"):
        lines += [str(meta["description"]).strip(), ""]
    counts = meta.get("counts") or {}
    runs = int(meta["runs"])
    if meta.get("file_runs") not in (None, runs):
        lines += [
            f"**{runs} play(s) per condition** (`--runs {runs}`): the experiment file asks for "
            f"{meta['file_runs']}.",
            "",
        ]
    lines += [
        f"- scenario: `{meta['scenario']}`; {len(conds)} condition(s) x {runs} play(s) "
        f"= {meta.get('games', len(conds) * runs)} games; seeds from {seed}",
        f"- model: `{meta['model']}`; judge: `{meta['judge_model']}`; concurrency "
        f"{meta.get('concurrency', '?')}",
    ]
    reused = sum(int(o.get("cached_calls", 0) or 0) for o in outcomes)
    if reused:  # the games' answers partly or wholly from the model cache: never paid twice
        paid = sum(int(o.get("model_calls", 0) or 0) for o in outcomes)
        lines.append(
            f"- model calls: {paid} made, {reused} answers reused from the model cache "
            "(no call, no tokens; `cached` in each game's trace)"
        )
    if counts:
        lines.append(
            "- this run: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)
            + (f"; {meta['elapsed_s']} s" if "elapsed_s" in meta else "")
        )
    lines += [
        "- intervals: 95% Wilson score intervals for shares of games; 95% percentile bootstrap "
        f"(10,000 resamples, seed {seed}) for means; differences of shares with Newcombe's "
        "hybrid score interval and Fisher's exact test; differences of means with a bootstrap "
        "interval and a permutation test; the comparisons' p-values also adjusted by Holm's "
        "method over the comparisons actually run.",
        "",
        "## Games",
        "",
    ]
    rows = []
    for c in conds:
        mine = [o for o in outcomes if o["condition"] == c["id"]]
        rows.append(
            [
                c["label"],
                ", ".join(f"{k}={v}" for k, v in c.get("overrides", {}).items()) or "–",
                len(mine),
                sum(o["status"] == "done" for o in mine),
                sum(o["status"] == "error" for o in mine),
                meta["runs"] - len(mine),
            ]
        )
    lines += _table(
        ["condition", "overrides", "games", "finished", "ended in error", "missing"], rows
    )
    crashed = meta.get("crashed") or []
    if crashed:
        lines += ["", f"{len(crashed)} game(s) crashed and will resume on the next run:"]
        lines += [f"- `{c['thread_id']}`: {c['error']}" for c in crashed]
    unknown = [o for o in outcomes if o.get("counts_incomplete")]
    if unknown:
        lines += [
            "",
            f"**Counts incomplete:** {len(unknown)} game(s) finished elsewhere (on a worker as "
            "its driver stopped) and were read back without their call log: their model calls "
            "and tokens are not counted (`counts_incomplete` in outcomes.csv):",
            *[f"- `{o['thread_id']}`" for o in unknown],
        ]
    lines.append("")

    figure_list: list[tuple[str, Path]] = []
    for q in meta.get("questions", []):
        table = question_table(q, conds, outcomes)
        opts = list(next(iter(table.values())).keys()) if table else []
        summary["questions"][q["id"]] = {
            cid: {o: vars(p) for o, p in per.items()} for cid, per in table.items()
        }
        lines += [
            f"## {q['text']}",
            "",
            f"Question `{q['id']}`, options: {', '.join(q['options'])}.",
            "",
        ]
        lines += _table(
            ["condition", "n", *opts],
            [
                [c["label"], next(iter(table[c["id"]].values())).n if opts else 0]
                + [table[c["id"]][o].text() for o in opts]
                for c in conds
            ],
        )
        if conds and opts:
            path = question_figure(q, conds, table, figs / f"question_{q['id']}.png")
            figure_list.append((q["text"], path))
            lines += ["", f"![{q['text']}](figures/{path.name})"]
        lines.append("")

    names = measure_names(outcomes)
    flags = {name: _is_flag(name, outcomes) for name in names}
    if names:
        lines += [
            "## Measures",
            "",
            "Mean ± standard deviation [95% bootstrap interval of the mean] per condition; "
            "yes/no measures as the share of games [95% Wilson interval].",
            "",
        ]
        cells: dict[str, list[str]] = {c["id"]: [] for c in conds}
        for name in names:
            values = {c["id"]: measure_values(name, outcomes, c["id"]) for c in conds}
            summary["measures"][name] = {}
            sums: dict[str, stats.Summary] = {}
            for c in conds:
                vs = values[c["id"]]
                if flags[name]:
                    pr = stats.wilson(int(sum(vs)), len(vs))
                    summary["measures"][name][c["id"]] = vars(pr)
                    cells[c["id"]].append(pr.text())
                else:
                    s = stats.summarise(vs, seed=seed)
                    sums[c["id"]] = s
                    summary["measures"][name][c["id"]] = vars(s)
                    cells[c["id"]].append(
                        "–"
                        if s.mean is None
                        else f"{_num(s.mean)} ± {_num(s.sd)} [{_num(s.lo)}, {_num(s.hi)}]"
                    )
            if not flags[name] and any(s.mean is not None for s in sums.values()):
                safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
                path = measure_figure(name, conds, values, sums, figs / f"measure_{safe}.png")
                figure_list.append((name, path))
        rows = [[c["label"], len(_done(outcomes, c["id"])), *cells[c["id"]]] for c in conds]
        lines += _table(["condition", "n", *names], rows)
        lines.append("")
        for title, path in figure_list:
            if path.name.startswith("measure_"):
                lines += [f"![{title}](figures/{path.name})", ""]

    pairs = compare_pairs(meta)
    if pairs:
        label = {c["id"]: c["label"] for c in conds}
        tests = comparisons(meta, outcomes, pairs, names, flags, seed)
        run = [t for t in tests if t["ran"]]
        skipped = len(tests) - len(run)
        summary["comparisons"] = [t["summary"] for t in run]
        summary["comparisons_skipped"] = [t["summary"] for t in tests if not t["ran"]]
        lines += ["## Comparisons", ""]
        lines.append(
            f"{len(run)} comparison(s) run; p-values are also given adjusted by Holm's "
            f"step-down method over these {len(run)}."
            + (
                f" {skipped} skipped: both sides gave one and the same value in every game "
                "(or one side has no games), so no test could tell them apart."
                if skipped
                else ""
            )
        )
        lines.append("")
        if run:
            lines += _table(
                ["conditions", "outcome", "counts", "difference", "95% interval", "p-value",
                 f"Holm-adjusted p ({len(run)} tests)"],
                [
                    [f"{label[t['a']]} vs {label[t['b']]}", t["outcome"], t["counts"],
                     t["estimate"], t["interval"], t["p"], _p(t["summary"]["p_holm"])]
                    for t in run
                ],
            )  # fmt: skip
            lines.append("")

    boards = board_figures(out, conds, outcomes)
    if boards:
        lines += ["## Board evolution (first finished game of each condition)", ""]
        for title, path in boards:
            lines += [f"![{title}](figures/{path.name})", ""]
            figure_list.append((title, path))

    if meta.get("questions"):
        lines += [
            "## Judgements with their evidence",
            "",
            "<details><summary>every game</summary>",
            "",
        ]
        for o in outcomes:
            for j in o.get("judgements", []):
                quote = (
                    j["quotes"][0]["line"] if j.get("quotes") else "(no line of the record quoted)"
                )
                lines.append(
                    f"- {o['label']} run {o['run']}, `{j['id']}`: **{j['answer']}** "
                    f"({j.get('source', '')}) — “{_md_cell(quote)[:200]}”"
                )
        lines += ["", "</details>", ""]

    csv_path = write_csv(out / "outcomes.csv", meta, outcomes)
    lines += [
        "## Files",
        "",
        f"- `{csv_path.name}`: every game's outcomes, one row per game",
        "- `summary.json`: every number in these tables",
        "- `games/<condition>/<run>/`: record.json, transcript.md, trace.jsonl, outcome.json",
        "- `report.html`: this report as one page, its figures inside",
        "",
    ]
    # each game's view last: in a browser the results come first, then 60 rows of links
    lines += game_views(out, outcomes, pages)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_page(path)
    return path


def _count(outcomes: Sequence[Mapping[str, Any]], cid: str, qid: str, opt: str) -> tuple[int, int]:
    answers = [o["answers"].get(qid) for o in _done(outcomes, cid) if qid in o["answers"]]
    return sum(a == opt for a in answers), len(answers)


def _shares(a: str, b: str, what: str, ka: int, na: int, kb: int, nb: int) -> dict[str, Any]:
    """One comparison of two shares; not run when every game of both sides gave the same
    answer (0/na vs 0/nb, na/na vs nb/nb: p = 1 by construction) or a side has no games."""
    ran = na > 0 and nb > 0 and not (ka == kb == 0 or (ka == na and kb == nb))
    d = stats.diff_proportions(ka, na, kb, nb) if ran else None
    return {
        "a": a,
        "b": b,
        "ran": ran,
        "outcome": what,
        "counts": f"{ka}/{na} vs {kb}/{nb}",
        "difference": d,
        "estimate": _pp(d.estimate) if d else "–",
        "interval": f"{_pp(d.lo)} – {_pp(d.hi)}" if d else "–",
    }


def comparisons(
    meta: Mapping[str, Any],
    outcomes: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    names: Sequence[str],
    flags: Mapping[str, bool],
    seed: int,
) -> list[dict[str, Any]]:
    """Every comparison of the report's pairs, each marked `ran` or not: one between two sides
    that hold one and the same value in every game (a constant measure) tells nothing and is
    not run, so it neither shows a p of 1 nor counts in the Holm adjustment."""
    tests: list[dict[str, Any]] = []
    for a, b in pairs:
        for q in meta.get("questions", []):
            options = [o for o in q["options"] if o != UNDETERMINED]
            for opt in ["yes"] if options == ["yes", "no"] else options:
                t = _shares(a, b, f"{q['id']} = {opt}", *_count(outcomes, a, q["id"], opt),
                            *_count(outcomes, b, q["id"], opt))  # fmt: skip
                t["key"] = {"question": q["id"], "option": opt}
                tests.append(t)
        for name in names:
            xa, xb = measure_values(name, outcomes, a), measure_values(name, outcomes, b)
            if flags[name]:
                t = _shares(a, b, f"share {name}", int(sum(xa)), len(xa), int(sum(xb)), len(xb))
            else:
                ran = bool(xa) and bool(xb) and len(set(xa) | set(xb)) > 1
                d = stats.diff_means(xa, xb, seed=seed) if ran else None
                t = {
                    "a": a,
                    "b": b,
                    "ran": ran,
                    "outcome": f"mean {name}",
                    "counts": f"n {len(xa)} vs {len(xb)}",
                    "difference": d,
                    "estimate": _num(d.estimate) if d else "–",
                    "interval": f"{_num(d.lo)} – {_num(d.hi)}" if d else "–",
                }
            t["key"] = {"measure": name}
            tests.append(t)
    run = [t for t in tests if t["ran"]]
    adjusted = stats.holm([t["difference"].p_value for t in run])
    for t, p_holm in zip(run, adjusted, strict=True):
        d = t["difference"]
        t["p"] = f"{_p(d.p_value)} ({d.test})"
        t["summary"] = {"a": t["a"], "b": t["b"], **t["key"], **vars(d), "p_holm": p_holm}
    for t in tests:
        if not t["ran"]:
            t["summary"] = {"a": t["a"], "b": t["b"], **t["key"], "counts": t["counts"]}
    return tests
