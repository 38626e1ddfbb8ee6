"""The report on outcomes of known counts: Snow Globe's published table (dove-dove 1/20,
dove-hawk 4/20, hawk-hawk 14/20) must come out with its Wilson intervals and Fisher tests."""

from __future__ import annotations

import csv
import json

import pytest

import wargraph.evals.stats as stats
from wargraph.evals.report import compare_pairs, write_report

PUBLISHED = {"dove-dove": 1, "dove-hawk": 4, "hawk-hawk": 14}


def meta(**extra):
    return {
        "name": "personas",
        "description": "Snow Globe's counts",
        "scenario": "azuristan_crimsonia",
        "runs": 20,
        "seed": 0,
        "model": "embedded",
        "judge_model": "embedded",
        "axes": ["pairing"],
        "conditions": [
            {"id": c, "label": c, "levels": {"pairing": c}, "overrides": {}} for c in PUBLISHED
        ],
        "questions": [
            {"id": "conflict", "text": "Did armed conflict occur?", "options": ["yes", "no"]}
        ],
        "compare": [],
        "games": 60,
        **extra,
    }


def outcomes(with_measures=False, undetermined=0):
    out = []
    for cond, k in PUBLISHED.items():
        for run in range(20):
            answer = "yes" if run < k else ("undetermined" if run >= 20 - undetermined else "no")
            o = {
                "experiment": "personas",
                "condition": cond,
                "label": cond,
                "levels": {"pairing": cond},
                "run": run,
                "seed": run,
                "status": "done",
                "how": "played",
                "rounds": 1,
                "answers": {"conflict": answer},
                "judgements": [
                    {
                        "id": "conflict",
                        "answer": answer,
                        "source": "model",
                        "quotes": [{"line": f"line {run}", "match": "exact"}],
                    }
                ],
                "measures": {},
                "thread_id": f"t.{cond}.{run}",
                "folder": f"games/{cond}/{run:03d}",
            }
            if with_measures:
                o["measures"] = {"escalation": float(k + run % 3), "nuclear": run < k // 2}
            out.append(o)
    return out


def test_published_table_with_intervals_and_tests(tmp_path):
    path = write_report(tmp_path, meta(), outcomes())
    report = path.read_text()
    assert "| dove-dove | 20 | 1/20 (5%, 1%–24%) | 19/20 (95%, 76%–99%) |" in report
    assert "| hawk-hawk | 20 | 14/20 (70%, 48%–85%) | 6/20 (30%, 15%–52%) |" in report
    assert "undetermined" not in report.split("## Comparisons")[0].split("| condition |")[2]
    # comparisons: every pair of the three conditions, with Newcombe interval and Fisher p
    d = stats.diff_proportions(1, 20, 14, 20)
    row = next(line for line in report.splitlines() if line.startswith("| dove-dove vs hawk-hawk"))
    assert "1/20 vs 14/20" in row and "-65 pp" in row
    assert f"{d.lo * 100:+.0f} pp – {d.hi * 100:+.0f} pp" in row
    assert "<0.0001 (Fisher exact)" in row
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["questions"]["conflict"]["dove-hawk"]["yes"]["k"] == 4
    assert summary["questions"]["conflict"]["dove-hawk"]["yes"]["lo"] == pytest.approx(
        stats.wilson(4, 20).lo
    )
    fisher = [c for c in summary["comparisons"] if (c["a"], c["b"]) == ("dove-dove", "hawk-hawk")]
    assert fisher[0]["p_value"] == pytest.approx(stats.fisher_exact([[1, 19], [14, 6]])[1])
    png = tmp_path / "figures" / "question_conflict.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    rows = list(csv.DictReader((tmp_path / "outcomes.csv").open()))
    assert len(rows) == 60
    assert sum(r["answer:conflict"] == "yes" for r in rows if r["pairing"] == "hawk-hawk") == 14
    assert rows[0]["quote:conflict"] == "line 0"


def test_undetermined_is_counted_and_shown(tmp_path):
    report = write_report(tmp_path, meta(), outcomes(undetermined=2)).read_text()
    assert (
        "| dove-dove | 20 | 1/20 (5%, 1%–24%) | 17/20 (85%, 64%–95%) | 2/20 (10%, 3%–30%) |"
        in report
    )


def test_numeric_and_yes_no_measures(tmp_path):
    report = write_report(tmp_path, meta(), outcomes(with_measures=True)).read_text()
    assert "| condition | n | escalation | nuclear |" in report
    xs = [14.0 + r % 3 for r in range(20)]
    mean, sd = stats.mean_sd(xs)
    lo, hi = stats.bootstrap_ci(xs, seed=0)
    assert f"{mean:.3f} ± {sd:.3f} [{lo:.3f}, {hi:.3f}]" in report
    assert "7/20 (35%, 18%–57%)" in report  # nuclear: 7 of hawk-hawk's 20 (run < 14 // 2)
    assert (tmp_path / "figures" / "measure_escalation.png").exists()
    assert "mean escalation" in report and "(permutation)" in report
    assert "share nuclear" in report


def test_compare_pairs_defaults_and_names():
    m = meta()
    assert compare_pairs(m) == [
        ("dove-dove", "dove-hawk"),
        ("dove-dove", "hawk-hawk"),
        ("dove-hawk", "hawk-hawk"),
    ]
    assert compare_pairs(meta(compare=[["hawk-hawk", "dove-dove"]])) == [("hawk-hawk", "dove-dove")]
    many = meta()
    many["conditions"] = [{"id": f"c{i}", "label": f"c{i}", "levels": {}} for i in range(6)]
    assert compare_pairs(many) == [("c0", f"c{i}") for i in range(1, 6)]


def test_report_rebuilt_from_the_folder(tmp_path):
    (tmp_path / "experiment.json").write_text(json.dumps(meta()))
    for o in outcomes():
        d = tmp_path / o["folder"]
        d.mkdir(parents=True)
        (d / "outcome.json").write_text(json.dumps(o))
    report = write_report(tmp_path).read_text()
    assert "14/20 (70%, 48%–85%)" in report
    with pytest.raises(ValueError, match="not an experiment folder"):
        write_report(tmp_path / "nothing")


def test_a_yes_no_figure_draws_both_shares(tmp_path):
    """Issue 41: the figure had no "no" bars. Both shares are drawn, each in its colour."""
    from matplotlib.image import imread

    write_report(tmp_path, meta(), outcomes())
    pixels = imread(tmp_path / "figures" / "question_conflict.png")[:, :, :3]

    def has(colour: str) -> bool:
        rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        return bool((abs(pixels - rgb).max(axis=2) < 0.02).sum() > 50)

    assert has("#4c72b0")  # yes
    assert has("#dd8452")  # no


def test_a_report_of_fewer_runs_says_the_count_it_played(tmp_path):
    """Issue 41: a 2-run study's report said "20 plays per pairing" (the file's description)."""
    from wargraph.evals.experiment.spec import load_experiment

    exp = load_experiment("azuristan_personas", runs=2)
    assert (exp.runs, exp.file_runs) == (2, 20)
    assert "20 plays" not in exp.description
    assert load_experiment("azuristan_personas").file_runs is None
    few = [o for o in outcomes() if o["run"] < 2]
    report = write_report(tmp_path, meta(runs=2, file_runs=20, games=6), few).read_text()
    assert "**2 play(s) per condition** (`--runs 2`): the experiment file asks for 20" in report
    assert "3 condition(s) x 2 play(s) = 6 games" in report


def test_constant_comparisons_are_skipped_and_holm_counts_the_ones_run(tmp_path):
    """Issue 41: the WarAgent report ran 27 comparisons, some between constants (p = 1.0)."""
    rows = outcomes(with_measures=True)
    for o in rows:
        o["measures"]["turns"] = 5.0  # the same in every game: nothing to compare
        o["measures"]["surrendered"] = False
    report = write_report(tmp_path, meta(), rows).read_text()
    section = report.split("## Comparisons")[1].split("\n## ")[0]
    # 3 pairs x (conflict, escalation, nuclear) run; 3 pairs x (turns, surrendered) skipped
    assert "9 comparison(s) run" in section and "6 skipped" in section
    assert "Holm-adjusted p (9 tests)" in section
    assert "turns" not in section and "surrendered" not in section
    summary = json.loads((tmp_path / "summary.json").read_text())
    ran = summary["comparisons"]
    assert len(ran) == 9 and len(summary["comparisons_skipped"]) == 6
    raw = [c["p_value"] for c in ran]
    assert [c["p_holm"] for c in ran] == pytest.approx(stats.holm(raw))
    smallest = min(range(9), key=lambda i: raw[i])
    assert ran[smallest]["p_holm"] == pytest.approx(min(1.0, 9 * raw[smallest]))


def test_holm_adjusts_over_the_tests_given():
    assert stats.holm([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []
