"""Scores against hand-computed examples, record loading and the figures."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from wargraph.evals.waragent import (
    alliance_scores,
    blocs,
    eval_waragent,
    format_report,
    jaccard,
    score_board,
    summarise,
)
from wargraph.graphs.waragent.rules import (
    DEFAULT_VISIBILITY,
    Action,
    GroundTruth,
    apply_round,
    empty_board,
    new_world,
)
from wargraph.runs.records import RecordError


def test_blocs_are_connected_components():
    # A-B and B-C link A, B, C into one bloc, D stays alone; labels in order of appearance.
    assert blocs(["A", "B", "C", "D"], [["A", "B"], ["B", "C"]]) == [0, 0, 0, 1]
    assert blocs(["A", "B", "C", "D"], [["C", "D"]]) == [0, 1, 2, 2]
    assert blocs(["A", "B", "C"], [["A", "B", "C"]]) == [0, 0, 0]
    assert blocs(["A", "B"], []) == [0, 1]


def test_alliance_nmi_hand_computed():
    # Truth {A,B}{C,D}; prediction {A,B}{C}{D}. H(U) = ln 2, H(V) = 1.5 ln 2 and the
    # prediction refines the truth, so MI = ln 2: NMI = ln2 / ((ln2 + 1.5 ln2) / 2) = 0.8.
    truth = GroundTruth(alliances=[["A", "B"], ["C", "D"]])
    s = alliance_scores(["A", "B", "C", "D"], [("A", "B")], truth)
    assert s["alliance_nmi"] == pytest.approx(0.8)
    assert s["alliance_ami"] < s["alliance_nmi"]  # chance-corrected is stricter


def test_alliance_perfect_and_trivial():
    truth = GroundTruth(alliances=[["A", "B"], ["C", "D"]])
    perfect = alliance_scores(list("ABCDE"), [("B", "A"), ("D", "C")], truth)
    assert perfect == {"alliance_ami": 1.0, "alliance_nmi": 1.0}
    # Nobody allied: AMI says "no agreement beyond chance" while NMI still looks good —
    # the reason AMI is the headline.
    nothing = alliance_scores(list("ABCDE"), [], truth)
    assert nothing["alliance_ami"] == 0.0
    assert nothing["alliance_nmi"] > 0.5


def test_jaccard_hand_computed():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == pytest.approx(2 / 4)
    assert jaccard([], []) == 1.0
    assert jaccard({1}, set()) == 0.0
    # Directed: (A,B) and (B,A) are different declarations.
    assert jaccard({("A", "B")}, {("B", "A")}) == 0.0


def _wwi_truth() -> tuple[list[str], GroundTruth, list[str]]:
    countries = ["Britain", "France", "Germany", "AH", "Russia", "Serbia", "US", "Ottoman"]
    truth = GroundTruth(
        alliances=[
            ["Britain", "France"],
            ["Russia", "Serbia"],
            ["AH", "Germany"],
            ["Russia", "France"],
            ["Ottoman", "Germany"],
        ],
        wars=[
            ("AH", "Serbia"),
            ("Russia", "AH"),
            ("Germany", "Serbia"),
            ("Russia", "Germany"),
            ("France", "Germany"),
        ],
        mobilized=[c for c in countries if c != "US"],
    )
    return countries, truth, ["Britain", "France", "Germany", "AH", "Russia"]


def test_score_board_hand_computed():
    countries, truth, great = _wwi_truth()
    b = empty_board(countries)
    for a, c in [
        ("Britain", "France"),
        ("France", "Russia"),
        ("Russia", "Serbia"),
        ("AH", "Germany"),
        ("Germany", "Ottoman"),
    ]:
        b.add(a, c, "alliance")
    for a, c in [("AH", "Serbia"), ("Serbia", "AH")]:
        b.add(a, c, "war")
        b.declarations.append((a, c))
    for c in ["Britain", "Germany", "AH"]:
        b.mobilize(c)
    s = score_board(b, truth, great)
    assert s["alliance_ami"] == 1.0 and s["alliance_nmi"] == 1.0
    assert s["war_jaccard"] == pytest.approx(1 / 6)  # 1 shared of 6 distinct declarations
    assert s["mobilization_jaccard"] == pytest.approx(3 / 7)
    assert s["global_war"] is False  # Britain, France, Germany, Russia not at war


def test_alliance_under_war_does_not_count():
    countries, truth, great = _wwi_truth()
    b = empty_board(countries)
    b.add("Britain", "France", "alliance")
    with_alliance = score_board(b, truth, great)["alliance_ami"]
    b.add("Britain", "France", "war")  # war shows over the alliance
    assert score_board(b, truth, great)["alliance_ami"] < with_alliance
    assert score_board(b, truth, great)["alliance_ami"] == 0.0


def test_global_war_needs_every_great_power():
    countries, truth, great = _wwi_truth()
    b = empty_board(countries)
    for a, c in [("Britain", "Germany"), ("France", "AH"), ("Russia", "Serbia")]:
        b.add(a, c, "war")
    assert score_board(b, truth, great)["global_war"] is True
    b.remove("Russia", "Serbia", "war")
    assert score_board(b, truth, great)["global_war"] is False


def test_no_war_score_when_truth_has_none():
    truth = GroundTruth(alliances=[["A", "B"]], wars=None, mobilized=["A"])
    s = score_board(empty_board(["A", "B", "C"]), truth, [])
    assert s["war_jaccard"] is None and s["global_war"] is False


def test_summary_mean_and_sample_std():
    runs = [
        {
            "alliance_ami": 0.2,
            "alliance_nmi": 0.5,
            "war_jaccard": None,
            "mobilization_jaccard": 1.0,
            "global_war": True,
        },
        {
            "alliance_ami": 0.6,
            "alliance_nmi": 0.7,
            "war_jaccard": None,
            "mobilization_jaccard": 0.0,
            "global_war": False,
        },
    ]
    s = summarise(runs)
    assert s["alliance_ami"]["mean"] == pytest.approx(0.4)
    assert s["alliance_ami"]["std"] == pytest.approx(math.sqrt(0.08))  # sample std of 0.2, 0.6
    assert s["global_war"]["mean"] == 0.5
    assert "war_jaccard" not in s


# --- records and figures -----------------------------------------------------------------------

SECTION = {
    "triggers": {"historical": "x"},
    "great_powers": ["A", "B"],
    "ground_truth": {"alliances": [["A", "B"]], "wars": [["A", "C"]], "mobilized": ["A", "C"]},
}


def _record(tmp: Path, name: str, rounds: list[dict[str, list[Action]]], section=None) -> Path:
    w = new_world(["A", "B", "C"])
    for r in rounds:
        w = apply_round(w, r, DEFAULT_VISIBILITY)
    folder = tmp / name
    folder.mkdir()
    record = {
        "scenario": {"family": "waragent", "waragent": section or SECTION},
        "world": w.model_dump(mode="json"),
    }
    (folder / "record.json").write_text(json.dumps(record))
    return folder / "record.json"


def _a(t: str, target: str = "none") -> Action:
    return Action(type=t, target=target)


def test_eval_waragent_scores_runs_and_draws(tmp_path):
    good = _record(
        tmp_path,
        "good",
        [
            {"A": [_a("request_alliance", "B"), _a("general_mobilization")]},
            {"B": [_a("accept_alliance", "A")], "C": [_a("general_mobilization")]},
            {"A": [_a("declare_war", "C")]},
        ],
    )
    idle = _record(tmp_path, "idle", [{"A": [_a("wait")]}])
    out = tmp_path / "out"
    result = eval_waragent([good, idle.parent], out)
    by_run = {r["run"]: r for r in result["runs"]}
    assert by_run["good"]["alliance_ami"] == 1.0
    assert by_run["good"]["war_jaccard"] == 1.0
    assert by_run["good"]["mobilization_jaccard"] == 1.0
    assert by_run["idle"]["alliance_ami"] == 0.0
    assert by_run["idle"]["war_jaccard"] == 0.0
    assert result["summary"]["war_jaccard"]["mean"] == 0.5
    assert result["headline"] == "alliance_ami"
    for f in result["figures"]:
        assert Path(f).stat().st_size > 5000  # a real PNG, not an empty file
    assert json.loads((out / "scores.json").read_text())["runs"][0]["run"] == "good"
    assert "mean ± std" in format_report(result)


def test_eval_translates_anonymised_records_back(tmp_path):
    mapping = {"A": "Country X", "B": "Country Y", "C": "Country Z"}
    anon_section = {
        "triggers": {"historical": "x"},
        "great_powers": ["Country X", "Country Y"],
        "ground_truth": {
            "alliances": [["Country X", "Country Y"]],
            "wars": [["Country X", "Country Z"]],
            "mobilized": [],
        },
        "anonymise": True,
        "anonymisation": mapping,
    }
    w = new_world(["Country X", "Country Y", "Country Z"])
    w = apply_round(w, {"Country X": [_a("declare_war", "Country Z")]}, DEFAULT_VISIBILITY)
    (tmp_path / "r").mkdir()
    rec = tmp_path / "r" / "record.json"
    rec.write_text(
        json.dumps(
            {
                "scenario": {"family": "waragent", "waragent": anon_section},
                "world": w.model_dump(mode="json"),
            }
        )
    )
    from wargraph.evals.waragent import load_run

    run = load_run(rec)
    assert run["world"].countries == ["A", "B", "C"]
    assert run["world"].true.declarations == [("A", "C")]
    assert run["config"].ground_truth.wars == [("A", "C")]
    assert eval_waragent([rec], tmp_path / "o")["runs"][0]["war_jaccard"] == 1.0


def test_eval_rejects_other_records(tmp_path):
    bad = tmp_path / "record.json"
    bad.write_text(json.dumps({"scenario": {"family": "crisis"}}))
    with pytest.raises(ValueError, match="a record of a 'crisis' game") as err:
        eval_waragent([bad], tmp_path / "o")
    assert "scores only waragent games" in str(err.value) and str(bad) in str(err.value)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        eval_waragent([broken], tmp_path / "o")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"scenario": {"family": "diplomacy", "title": "Europe"}}, "use `wargraph eval diplomacy`"),
        ([1, 2], "not a wargraph game record"),
        ({"scenario": {"family": "waragent", "waragent": SECTION}}, "has no waragent world"),
        (
            {
                "scenario": {"family": "waragent", "waragent": {"triggers": {}}},
                "world": new_world(["A", "B"]).model_dump(mode="json"),
            },
            "damaged waragent record (triggers",
        ),
    ],
)
def test_eval_names_what_is_wrong_with_a_record(tmp_path, content, expected):
    bad = tmp_path / "record.json"
    bad.write_text(json.dumps(content))
    with pytest.raises(RecordError, match=re.escape(expected)):
        eval_waragent([bad], tmp_path / "o")
    assert not (tmp_path / "o" / "scores.json").exists()


def test_eval_refuses_to_average_different_scenarios(tmp_path):
    one = _record(tmp_path, "one", [{"A": [_a("wait")]}])
    same = _record(tmp_path, "same", [{"A": [_a("general_mobilization")]}])
    other_truth = {**SECTION, "ground_truth": {"alliances": [], "wars": [], "mobilized": []}}
    other = _record(tmp_path, "other", [{"A": [_a("wait")]}], section=other_truth)
    # Two runs of one scenario average; a run scored against another history does not.
    assert eval_waragent([one, same], tmp_path / "ok", echo=False)["summary"]
    with pytest.raises(RecordError, match="cannot average runs of different scenarios") as err:
        eval_waragent([one, same, other], tmp_path / "mixed", echo=False)
    assert str(other) in str(err.value) and str(one) in str(err.value)
    assert not (tmp_path / "mixed" / "scores.json").exists()


def test_eval_refuses_two_shipped_scenarios_together(tmp_path):
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    paths = []
    for name in ("wwi", "wwii"):
        play(
            name,
            overrides=["rounds=1"],
            context=GameContext(model="scripted"),
            db=None,
            out_dir=tmp_path / name,
        )
        paths.append(tmp_path / name)
    with pytest.raises(RecordError, match="The July Crisis, 1914.*The Crisis of 1939"):
        eval_waragent(paths, tmp_path / "o", echo=False)


def test_initial_state_and_uncertain_countries_are_not_scored():
    # Opening board: A-B allied, A mobilized (history had settled them before the window).
    opening = empty_board(["A", "B", "C", "D"])
    opening.add("A", "B", "alliance")
    opening.mobilize("A")
    truth = GroundTruth(
        alliances=[["A", "B"], ["C", "D"]],
        wars=[("C", "A")],
        mobilized=["C"],
        uncertain=["D"],
    )
    final = opening.model_copy(deep=True)
    final.mobilize("C")
    final.mobilize("D")  # D is uncertain: its mobilization neither helps nor hurts
    final.add("C", "A", "war")
    final.declarations.append(("C", "A"))
    final.add("D", "A", "war")
    final.declarations.append(("D", "A"))  # nor does its declaration
    s = score_board(final, truth, ["A", "C"], opening)
    assert s["war_jaccard"] == 1.0
    assert s["mobilization_jaccard"] == 1.0  # A was mobilized at the start: not the run's
    assert s["alliance_ami"] == 1.0  # blocs over A, B, C: {A, B}, {C}
    assert s["initial_alliance_ami"] == 1.0  # ...which the opening board already had
    assert s["global_war"] is True and s["global_war_match"] == 1.0
    # Without the opening board, A's mobilization would count as the run's.
    assert score_board(final, truth, ["A", "C"])["mobilization_jaccard"] == 0.5
    # History says no general war when a great power stayed out of it.
    assert score_board(final, truth, ["A", "B"], opening)["global_war_match"] == 1.0
    assert score_board(final, truth, ["A", "D"], opening)["global_war_match"] is None
