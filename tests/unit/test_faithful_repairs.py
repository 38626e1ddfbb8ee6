"""The small profile's repairs leave alone what strong models write on purpose (issue 29): the
name fallback never touches a hyphenated national prefix, a word of another language, a
demonym or a word fused to punctuation; the echo check never counts quoted context (an earlier
summary) as instructions, so an unchanged summary is accepted."""

from __future__ import annotations

import pytest

from tests.unit.test_deciders import ask
from tests.unit.test_plain_text import decide
from wargraph.nodes.schemas import Diary, Plan
from wargraph.seats.deciders import instructions_of
from wargraph.seats.echoes import drop_restated
from wargraph.seats.names import correct_names

POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


@pytest.mark.parametrize(
    "text",
    [
        "An Italo-German pact is forming.",
        "The Austro-Hungarian army holds Galicia.",
        "Anglo-French talks, Franco-German distrust, a Russo-Turkish truce.",
        "Turco-Italian and Germano-Russian lines; Sino-Russian trade.",
        "Comme on dit, la Russie reste une énigme; Russland wartet.",
        "Every Englander knows the Channel; two Englanders agree.",
        "We watch France.Italyseek a partner, and Italyseek.France too.",
    ],
)
def test_strong_models_words_are_left_as_written(text):
    assert correct_names(text, POWERS) == (text, [])


def test_misspelt_names_are_still_corrected():
    fixed, found = correct_names("Azurland will talk to AZURLANDIAN envoys.", ["Azuristan"])
    assert fixed == "Azuristan will talk to AZURISTAN envoys."
    assert [f["written"] for f in found] == ["Azurland", "AZURLANDIAN"]


SUMMARY = (
    "Spring 1902: France and England agreed to keep the Channel empty. Germany asked for "
    "support into Belgium and we gave none."
)
DIGEST_QUESTION = (
    f"Your earlier digest:\n> {SUMMARY}\n\nDiary entries to digest:\nS1902M:\n> {SUMMARY}\n\n"
    "Write your digest of the years 1902: what was agreed and with whom, in a few sentences."
)


def test_an_unchanged_summary_is_not_an_echo_of_its_instructions():
    the_ask = ask(question=DIGEST_QUESTION, system="You are FRANCE.")
    asked = instructions_of(the_ask)
    assert SUMMARY not in asked and "Write your digest" in asked
    assert drop_restated(SUMMARY, asked) == (SUMMARY, [])
    # the instructions themselves still count
    assert drop_restated("Write your digest of the years 1902.", asked)[1]


def test_an_unchanged_summary_is_recorded_by_the_small_profile(tmp_path):
    the_ask = ask("diary", question=DIGEST_QUESTION, fallback={"summary": "FALLBACK"})
    out, trace, _ = decide(Diary, the_ask, SUMMARY, tmp_path=tmp_path)
    assert out == {"value": {"summary": SUMMARY}, "source": "model"}
    assert [e["event"] for e in trace] == ["call"]


def test_the_small_profile_records_hyphenated_prefixes_unchanged(tmp_path):
    names = {"sides": POWERS, "entities": []}
    text = "An Italo-German pact and the Austro-Hungarian flank; la Russie waits."
    out, trace, _ = decide(Plan, ask(names=names), text, tmp_path=tmp_path)
    assert out["value"] == {"plan": text} and "corrected" not in [e["event"] for e in trace]
