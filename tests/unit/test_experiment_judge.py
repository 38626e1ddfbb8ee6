"""The judge: multiple-choice mapping with "undetermined", evidence quoted from the record,
the scripted judge on a real record, and the families' own measures."""

from __future__ import annotations

import pytest

from wargraph.evals.judge import (
    family_measures,
    find_quotes,
    flatten_numbers,
    judge_question,
    map_choice,
    options_of,
    record_lines,
    select_measures,
)
from wargraph.kernel.state import make_event
from wargraph.runs.runner import play

STATUS = ["part of Azuristan", "independent", "part of Crimsonia", "contested"]


@pytest.mark.parametrize(
    ("raw", "options", "expected"),
    [
        ("yes", ["yes", "no"], "yes"),
        ("Yes.", ["yes", "no"], "yes"),
        ("NO", ["yes", "no"], "no"),
        ("yes, fighting broke out at the border", ["yes", "no"], "yes"),
        ("No - talks held.", ["yes", "no"], "no"),
        ("true", ["yes", "no"], "yes"),
        ("False", ["yes", "no"], "no"),
        ("undetermined", ["yes", "no"], "undetermined"),
        ("Unclear", ["yes", "no"], "undetermined"),
        ("cannot be determined", ["yes", "no"], "undetermined"),
        ("maybe", ["yes", "no"], "undetermined"),
        ("", ["yes", "no"], "undetermined"),
        (None, ["yes", "no"], "undetermined"),
        ("part of azuristan", STATUS, "part of Azuristan"),
        ("Contested.", STATUS, "contested"),
        ("independent state", STATUS, "independent"),
        ("It joined Crimsonia", STATUS, "undetermined"),
        ("yes", STATUS, "undetermined"),  # yes is no option of this question
        ("part of", STATUS, "undetermined"),  # a prefix of two options decides nothing
    ],
)
def test_map_choice(raw, options, expected):
    assert map_choice(raw, options) == expected


def test_no_options_means_yes_no():
    assert options_of([]) == ["yes", "no"] and options_of(None) == ["yes", "no"]
    assert options_of(STATUS) == STATUS


def _record():
    return {
        "scenario": {"family": "crisis", "title": "t"},
        "round": 1,
        "events": [
            make_event(round=0, phase="setup", kind="setting", author="scenario", text="A border."),
            make_event(
                round=1,
                phase="adjudicate",
                kind="narration",
                author="control",
                text="Crimsonian tanks crossed the border at dawn.\nAzuristan's army fired on them.",
            ),
            make_event(
                round=1,
                phase="order",
                kind="plan",
                author="azuristan",
                text="Secretly prepare a ceasefire offer.",
                audience=["azuristan"],
            ),
        ],
    }


def test_record_lines_keep_where_each_line_comes_from():
    lines = record_lines(_record())
    assert [x["line"] for x in lines] == [
        "A border.",
        "Crimsonian tanks crossed the border at dawn.",
        "Azuristan's army fired on them.",
        "Secretly prepare a ceasefire offer.",
    ]
    assert lines[1]["author"] == "control" and lines[1]["round"] == 1 and lines[1]["public"]
    assert not lines[3]["public"]


def test_quotes_are_only_lines_of_the_record():
    rec = _record()
    exact = find_quotes('The record says: "crimsonian tanks crossed the border at dawn"', rec)
    assert [(q["line"], q["match"]) for q in exact] == [
        ("Crimsonian tanks crossed the border at dawn.", "exact")
    ]
    quoted = find_quotes("> Azuristan's army fired on them.", rec)
    assert quoted[0]["match"] == "exact" and quoted[0]["kind"] == "narration"
    close = find_quotes("Azuristan army fired upon them", rec)  # 4 of 5 words in one line
    assert [(q["line"], q["match"]) for q in close] == [
        ("Azuristan's army fired on them.", "close")
    ]
    assert find_quotes("Nuclear weapons were launched against the capital.", rec) == []
    assert find_quotes("", rec) == []
    assert find_quotes("short", rec) == []  # too short to be a quotation


def canned_judge(choice, evidence):
    """A canned judge reply (not a model): exercises the mapping of what a judge says."""

    def ask(record, question, *, options, model):
        assert options and model == "canned"
        return {"question": question, "choice": choice, "evidence": evidence, "source": "model"}

    return ask


def test_judgement_maps_the_answer_and_keeps_verified_evidence():
    rec = _record()
    j = judge_question(
        rec,
        qid="war",
        text="Did armed conflict occur?",
        model="canned",
        ask=canned_judge("Yes.", "Azuristan's army fired on them."),
    )
    assert j["answer"] == "yes" and j["raw"] == "Yes." and j["options"] == ["yes", "no"]
    assert j["verified"] and j["quotes"][0]["line"] == "Azuristan's army fired on them."
    invented = judge_question(
        rec,
        qid="war",
        text="Did armed conflict occur?",
        model="canned",
        ask=canned_judge("yes", "Missiles struck the capital overnight."),
        require_evidence=True,
    )
    assert invented["answer"] == "undetermined" and invented["raw"] == "yes"
    assert invented["quotes"] == [] and "no line of the record" in invented["note"]
    lenient = judge_question(
        rec,
        qid="war",
        text="Did armed conflict occur?",
        model="canned",
        ask=canned_judge("yes", "Missiles struck the capital overnight."),
    )
    assert lenient["answer"] == "yes" and not lenient["verified"]


def test_scripted_judge_on_a_real_record(tmp_path):
    """The scripted judge (the scripted decider through posthoc.ask_record) on a played game."""
    res = play(
        "azuristan_crimsonia",
        overrides={"rounds": 1, "questions": []},
        context=_scripted(),
        db=None,
        out_dir=tmp_path,
    )
    j1 = judge_question(res.record, qid="s", text="Final status?", options=STATUS, model="scripted")
    j2 = judge_question(res.record, qid="s", text="Final status?", options=STATUS, model="scripted")
    assert j1 == j2  # deterministic
    assert j1["source"] == "scripted"
    assert j1["answer"] in [*STATUS, "undetermined"] and j1["answer"] == map_choice(
        j1["raw"], STATUS
    )
    lines = {x["line"] for x in record_lines(res.record)}
    assert all(q["line"] in lines for q in j1["quotes"])


def _scripted():
    from wargraph.kernel.context import GameContext

    return GameContext(model="scripted", seed=1)


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_waragent_measures_come_from_its_scorer(tmp_path):
    import wargraph.evals.waragent as waragent

    res = play("wwi", overrides={"rounds": 2}, context=_scripted(), db=None, out_dir=tmp_path / "g")
    measures, note = family_measures(res.record, tmp_path / "g" / "record.json")
    assert note == ""
    expected = waragent.score_run(waragent.load_run(tmp_path / "g"))
    assert measures["alliance_ami"] == expected["alliance_ami"]
    assert measures["global_war"] is expected["global_war"]
    assert "run" not in measures  # names are not measures
    assert set(measures) >= {"alliance_nmi", "mobilization_jaccard", "rounds"}


def test_measures_failures_are_notes_not_crashes(tmp_path):
    broken = {"scenario": {"family": "waragent"}, "events": [], "world": {}}
    measures, note = family_measures(broken, tmp_path / "nowhere" / "record.json")
    assert measures == {} and note.startswith("waragent measures failed: RecordError")
    assert family_measures({"scenario": {"family": "crisis"}, "events": []}, tmp_path) == ({}, "")


def test_diplomacy_measures_of_the_opening_position():
    import wargraph.graphs.diplomacy.rules as world

    rec = {
        "scenario": {"family": "diplomacy", "diplomacy": {"max_year": 1905}},
        "events": [],
        "world": {"diplomacy": world.new_game()},
    }
    measures, note = family_measures(rec, "record.json")
    assert note == ""
    # nobody eliminated: max year (5) + supply centres; Russia starts with 4, France with 3
    assert measures["scores.FRANCE"] == 8.0 and measures["centres.FRANCE"] == 3
    assert measures["scores.RUSSIA"] == 9.0 and measures["orders.invalid_rate"] == 0.0
    assert not any(k.count(".") > 1 for k in measures)  # default: two levels of names
    picked, _ = family_measures(rec, "record.json", ["scores.FR*", "orders_by_power.FRANCE.*_rate"])
    assert set(picked) == {
        "scores.FRANCE",
        "orders_by_power.FRANCE.invalid_rate",
        "orders_by_power.FRANCE.hold_rate",
    }
    m, note = family_measures({**rec, "world": {}}, "record.json")
    assert m == {} and "diplomacy measures failed" in note and "world.diplomacy" in note


def test_flatten_and_select():
    nested = {
        "a": 1,
        "b": {"c": 2.5, "d": {"e": True}},
        "name": "x",
        "xs": [1, 2],
        "nan": float("nan"),
    }
    flat = flatten_numbers(nested)
    assert flat == {"a": 1, "b.c": 2.5, "b.d.e": True}
    assert select_measures(flat, None) == {"a": 1, "b.c": 2.5}
    assert select_measures(flat, ["b.*"]) == {"b.c": 2.5, "b.d.e": True}
    assert select_measures(flat, []) == {}
