"""Every shipped experiment and tournament runs to its report at its shipped size (issue 29,
item 8), on the scripted model: a study a user is handed must not crash before its report.

The sizes are the files' own (runs, grid, rotations); only the model is scripted. Studies that
take long at their shipped size are marked slow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wargraph.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((ROOT / "src" / "wargraph" / "scenarios" / "experiments").glob("*.yaml"))
TOURNAMENTS = sorted((ROOT / "src" / "wargraph" / "scenarios" / "tournaments").glob("*.yaml"))
# measured on a shared 2-core machine: 24-530 s each at their shipped size, blotto_bots 11 s
SLOW = {p.stem for p in EXPERIMENTS + TOURNAMENTS} - {"blotto_bots"}


def _param(path: Path) -> object:
    marks = [pytest.mark.slow] if path.stem in SLOW else []
    return pytest.param(path, id=path.stem, marks=marks)


def test_every_shipped_study_is_listed():
    """A new shipped file is run by this test (the lists are not empty and name real files)."""
    assert len(EXPERIMENTS) >= 4 and len(TOURNAMENTS) >= 2


@pytest.mark.parametrize("path", [_param(p) for p in EXPERIMENTS])
def test_shipped_experiment_runs_to_its_report(path: Path, tmp_path: Path):
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["experiment", str(path), "--model", "scripted", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "report:" in r.output and (out / "report.md").exists(), r.output
    meta = json.loads((out / "experiment.json").read_text())
    assert meta["model"] == "scripted"
    # the shipped size: no run was left out
    assert "error" not in r.output.lower(), r.output


@pytest.mark.parametrize("path", [_param(p) for p in TOURNAMENTS])
def test_shipped_tournament_runs_to_its_report(path: Path, tmp_path: Path):
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["tournament", str(path), "--model", "scripted", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "report.md").exists(), r.output


def test_constant_measures_plot_with_intervals(tmp_path: Path):
    """A measure equal in every run (0.1 seven times: numpy's mean of the copies is a float step
    below the exact mean) draws its bar: the interval holds the mean, no negative error bar."""
    import wargraph.evals.report as report
    import wargraph.evals.stats as stats

    values = {"a": [0.1] * 7, "b": [0.7] * 7, "c": [0.1] * 6}
    sums = {k: stats.summarise(v) for k, v in values.items()}
    for s in sums.values():
        assert s.lo is not None and s.hi is not None and s.mean is not None
        assert s.lo <= s.mean <= s.hi
    conditions = [{"id": k, "label": k} for k in values]
    path = report.measure_figure("m", conditions, values, sums, tmp_path / "m.png")
    assert path.exists()


def test_an_experiment_that_fails_advises_running_it_again(monkeypatch, capsys):
    """An unexpected failure in an experiment says to run the experiment again (its finished
    games are kept), not `wargraph resume`, which continues one game."""
    import sys

    import wargraph.cli as cli
    import wargraph.evals.experiment as experiment

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(experiment, "run_from_cli", broken)
    monkeypatch.setattr(sys, "argv", ["wargraph", "experiment", "waragent_accuracy"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "run `wargraph experiment waragent_accuracy` again" in err
    assert "wargraph resume" not in err
