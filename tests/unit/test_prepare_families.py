"""`wargraph prepare` writes a scenario of the family the description asks for (or --family),
validated before it is written, and never replaces a file without --force; the README's
`experiment src/wargraph/scenarios/experiments/X.yaml` works outside a checkout."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.evals.experiment.spec import ExperimentError, resolve_experiment
from wargraph.evals.tournament.spec import TournamentError, resolve_tournament
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.prepare import choose_family

runner = CliRunner()


@pytest.mark.parametrize(
    ("request_text", "family"),
    [
        ("A tabletop exercise: ransomware hits a hospital at night.", "tabletop"),
        ("Europe in July 1914, as it happened: the historical July crisis.", "waragent"),
        ("A game of Diplomacy among the seven powers, from 1901.", "diplomacy"),
        ("Colonel Blotto: two armies allocate forces across three fronts.", "blotto"),
        ("A water summit of three lake states negotiating a treaty.", "flow"),
        ("A border standoff between two nuclear states.", "crisis"),
        ("Something happens somewhere.", "crisis"),
    ],
)
def test_the_family_that_fits_the_description(request_text, family):
    assert choose_family(request_text).family == family


@pytest.mark.parametrize(
    "family", ["crisis", "tabletop", "waragent", "diplomacy", "blotto", "flow"]
)
def test_prepare_writes_a_valid_scenario_of_every_family(tmp_path, family):
    out = tmp_path / f"{family}.yaml"
    r = runner.invoke(
        app,
        ["prepare", "A tense week.", "-o", str(out), "--family", family, "--model", "scripted"],
    )
    assert r.exit_code == 0, r.output
    assert f"family: {family}" in r.output
    sc = load_scenario(str(out))
    assert sc.family == family and sc.title


def test_prepare_picks_the_family_from_the_words(tmp_path):
    out = tmp_path / "drill.yaml"
    r = runner.invoke(
        app,
        ["prepare", "A tabletop exercise on a data breach.", "-o", str(out), "--model", "scripted"],
    )
    assert r.exit_code == 0, r.output
    assert load_scenario(str(out)).family == "tabletop"
    assert "'tabletop'" in r.output and "'exercise'" in r.output  # why it was picked


def test_prepare_refuses_an_existing_file_without_force(tmp_path):
    out = tmp_path / "mine.yaml"
    out.write_text("my own work\n")
    r = runner.invoke(app, ["prepare", "A crisis.", "-o", str(out), "--model", "scripted"])
    assert r.exit_code == 2 and "--force" in r.output
    assert out.read_text() == "my own work\n"  # untouched
    r = runner.invoke(
        app, ["prepare", "A crisis.", "-o", str(out), "--model", "scripted", "--force"]
    )
    assert r.exit_code == 0, r.output
    assert load_scenario(str(out)).family == "crisis"


def test_prepare_names_the_families_for_an_unknown_one(tmp_path):
    out = tmp_path / "x.yaml"
    r = runner.invoke(
        app, ["prepare", "A crisis.", "-o", str(out), "--family", "chess", "--model", "scripted"]
    )
    assert r.exit_code == 2 and "no such game family" in r.output and "diplomacy" in r.output
    assert not out.exists()


def test_readme_paths_to_shipped_files_work_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no src/wargraph/evals/ folder here
    with pytest.warns(UserWarning, match="wargraph experiment azuristan_personas"):
        found = resolve_experiment("src/wargraph/scenarios/experiments/azuristan_personas.yaml")
    assert found.name == "azuristan_personas.yaml" and found.is_file()
    with pytest.warns(UserWarning, match="wargraph tournament blotto_bots"):
        assert resolve_tournament("src/wargraph/scenarios/tournaments/blotto_bots.yaml").is_file()
    with pytest.raises(ExperimentError, match="shipped: .*azuristan_personas"):
        resolve_experiment("src/wargraph/scenarios/experiments/nope.yaml")
    with pytest.raises(TournamentError, match="shipped: .*blotto_bots"):
        resolve_tournament("src/wargraph/scenarios/tournaments/nope.yaml")
