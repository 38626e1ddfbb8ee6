"""Critical State Analysis as a comparison: baseline and change replayed from the same fork with
the same seeds, and the difference in the family's measures with intervals.

As the AI_Diplomacy paper uses it, Critical State Analysis reruns a game from a chosen moment
many times under a changed condition (a prompt, a persona, a model) and compares the outcomes
with reruns of the same moment under the stored condition. Here run k of both arms gets the same
seed (the stored game's seed + k), so the runs are paired and a difference comes from the
change, not from the dice. Each run's measures are the family's own (`Family.measures`, on the
run's record: Diplomacy's scores, centres and order rates, WarAgent's accuracy, ...) and the
numbers of the replay's outcome (Diplomacy: centres, their change, messages sent; other
families: events written, per seat and kind). Each measure gets the mean of both arms, the
difference (change - baseline, the mean of the paired differences) with a 95% percentile
bootstrap interval over the pairs and a sign-flip test p-value (`wargraph.evals.stats`). With 3-10 runs per arm the intervals are wide; a
study should say so.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wargraph.evals.report_page import CsvWriter
from wargraph.runs.replay import ReplayResult, replay
from wargraph.runs.runner import GameError


@dataclass
class Row:
    measure: str
    baseline: float | None
    change: float | None
    difference: float | None
    lo: float | None
    hi: float | None
    p_value: float | None
    n: int


@dataclass
class Comparison:
    baseline: ReplayResult
    change: ReplayResult
    rows: list[Row] = field(default_factory=list)
    out_dir: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.change.source,
            "change": self.change.change,
            "runs": len(self.change.runs),
            "seeds": [r["seed"] for r in self.change.runs],
            "rows": [r.__dict__ for r in self.rows],
        }


def outcome_measures(outcome: dict[str, Any]) -> dict[str, float]:
    """The numbers of a replay's outcome, to one level (`centres.FRANCE`); a generic outcome
    (a list of new events) counts the events each seat wrote, per kind (`events.azuristan.plan`)."""
    from wargraph.evals.judge import flatten_numbers

    out = {k: float(v) for k, v in flatten_numbers(outcome).items() if k.count(".") <= 1}
    events = outcome.get("events")
    if isinstance(events, list):
        for e in events:
            name = f"events.{e.get('author', '?')}.{e.get('kind', '?')}"
            out[name] = out.get(name, 0.0) + 1.0
    return out


def run_measures(run: dict[str, Any]) -> dict[str, float]:
    """One replayed run's measures: the family's (from its record) and its outcome's numbers."""
    from wargraph.evals.judge import family_measures
    from wargraph.runs.records import load_record

    out = outcome_measures(run.get("outcome") or {})
    path = run.get("record")
    if path:
        found, _note = family_measures(load_record(path), path)
        out.update({f"game.{k}": float(v) for k, v in found.items()})
    return out


def compare_rows(
    baseline: list[dict[str, float]], change: list[dict[str, float]], *, seed: int = 0
) -> list[Row]:
    """One row per measure either arm has, in name order, with the difference and interval.
    Run k of both arms is a pair (the same seed): the difference is the mean of the paired
    differences, its interval a bootstrap over pairs and its p-value a sign-flip test; a measure
    some run lacks is compared unpaired (`diff_means`)."""
    from wargraph.evals.stats import diff_means, diff_paired

    names = sorted({k for m in baseline + change for k in m})
    rows = []
    for name in names:
        y = [m[name] for m in baseline if name in m]
        x = [m[name] for m in change if name in m]
        paired = len(baseline) == len(change) and len(x) == len(y) == len(change)
        d = diff_paired(x, y, seed=seed) if paired else diff_means(x, y, seed=seed)
        rows.append(
            Row(
                measure=name,
                baseline=sum(y) / len(y) if y else None,
                change=sum(x) / len(x) if x else None,
                difference=d.estimate,
                lo=d.lo,
                hi=d.hi,
                p_value=d.p_value,
                n=min(len(x), len(y)),
            )
        )
    return rows


def compare(
    *,
    db: str | Path,
    thread_id: str,
    phase: str,
    runs: int = 3,
    overrides: list[str] | None = None,
    model: str | None = None,
    out_dir: str | Path,
    phases: int = 1,
    cache: str | None = None,
) -> Comparison:
    """Replay `thread_id` at `phase` `runs` times as stored (the baseline) and `runs` times
    under the change, run k of both with the same seed; the table of differences. With a
    `cache` (wargraph.models.cache) the change's calls that are the baseline's own (a seat the
    change does not reach, before it does) are answered from the baseline's."""
    if not overrides and not model:
        raise GameError("--compare needs a change to compare: --set KEY=VALUE or --model")
    out = Path(out_dir)
    arms: dict[str, ReplayResult] = {}
    for arm, (ov, mod) in {"baseline": (None, None), "change": (overrides, model)}.items():
        folder = out / arm
        if folder.exists():  # a previous comparison's runs are not mixed into this one
            shutil.rmtree(folder)
        arms[arm] = replay(
            db=db,
            thread_id=thread_id,
            phase=phase,
            runs=runs,
            overrides=ov,
            model=mod,
            out_dir=folder,
            phases=phases,
            cache=cache,
        )
    result = Comparison(arms["baseline"], arms["change"], out_dir=out)
    result.rows = compare_rows(
        [run_measures(r) for r in arms["baseline"].runs],
        [run_measures(r) for r in arms["change"].runs],
    )
    write_comparison(result, out)
    return result


def _num(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _interval(r: Row) -> str:
    return "-" if r.lo is None or r.hi is None else f"[{r.lo:+.2f}, {r.hi:+.2f}]"


def differing(rows: list[Row]) -> list[Row]:
    """The rows where the arms differ (a measure equal in every run of both says nothing)."""
    return [r for r in rows if r.difference or (r.lo or 0) != 0 or (r.hi or 0) != 0]


def write_comparison(result: Comparison, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "compare.json", out / "compare.csv", out / "compare.md"]
    paths[0].write_text(json.dumps(result.to_dict(), indent=2, default=str), encoding="utf-8")
    with paths[1].open("w", newline="", encoding="utf-8") as fh:
        w = CsvWriter(fh)
        w.writerow(["measure", "baseline", "change", "difference", "lo", "hi", "p_value", "n"])
        for r in result.rows:
            w.writerow([r.measure, r.baseline, r.change, r.difference, r.lo, r.hi, r.p_value, r.n])
    src, ch = result.change.source, result.change.change
    lines = [
        f"# Critical state analysis of {src['thread_id']} at {src['phase']}",
        "",
        f"Baseline: the stored game's condition. Change: {ch.get('overrides') or []}"
        + (f", model {ch['model']}" if ch.get("model") else "")
        + f". {len(result.change.runs)} run(s) per arm, run k of both with seed "
        f"{', '.join(str(r['seed']) for r in result.change.runs)}; {ch.get('phases', 1)} "
        "phase(s) replayed from the fork.",
        "",
        "Difference = change - baseline (mean of the differences of runs with the same seed), "
        "95% percentile bootstrap interval over the pairs, sign-flip test p-value. Measures "
        "equal in every pair are only in compare.csv.",
        "",
        "| measure | baseline | change | difference | 95% interval | p |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for r in differing(result.rows):
        lines.append(
            f"| {r.measure} | {_num(r.baseline)} | {_num(r.change)} | {_num(r.difference)} "
            f"| {_interval(r)} | {_num(r.p_value, 3)} |"
        )
    if not differing(result.rows):
        lines.append("| (no measure differs between the arms) | | | | | |")
    paths[2].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def print_comparison(result: Comparison, console: Any, limit: int = 25) -> None:
    """The measures that differ, largest difference first (all of them in compare.md/csv)."""
    from rich.table import Table

    from wargraph.seats.terminal import safe

    src = result.change.source
    rows = sorted(differing(result.rows), key=lambda r: -abs(r.difference or 0))
    t = Table(
        title=f"Critical state analysis of {safe(src['thread_id'])} at {safe(src['phase'])}: "
        f"change - baseline, {len(result.change.runs)} paired run(s) per arm"
    )
    for col in ("measure", "baseline", "change", "difference", "95% interval", "p"):
        t.add_column(col, justify="left" if col == "measure" else "right", overflow="fold")
    for r in rows[:limit]:
        t.add_row(
            safe(r.measure),
            _num(r.baseline),
            _num(r.change),
            _num(r.difference),
            _interval(r),
            _num(r.p_value, 3),
        )
    if not rows:
        t.add_row("(no measure differs between the arms)", "", "", "", "", "")
    console.print(t)
    more = f" ({len(rows) - limit} more differing measures there)" if len(rows) > limit else ""
    console.print(f"Table in {result.out_dir}/compare.md and compare.csv{more}")
