"""`wargraph prepare` writes what the description asks or says it could not (issue 41): the
control's answer is checked against the description's own words (its key words appear, the
prompt's instructions are not echoed), asked again once, and otherwise the documented fallback
is written and the command says why and what it kept. A tabletop's seats and cards are the
written ones, not the shipped bank's. The answers come from the scripted decider, told what to
say (`ask["scripted"]`)."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

import wargraph.runs.posthoc as posthoc
from wargraph.cli import app
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.prepare import generic_drill, prepare
from wargraph.runs.prepare_check import answer_problems, key_words

REQUEST = "A tabletop exercise on a ransomware attack at a hospital"
ECHO = {  # what the embedded model wrote on main: the prompt's instruction, back
    "title": "A table with three to six words",
    "setting": "A table with three to six words, two sentences.",
    "players": [
        {"name": "Player one", "persona": "A player.", "goal": "Win."},
        {"name": "Player two", "persona": "A player.", "goal": "Win."},
    ],
    "injects": ["Something happens."],
}
SEEN = {  # what the embedded model wrote for REQUEST on a loaded machine: the form, not a drill
    "title": "The Incident",
    "setting": (
        "A hospital emergency scenario with three key players, a short persona, and a goal of "
        "preventing ransomware attacks."
    ),
    "players": [
        {"name": "Name", "persona": "Vinnie Colosanto,", "goal": "Prevent ransomware."},
        {"name": "Name", "persona": "Eran Azmouni", "goal": "A prevention program."},
    ],
    "injects": ["The Incident (2013)", "Vinnie Colosanto"],
}
SEEN_TOO = {  # and with the prompt that asks for names of the world: a fragment, an echo
    "title": "The Incident",
    "setting": "A hospital emergency response scenario",
    "players": [
        {
            "name": "Ransomware attack",
            "persona": "One of the key players is a hospital emergency response team leader.",
            "goal": "The Incident",
        },
        {"name": "Her Majesty's Secret Service", "persona": "", "goal": "Win."},
    ],
    "injects": [],
}
GOOD = {
    "title": "Ransomware at St Anne's Hospital",
    "setting": (
        "At 2 a.m. ransomware encrypts the patient records of St Anne's Hospital. Surgeries "
        "are delayed and the emergency ward works on paper."
    ),
    "players": [
        {"name": "IT director", "persona": "Runs the hospital's systems.", "goal": "Restore."},
        {"name": "Chief nurse", "persona": "Keeps the wards safe.", "goal": "Protect patients."},
        {"name": "Hospital CEO", "persona": "Decides and speaks.", "goal": "Keep trust."},
    ],
    "injects": [
        "The attackers demand 40 bitcoin within 48 hours.",
        "A local newspaper reports that ambulances are being diverted.",
        "The backups from last week are found encrypted as well.",
    ],
}


@pytest.fixture
def answers(monkeypatch):
    """The control's answers, in order (the last one repeats), through the scripted decider."""
    given: list[dict] = []
    asked: list[int] = []
    real = posthoc.decide_once

    def scripted(ask, model, seed=0, **kw):
        asked.append(seed)
        ask = {**ask, "scripted": given[min(len(asked), len(given)) - 1]}
        return real(ask, "scripted", seed, **kw)

    monkeypatch.setattr(posthoc, "decide_once", scripted)
    return given, asked


def test_key_words_leave_out_filler_and_the_kind_of_game():
    assert key_words(REQUEST) == ["ransomware", "attack", "hospital"]


def test_an_echoed_instruction_is_refused_and_a_real_setting_passes():
    why = answer_problems(REQUEST, ECHO["title"], ECHO["setting"])
    assert any("repeats the prompt's instructions" in w and "three to six" in w for w in why)
    assert any("hospital" in w and "ransomware" in w for w in why)
    assert answer_problems(REQUEST, GOOD["title"], GOOD["setting"]) == []
    # other forms of a word count: islands for island, fishing for fish
    assert (
        answer_problems(
            "A dispute over fishing rights between two island states",
            "The Reef Quarrel",
            "Two islands quarrel over where their boats may fish. The reef between them is dying, "
            "and each blames the other's trawlers.",
        )
        == []
    )


def test_an_answer_that_fills_in_the_form_is_refused(answers):
    given, _ = answers
    given.append(SEEN)
    done = prepare(REQUEST, model="embedded")
    assert done.source == "fallback"
    why = done.problems[0]
    assert "'key players'" in why or "'persona'" in why  # the prompt's words, repeated
    assert "no names of their own (name, name_2)" in why


def test_a_tabletop_gets_the_written_seats_and_cards(answers):
    given, asked = answers
    given.append(GOOD)
    done = prepare(REQUEST, model="embedded")
    assert (done.source, done.problems, done.kept) == ("scripted", [], [])
    assert done.choice.family == "tabletop" and len(asked) == 1
    data = done.data
    assert set(data["players"]) == {"it_director", "chief_nurse", "hospital_ceo"}
    assert "teams" not in data  # the bank's team named the bank's seats
    table = data["tabletop"]
    assert [c["text"] for c in table["incidents"]] == [GOOD["injects"][0]]
    assert [c["text"] for c in table["injects"]] == GOOD["injects"][1:]
    dumped = yaml.safe_dump(data)
    for bank in ("Northwind", "bank", "chatbot", "data_scientist"):
        assert bank not in dumped
    data.pop("__template__")
    sc = load_scenario(data)
    assert sc.family == "tabletop" and sc.setting.startswith("At 2 a.m.")


def test_a_fragment_of_a_setting_and_an_echoing_persona_are_refused(answers):
    given, _ = answers
    given.append(SEEN_TOO)
    done = prepare(REQUEST, model="embedded")
    assert done.source == "fallback"
    why = done.problems[0]
    assert "'key players'" in why  # in a persona: the prompt's words
    assert "its setting is a fragment (5 words)" in why
    assert "without a persona (her_majesty_s_secret_service)" in why


def test_injects_that_are_no_events_give_a_generic_deck_said(answers):
    given, asked = answers
    given.append({**GOOD, "injects": ["The Incident (2013)", "Vinnie Colosanto"]})
    done = prepare(REQUEST, model="embedded")
    assert done.source == "scripted" and len(asked) == 1  # the setting and seats are used
    assert set(done.data["players"]) == {"it_director", "chief_nurse", "hospital_ceo"}
    table = done.data["tabletop"]
    assert [c["text"] for c in table["incidents"]] == [GOOD["setting"]]
    deck = [card["text"] for card in generic_drill()["tabletop"]["injects"]]
    assert [c["text"] for c in table["injects"]] == deck and len(deck) == 4
    assert "Northwind" not in yaml.safe_dump(done.data)
    (said,) = done.kept
    assert said.startswith("a generic inject deck") and "'Vinnie Colosanto'" in said


def test_an_echo_is_asked_again_with_the_next_seed(answers):
    given, asked = answers
    given += [ECHO, GOOD]
    done = prepare(REQUEST, model="embedded", seed=5)
    assert done.source == "scripted" and asked == [5, 6]
    assert len(done.problems) == 1 and "three to six" in done.problems[0]
    assert done.data["title"] == GOOD["title"]


def test_two_unusable_answers_give_the_fallback_and_say_what_was_kept(answers):
    given, _ = answers
    given.append(ECHO)
    done = prepare(REQUEST, model="embedded")
    assert done.source == "fallback" and len(done.problems) == 2
    assert done.data["setting"] == REQUEST
    # not the bank's seats and cards: a generic drill on the description, said
    assert set(done.data["players"]) == set(generic_drill()["players"]) and "teams" not in done.data
    assert [c["text"] for c in done.data["tabletop"]["incidents"]] == [REQUEST]
    assert "Northwind" not in yaml.safe_dump(done.data)
    (said,) = done.kept
    assert said.startswith("generic responder seats (incident_commander, technical_lead")


def test_the_command_says_it_could_not_and_what_it_kept(answers, tmp_path):
    given, _ = answers
    given.append(ECHO)
    out = tmp_path / "drill.yaml"
    r = CliRunner().invoke(app, ["prepare", REQUEST, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "could not prepare what was asked" in r.stderr
    assert "three to six" in r.stderr  # why the answer was refused
    assert "not written from the description: generic responder seats" in r.stderr
    assert load_scenario(str(out)).setting.strip() == REQUEST


def test_the_command_is_quiet_when_the_answer_fits(answers, tmp_path):
    given, _ = answers
    given.append(GOOD)
    out = tmp_path / "drill.yaml"
    r = CliRunner().invoke(app, ["prepare", REQUEST, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "could not" not in r.output and "not written" not in r.output
    assert "Northwind" not in out.read_text()


def test_a_crisis_answer_is_checked_too(answers):
    given, _ = answers
    given.append(ECHO)
    done = prepare("A dispute over fishing rights between two island states", model="embedded")
    assert done.choice.family == "crisis" and done.source == "fallback"
    assert any("side_a" in k for k in done.kept)
