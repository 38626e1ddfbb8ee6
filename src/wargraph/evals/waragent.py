"""Accuracy of WarAgent-style runs against history, and figures of how the board evolved.

Scores are computed from the game's TRUE board (never a country's beliefs), and only on what
a run can produce: the scenario's initial state (alliances in force, wars in progress, armies
already mobilized when the window opens) is on the board from round 0 and is never counted as
a run's declaration or mobilization.

- alliances: the partition of countries into blocs (connected components of the alliance
  graph) at the end of the game, compared with the blocs in force at the end of the
  historical window by adjusted and normalized mutual information (scikit-learn). The
  headline is AMI. Why: with seven to ten countries, NMI rewards trivial answers — a game
  where nobody allies (all singletons) still scores ~0.64 NMI against 1914 — while AMI
  corrects for chance, so "nothing happened" scores 0 and only real agreement scores high.
  NMI is reported alongside for comparison with other work. Alliances that already existed
  are on the opening board, so `initial_alliance_ami` (the opening board's own score) is
  reported separately: it is what a run that changes nothing gets.
- war declarations: Jaccard similarity of the sets of DIRECTED (declarer, target) pairs
  declared in the run and in the window: A declaring war on B does not match B on A;
- mobilization: Jaccard similarity of the sets of countries that mobilized during the run
  and in the window;
- global war: every great power is at war with someone at the end of the game, and
  `global_war_match`: 1 when that agrees with history at the end of the window.

Countries the ground truth marks `uncertain` are left out of every score. Runs of different
scenarios (or scored against different ground truths) are never averaged together.

`eval_waragent(records, out_dir)` is what `wargraph eval waragent RECORD...` calls.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from wargraph.graphs.waragent.rules import (
    NO_RELATION,
    RELATIONS,
    Anonymiser,
    Board,
    GroundTruth,
    Situation,
    WarAgentConfig,
)
from wargraph.runs.records import RecordError

HEADLINE = "alliance_ami"

# --- partitions and scores ------------------------------------------------------------------


def blocs(countries: Sequence[str], links: Iterable[Sequence[str]]) -> list[int]:
    """Bloc label per country: connected components of the alliance links (union-find).

    A link is two or more countries allied with each other; labels are numbered in order of
    first appearance so equal partitions give equal label lists.
    """
    parent = {c: c for c in countries}

    def find(c: str) -> str:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for link in links:
        members = [c for c in link if c in parent]
        for other in members[1:]:
            parent[find(other)] = find(members[0])
    labels: dict[str, int] = {}
    return [labels.setdefault(find(c), len(labels)) for c in countries]


def jaccard(a: Iterable[Any], b: Iterable[Any]) -> float:
    """|A ∩ B| / |A ∪ B|; two empty sets agree perfectly (1.0)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def alliance_scores(
    countries: Sequence[str], predicted_links: Iterable[Sequence[str]], truth: GroundTruth
) -> dict[str, float]:
    # imported here: scikit-learn takes ~0.6 s, and loading the family (every `wargraph play
    # wwi`) imports this module to check its references
    from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score  # type: ignore[import-untyped]

    true_labels = blocs(countries, truth.alliances)
    pred_labels = blocs(countries, predicted_links)
    return {
        "alliance_ami": _clean(adjusted_mutual_info_score(true_labels, pred_labels)),
        "alliance_nmi": _clean(normalized_mutual_info_score(true_labels, pred_labels)),
    }


def _clean(x: float) -> float:
    """Round floating-point dust (AMI of -6e-16) to 0 so reports read plainly."""
    return 0.0 if abs(float(x)) < 1e-9 else float(x)


def at_war(board: Board) -> set[str]:
    return {c for pair in board.edges("war") for c in pair}


def _without(items: Iterable[Any], uncertain: set[str]) -> set[Any]:
    """Countries (or pairs of them) with every uncertain country left out."""
    out = set()
    for item in items:
        names = (item,) if isinstance(item, str) else tuple(item)
        if not uncertain & set(names):
            out.add(item if isinstance(item, str) else tuple(item))
    return out


def historical_global_war(
    opening: Board | None, truth: GroundTruth, great_powers: Sequence[str]
) -> bool | None:
    """Whether every great power was at war at the end of the window (wars in progress at the
    start plus those declared in it); None when history does not say (no war truth, or a
    great power whose part is uncertain)."""
    if truth.wars is None or set(great_powers) & set(truth.uncertain) or not great_powers:
        return None
    warring = {c for pair in truth.wars for c in pair}
    if opening is not None:
        warring |= at_war(opening)
    return all(g in warring for g in great_powers)


def score_board(
    board: Board,
    truth: GroundTruth,
    great_powers: Sequence[str],
    opening: Board | None = None,
) -> dict[str, Any]:
    """Every score for one final true board; `opening` is the round-0 board (the scenario's
    initial state), whose mobilizations are not the run's. `war_jaccard` is None when not
    scored."""
    uncertain = set(truth.uncertain)
    countries = [c for c in board.countries if c not in uncertain]
    # The shown relation decides: allies who are also at war (a simultaneous acceptance and
    # declaration) are at war, by the board's precedence.
    scores: dict[str, Any] = alliance_scores(countries, board.shown_edges("alliance"), truth)
    declared = _without(board.declarations, uncertain)
    scores["war_jaccard"] = (
        None if truth.wars is None else jaccard(declared, _without(truth.wars, uncertain))
    )
    already = set(opening.mobilized) if opening is not None else set()
    scores["mobilization_jaccard"] = jaccard(
        _without(set(board.mobilized) - already, uncertain), _without(truth.mobilized, uncertain)
    )
    warring = at_war(board)
    scores["global_war"] = bool(great_powers) and all(g in warring for g in great_powers)
    expected = historical_global_war(opening, truth, great_powers)
    scores["global_war_match"] = (
        None if expected is None else float(scores["global_war"] == expected)
    )
    if opening is not None:  # the initial state's own agreement, apart from the run's
        initial = alliance_scores(countries, opening.shown_edges("alliance"), truth)
        scores.update({f"initial_{k}": v for k, v in initial.items()})
    return scores


# --- records ---------------------------------------------------------------------------------

SCORES = [
    "alliance_ami",
    "alliance_nmi",
    "war_jaccard",
    "mobilization_jaccard",
    "global_war",
    "global_war_match",
    "initial_alliance_ami",
]


def _record_file(path: Path) -> Path:
    return path / "record.json" if path.is_dir() else path


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(x) for x in e["loc"]) or "top level"
    return f"{where}: {e['msg']}"


def load_run(path: Path) -> dict[str, Any]:
    """The pieces of a record the scores need: scenario section, world, run name, title.

    A record written with anonymisation is translated back, so scores, figures and
    reports always speak of the real countries. Anything that is not a readable WarAgent
    record raises RecordError naming the file.
    """
    file = _record_file(Path(path))
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RecordError(f"{file}: cannot read a game record ({err})") from None
    scenario = record.get("scenario") if isinstance(record, Mapping) else None
    if not isinstance(scenario, Mapping):
        raise RecordError(f"{file}: not a wargraph game record (no scenario in it)")
    family = scenario.get("family", "crisis")
    if family != "waragent" or not isinstance(scenario.get("waragent"), Mapping):
        hint = f"; use `wargraph eval {family}`" if _has_eval(str(family)) else ""
        raise RecordError(
            f"{file}: a record of a {family!r} game ({scenario.get('title', 'untitled')}); "
            f"`wargraph eval waragent` scores only waragent games (wwi, wwii, warring_states)"
            f"{hint}"
        )
    world_data = record.get("world") or record.get("final_world")
    if isinstance(world_data, Mapping) and "waragent" in world_data:
        world_data = world_data["waragent"]  # a kernel world holding several engines
    if not isinstance(world_data, Mapping) or "true" not in world_data:
        raise RecordError(f"{file}: the record has no waragent world (true board, history)")
    try:
        config = WarAgentConfig.model_validate(scenario["waragent"])
        world = Situation.model_validate(world_data)
    except ValidationError as err:
        raise RecordError(f"{file}: damaged waragent record ({_first_error(err)})") from None
    title = str(scenario.get("title", ""))
    if config.anonymise:
        anon = Anonymiser(config.anonymisation)
        world = world.renamed(anon.real)
        data = config.model_dump(mode="json")
        mapping = data.pop("anonymisation")
        config = WarAgentConfig.model_validate(
            {**anon.translate(data, backwards=True), "anonymisation": mapping}
        )
        title = anon.back(title)
    name = file.parent.name if file.name == "record.json" else file.stem
    return {"name": name, "path": str(file), "config": config, "world": world, "title": title}


def scenario_key(run: Mapping[str, Any]) -> str:
    """What must be equal for two runs to be averaged: the countries and the ground truth they
    are scored against (variants such as another trigger keep both, so they may be averaged)."""
    config: WarAgentConfig = run["config"]
    world: Situation = run["world"]
    opening = world.history[0].board.model_dump(mode="json") if world.history else None
    return json.dumps(
        [
            sorted(world.countries),
            config.ground_truth.model_dump(mode="json"),
            sorted(config.great_powers),
            opening and {k: opening[k] for k in ("relations", "mobilized")},
        ],
        sort_keys=True,
    )


def check_one_scenario(runs: Sequence[Mapping[str, Any]]) -> None:
    """Refuse to average runs scored against different histories, naming the groups."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault(scenario_key(run), []).append(run)
    if len(groups) < 2:
        return
    parts = []
    for i, members in enumerate(groups.values(), 1):
        title = members[0]["title"] or "untitled"
        paths = ", ".join(m["path"] for m in members[:3]) + (" ..." if len(members) > 3 else "")
        parts.append(f"{i}) {title!r}: {paths}")
    raise RecordError(
        "cannot average runs of different scenarios (different countries, opening board or "
        "ground truth): " + "; ".join(parts) + ". Evaluate each scenario separately."
    )


def score_run(run: Mapping[str, Any]) -> dict[str, Any]:
    world: Situation = run["world"]
    config: WarAgentConfig = run["config"]
    opening = world.history[0].board if world.history else None
    scores = score_board(world.true, config.ground_truth, config.great_powers, opening)
    return {"run": run["name"], "rounds": world.round, **scores}


def summarise(per_run: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | int]]:
    """Mean and sample standard deviation (0 for one run) of every numeric score."""
    out: dict[str, dict[str, float | int]] = {}
    for key in SCORES:
        values = [float(r[key]) for r in per_run if r.get(key) is not None]
        if not values:
            continue
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        out[key] = {"mean": statistics.fmean(values), "std": std, "n": len(values)}
    return out


def format_report(result: Mapping[str, Any]) -> str:
    """Per-run lines and mean ± std, for the terminal."""
    cols = SCORES
    head = f"{'run':<24} {'rounds':>6} " + " ".join(f"{c:>20}" for c in cols)
    lines = [f"headline: {HEADLINE} (chance-corrected; see src/wargraph/evals/waragent.py)"]
    if result.get("scenario"):
        lines.append(f"scenario: {result['scenario']}")
    if result.get("window"):
        lines.append(f"window: {result['window']}; wars are directed (declarer, target) pairs")
    lines.append(head)

    def cell(v: Any) -> str:
        if v is None:
            return f"{'-':>20}"
        if isinstance(v, bool):
            return f"{'yes' if v else 'no':>20}"
        return f"{v:>20.3f}"

    for r in result["runs"]:
        lines.append(
            f"{r['run'][:24]:<24} {r['rounds']:>6} " + " ".join(cell(r.get(c)) for c in cols)
        )
    summary = result["summary"]
    lines.append(
        f"{'mean ± std':<24} {'':>6} "
        + " ".join(
            f"{summary[c]['mean']:>12.3f} ± {summary[c]['std']:<5.3f}"
            if c in summary
            else cell(None)
            for c in cols
        )
    )
    return "\n".join(lines)


# --- figures ---------------------------------------------------------------------------------

COLOURS = {
    "war": "#d62728",
    "alliance": "#1f77b4",
    "peace": "#2ca02c",
    "treaty": "#bcbd22",
    NO_RELATION: "#f2f2f2",
    "self": "#ffffff",
}
SYMBOLS = {"war": "W", "alliance": "A", "peace": "P", "treaty": "T", NO_RELATION: "", "self": ""}
EDGE_STYLES = {"war": "-", "alliance": "-", "peace": "--", "treaty": ":"}


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 4)
    return math.ceil(n / cols), cols


def _short(name: str) -> str:
    return name if len(name) <= 10 else "".join(w[0] for w in name.replace("-", " ").split())


def board_figure(world: Situation, path: Path, title: str = "") -> Path:
    """Relation matrix per round (one panel each); colour and letter per relation, M = mobilized."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    kinds = [*RELATIONS, NO_RELATION, "self"]
    cmap = ListedColormap([COLOURS[k] for k in kinds])
    logs = world.history
    rows, cols = _grid(len(logs))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.7 * rows + 0.6), squeeze=False)
    names = [_short(c) for c in world.countries]
    for ax, log in zip(axes.flat, logs, strict=False):
        matrix = log.board.matrix()
        ax.imshow(
            [[kinds.index(x) for x in row] for row in matrix],
            cmap=cmap,
            vmin=0,
            vmax=len(kinds) - 1,
        )
        for i, row in enumerate(matrix):
            for j, rel in enumerate(row):
                text = (
                    "M"
                    if rel == "self" and log.board.is_mobilized(world.countries[i])
                    else SYMBOLS[rel]
                )
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color="black")
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=6)
        ax.set_yticks(range(len(names)), names, fontsize=6)
        ax.set_title(f"round {log.round}", fontsize=8)
    for ax in list(axes.flat)[len(logs) :]:
        ax.axis("off")
    legend = [Patch(color=COLOURS[k], label=f"{SYMBOLS[k]} {k}") for k in RELATIONS]
    legend.append(Patch(color=COLOURS["self"], label="M mobilized (diagonal)"))
    fig.legend(handles=legend, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.suptitle(title or "board evolution (true board)", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def graph_figure(world: Situation, path: Path, title: str = "") -> Path:
    """Relationship graph per round: countries on a circle, one edge style per relation.

    War edges are arrows from declarer to target; filled nodes are mobilized countries.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    n = len(world.countries)
    pos = {
        c: (
            math.cos(2 * math.pi * i / n + math.pi / 2),
            math.sin(2 * math.pi * i / n + math.pi / 2),
        )
        for i, c in enumerate(world.countries)
    }
    logs = world.history
    rows, cols = _grid(len(logs))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.7 * rows + 0.6), squeeze=False)
    for ax, log in zip(axes.flat, logs, strict=False):
        board = log.board
        for kind in ("treaty", "peace", "alliance"):
            for a, b in board.shown_edges(kind):
                (x1, y1), (x2, y2) = pos[a], pos[b]
                ax.plot([x1, x2], [y1, y2], EDGE_STYLES[kind], color=COLOURS[kind], lw=2, zorder=1)
        for a, b in board.declarations:
            if board.has(a, b, "war"):
                ax.annotate(
                    "",
                    xy=pos[b],
                    xytext=pos[a],
                    zorder=2,
                    arrowprops={
                        "arrowstyle": "-|>",
                        "color": COLOURS["war"],
                        "lw": 1.6,
                        "shrinkA": 9,
                        "shrinkB": 9,
                    },
                )
        for c, (x, y) in pos.items():
            filled = board.is_mobilized(c)
            ax.scatter(
                [x],
                [y],
                s=160,
                zorder=3,
                edgecolors="black",
                facecolors="#444444" if filled else "white",
            )
            ax.text(x * 1.28, y * 1.2, _short(c), ha="center", va="center", fontsize=6)
        ax.set_xlim(-1.6, 1.6)
        ax.set_ylim(-1.5, 1.5)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(f"round {log.round}", fontsize=8)
    for ax in list(axes.flat)[len(logs) :]:
        ax.axis("off")
    legend = [
        Line2D([0], [0], color=COLOURS[k], ls=EDGE_STYLES[k], lw=2, label=k) for k in RELATIONS
    ]
    legend.append(
        Line2D(
            [0],
            [0],
            marker="o",
            color="w",
            markerfacecolor="#444444",
            markeredgecolor="black",
            label="mobilized",
        )
    )
    fig.legend(handles=legend, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.suptitle(title or "relationship graph (true board)", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _has_eval(family: str) -> bool:
    """Whether another family's entry declares an eval command (for the hint above)."""
    from wargraph.kernel.families import FamilyError, get

    try:
        return family != "waragent" and bool(get(family).eval_command)
    except FamilyError:
        return False


# --- entry point -----------------------------------------------------------------------------


def eval_waragent(records: list[Path], out_dir: Path, *, echo: bool = True) -> dict[str, Any]:
    """Score runs against history and draw their boards; what `wargraph eval waragent` calls.

    Returns `{"headline", "runs": [per-run scores], "summary": {score: {mean, std, n}},
    "figures": [paths], "report": text}` and writes `scores.json` and the figures into
    `out_dir`. Raises RecordError (a ValueError) naming the file for a record that is not a
    waragent game, and naming the groups when the runs are of different scenarios.
    """
    if not records:
        raise ValueError("no records given")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [load_run(Path(p)) for p in records]
    check_one_scenario(runs)
    per_run, figures, seen = [], [], set()
    for run in runs:
        name = run["name"]
        while name in seen:  # two records in folders of the same name
            name += "_"
        seen.add(name)
        run["name"] = name
        per_run.append(score_run(run))
        figures.append(
            str(board_figure(run["world"], out_dir / f"board_{name}.png", f"{name}: board"))
        )
        figures.append(
            str(graph_figure(run["world"], out_dir / f"graph_{name}.png", f"{name}: relations"))
        )
    truth = runs[0]["config"].ground_truth
    result: dict[str, Any] = {
        "headline": HEADLINE,
        "scenario": runs[0]["title"],
        "window": truth.window,
        "runs": per_run,
        "summary": summarise(per_run),
        "figures": figures,
    }
    result["report"] = format_report(result)
    (out_dir / "scores.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    page = write_eval_report(result, out_dir)
    if echo:  # the CLI prints nothing of its own
        print(result["report"])
        print(
            f"report: {page}; scores.csv (one row per run), scores.json and figures in {out_dir}/"
        )
    return result


def write_eval_report(result: Mapping[str, Any], out_dir: Path) -> Path:
    """scores.csv (one row per run), report.md and report.html (the scores, their mean and
    standard deviation, each run's board and relations figures)."""
    from wargraph.evals.report_page import flat_row, table, write_csv, write_page

    write_csv(out_dir / "scores.csv", [flat_row(r) for r in result["runs"]])
    summary = result["summary"]
    lines = [
        f"# WarAgent eval: {result.get('scenario') or 'runs'}",
        "",
        f"Headline score: `{result['headline']}` (alliance blocs against history, "
        "chance-corrected). "
        + (
            f"Window: {result['window']}; wars are directed (declarer, target) pairs."
            if result.get("window")
            else ""
        ),
        "",
        "## Scores per run",
        "",
        *table(
            ["run", "rounds", *SCORES],
            [[r["run"], r["rounds"], *(r.get(c) for c in SCORES)] for r in result["runs"]],
        ),
        "",
        "## Over the runs",
        "",
        *table(
            ["score", "mean", "sd", "n"],
            [
                [c, summary[c]["mean"], summary[c]["std"], summary[c]["n"]]
                for c in SCORES
                if c in summary
            ],
        ),
        "",
        "## Figures",
        "",
    ]
    for fig in result.get("figures", []):
        name = Path(fig).name
        lines += [f"![{name}]({name})", ""]
    lines += ["Files: `scores.csv` (one row per run), `scores.json` (everything).", ""]
    md = out_dir / "report.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return write_page(md)


def record_measures(record: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The family's measures for experiments (`Family.measures`): the accuracy of the record at
    `path` (read from the file, so an anonymised game is scored under its real names)."""
    return score_run(load_run(path))


def record_figure(record_path: Path, path: Path, title: str = "") -> Path:
    """The family's figure for experiment reports (`Family.report_figure`): the board's evolution."""
    return board_figure(load_run(record_path)["world"], path, title)
