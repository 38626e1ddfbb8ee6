"""AI_Diplomacy's analyses (wargraph.graphs.diplomacy.analyses): relationship reciprocity and
aggression, on hand-made diaries and boards whose answers are worked out in the comments, then
on a real scripted game through `wargraph eval diplomacy` and an experiment's measures."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from wargraph.graphs.diplomacy.analyses import (
    across_games,
    aggression,
    attack_target,
    power_models,
    reciprocity,
)


def diary(phase: str, power: str, **ratings: str) -> dict:
    return {"phase": phase, "power": power, "relationships": ratings}


def test_reciprocity_counts_matched_over_and_under_estimated_ratings():
    diaries = [
        # S1901M: FRANCE-ENGLAND both Friendly (matched); FRANCE says Ally to GERMANY, which says
        # Enemy back: FRANCE over-estimates, GERMANY under-estimates. ENGLAND-GERMANY: only
        # ENGLAND rated (not answered).
        diary("S1901M", "FRANCE", ENGLAND="Friendly", GERMANY="Ally"),
        diary("S1901M", "ENGLAND", FRANCE="friendly", GERMANY="Enemy"),
        diary("S1901M", "GERMANY", FRANCE="Enemy"),
        # an earlier entry of the same phase is replaced by the power's last one
        diary("F1901M", "FRANCE", ENGLAND="Enemy"),
        diary("F1901M", "FRANCE", ENGLAND="Neutral", ITALY="Bogus"),
        diary("F1901M", "ENGLAND", FRANCE="Neutral"),
    ]
    r = reciprocity(diaries)
    # pairs: S1901M FRANCE-ENGLAND (matched), FRANCE-GERMANY (not); F1901M FRANCE-ENGLAND (matched)
    assert (r["pairs"], r["matched"]) == (3, 2)
    assert r["share_matched"] == 2 / 3
    assert r["by_pair"] == {
        "ENGLAND-FRANCE": {"pairs": 2, "matched": 2},
        "FRANCE-GERMANY": {"pairs": 1, "matched": 0},
    }
    france, germany = r["by_power"]["FRANCE"], r["by_power"]["GERMANY"]
    assert (france["rated"], france["matched"], france["over"], france["under"]) == (3, 2, 1, 0)
    assert (germany["rated"], germany["over"], germany["under"]) == (1, 0, 1)
    assert r["by_power"]["ENGLAND"]["rated"] == 2  # its GERMANY rating went unanswered
    assert r["by_power"]["ITALY"]["share_matched"] is None


def board(phase: str, units: dict, centres: dict) -> dict:
    return {"name": phase, "state": {"units": units, "centers": centres}}


SAVED = {
    "phases": [
        board(
            "S1901M",
            {"FRANCE": ["A PAR", "F BRE"], "GERMANY": ["A MUN"], "RUSSIA": ["F STP/SC"]},
            {"FRANCE": ["PAR", "BRE"], "GERMANY": ["MUN", "BEL"], "RUSSIA": ["STP"]},
        ),
        board("F1901M", {"FRANCE": ["A BUR"], "GERMANY": ["A MUN"]}, {"GERMANY": ["MUN"]}),
    ]
}


def order(phase: str, power: str, text: str, **more) -> dict:
    return {"phase": phase, "power": power, "order": text, "result": "success", **more}


def test_aggression_counts_moves_and_supports_onto_another_powers_unit_or_centre():
    assert attack_target("A PAR - BUR") == "BUR"
    assert attack_target("F NWY S F BAR - STP/NC") == "STP"
    assert attack_target("A BUR S A MUN") is None  # support to hold
    assert attack_target("F ENG C A LON - BRE") is None  # a convoy is not counted
    records = [
        order("S1901M", "FRANCE", "A PAR - BUR"),  # BUR: nobody's -> not aggressive
        order("S1901M", "FRANCE", "F BRE - BEL"),  # BEL: GERMANY's centre -> aggressive
        order("S1901M", "FRANCE", "A PAR - MUN", invalid=True),  # never reached the board
        order("S1901M", "GERMANY", "A MUN - PAR"),  # PAR: FRANCE's unit -> aggressive
        order("S1901M", "RUSSIA", "F STP/SC - BOT"),  # own coast to sea -> not aggressive
        order("F1901M", "FRANCE", "A BUR - MUN"),  # MUN: GERMANY's unit -> aggressive
        order("F1901M", "GERMANY", "A MUN S A BUR - MUN"),  # onto its own unit -> not
        order("W1901A", "FRANCE", "A PAR B"),  # a build is no movement order
    ]
    a = aggression(records, SAVED)
    fr = a["FRANCE"]
    assert (fr["orders"], fr["aggressive"], fr["share"]) == (3, 2, 2 / 3)
    assert fr["by_year"] == {"1901": {"orders": 3, "aggressive": 2, "share": 2 / 3}}
    assert fr["toward"] == {"GERMANY": 2}
    assert (a["GERMANY"]["orders"], a["GERMANY"]["aggressive"]) == (2, 1)
    assert a["GERMANY"]["toward"] == {"FRANCE": 1}
    assert a["RUSSIA"]["share"] == 0.0
    assert a["ITALY"]["share"] is None  # no orders: no share


def test_pooled_per_model_with_intervals():
    record = {
        "models": {"openai:a": {"roles": ["FRANCE"]}, "openai:b": {"roles": ["GERMANY"]}},
        "scenario": {"players": {"ENGLAND": {"model": "openai:c"}}},
    }
    assert power_models(record)["FRANCE"] == "openai:a"
    assert power_models(record)["ENGLAND"] == "openai:c"
    assert power_models(record)["TURKEY"] == "unrecorded"
    m = {
        "reciprocity": reciprocity(
            [diary("S1901M", "FRANCE", GERMANY="Ally"), diary("S1901M", "GERMANY", FRANCE="Ally")]
        ),
        "aggression_detail": aggression(
            [order("S1901M", "FRANCE", "F BRE - BEL"), order("S1901M", "GERMANY", "A MUN H")],
            SAVED,
        ),
    }
    pooled = across_games([(record, m), (record, m)])
    a = pooled["by_model"]["openai:a"]
    assert (a["matched"]["k"], a["matched"]["n"]) == (2, 2)
    assert (a["aggression"]["k"], a["aggression"]["n"]) == (2, 2)
    assert a["aggression"]["lo"] < 1.0 == a["aggression"]["share"]  # an interval, not a point
    b = pooled["by_model"]["openai:b"]
    assert (b["aggression"]["k"], b["aggression"]["n"]) == (0, 2)
    assert (pooled["matched"]["k"], pooled["matched"]["n"]) == (2, 2)


def test_eval_diplomacy_and_an_experiment_report_them(tmp_path, monkeypatch):
    """A real scripted game to 1902: the eval prints and writes both analyses; an experiment
    keeps them among its measures and in its report."""
    from wargraph.cli import app
    from wargraph.evals.experiment import load_experiment, run_experiment

    monkeypatch.chdir(tmp_path)
    exp = load_experiment(
        {
            "name": "dip",
            "scenario": "diplomacy",
            "set": {"diplomacy.max_year": 1902},
            "runs": 1,
            "model": "scripted",
            "workers": "threads",
        }
    )
    res = run_experiment(exp, tmp_path / "exp", show_progress=False)
    (outcome,) = res.outcomes
    measures = outcome["measures"]
    powers = ("AUSTRIA", "ENGLAND", "FRANCE", "GERMANY", "ITALY", "RUSSIA", "TURKEY")
    assert all(f"aggression.{p}" in measures for p in powers)
    assert all(f"overestimated.{p}" in measures for p in powers)
    assert 0 <= measures["reciprocity.share_matched"] <= 1
    report = res.report.read_text()
    assert "aggression.FRANCE" in report and "reciprocity.share_matched" in report

    record = tmp_path / "exp" / outcome["folder"]
    out = CliRunner().invoke(app, ["eval", "diplomacy", str(record), "--out", "ev"])
    assert out.exit_code == 0, out.output
    assert "relationship reciprocity:" in out.output and "aggression (share" in out.output
    summary = json.loads((tmp_path / "ev" / "diplomacy_eval.json").read_text())
    (game,) = summary["games"]
    assert game["reciprocity"]["pairs"] > 0
    # the pooled figure is the game's own when there is one game
    assert summary["per_model"]["matched"]["k"] == game["reciprocity"]["matched"]
    md = (tmp_path / "ev" / "diplomacy_eval.md").read_text()
    assert "## Reciprocity and aggression per model" in md
    assert "Aggression: share of a power's orders" in md
    page = (tmp_path / "ev" / "diplomacy_eval.html").read_text()
    assert "Reciprocity and aggression per model" in page
    header = (tmp_path / "ev" / "diplomacy_eval.csv").read_text().splitlines()[0]
    assert "aggression" in header and "overestimated" in header
