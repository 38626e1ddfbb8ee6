"""The three shipped scenarios: they load, carry the ground truth, and anonymise cleanly."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import pytest

from wargraph.graphs.waragent.rules import PROFILE_SECTIONS, Anonymiser, scale_phrase
from wargraph.kernel.scenario import ScenarioError, load_scenario

NAMES = ["wwi", "wwii", "warring_states"]

# Words that would give a country away after anonymisation (demonyms, name fragments, titles).
LEAKS = {
    "wwi": [
        "Brit",
        "French",
        "German",
        "Austria",
        "Hungar",
        "Russia",
        "Serb",
        "Belg",
        "Ital",
        "America",
        "Ottoman",
        "Turk",
        "Kaiser",
        "Tsar",
        "Slav",
        "Balkan",
        "1914",
    ],
    "wwii": [
        "Brit",
        "French",
        "German",
        "Japan",
        "Ital",
        "Hungar",
        "America",
        "Soviet",
        "Russia",
        "Chin",
        "Polish",
        "Pol",
        "Danzig",
        "Nazi",
        "Hitler",
        "Stalin",
        "1939",
    ],
    "warring_states": [
        "Qin",
        "Chu",
        "Yan",
        "Han",
        "Zhao",
        "Wei",
        "Qi",
        "Zhou",
        "Yangtze",
        "318 BC",
    ],
}


@pytest.fixture(scope="module", params=NAMES)
def scenario(request):
    return request.param, load_scenario(request.param)


def test_loads_with_six_short_sections(scenario):
    name, s = scenario
    assert s.family == "waragent" and len(s.countries) >= 7
    for country, role in s.players.items():
        assert list(role.profile) == list(PROFILE_SECTIONS), country
        for section, text in role.profile.items():
            sentences = [x for x in re.split(r"(?<=[.!?])\s+", text.strip()) if x]
            assert 1 <= len(sentences) <= 3, f"{name}.{country}.{section}: {len(sentences)}"


def test_triggers_and_alternatives(scenario):
    _, s = scenario
    assert s.waragent.trigger == "historical"
    assert {"historical", "none", "naval_incident", "strait_clash"} <= set(s.waragent.triggers)
    assert s.waragent.triggers["none"] == "Nothing special happened today."


def test_ground_truth_corrections_of_issue_14():
    wwi = load_scenario("wwi").waragent
    truth = wwi.ground_truth
    # Directed as declared: the German Empire on Russia (1 August), never the reverse.
    assert ("German Empire", "Russia") in truth.wars
    assert ("Russia", "German Empire") not in truth.wars
    assert ("Britain", "German Empire") in truth.wars  # 4 August, once missing
    assert {"Belgium", "Italy"} <= set(load_scenario("wwi").players)
    # Treaties in force on 28 June 1914 open the game; Britain-France was no alliance.
    assert ("German Empire", "Austria-Hungary") in wwi.initial_alliances
    assert not any({"Britain", "France"} <= set(g) for g in truth.alliances)
    wwii = load_scenario("wwii").waragent
    # Germany-Japan was no alliance in 1939; Japan-China was an undeclared war in progress.
    assert not any({"Germany", "Japan"} <= set(g) for g in wwii.ground_truth.alliances)
    assert ("Japan", "China") in wwii.initial_wars
    assert ("Japan", "China") not in (wwii.ground_truth.wars or [])
    assert "Poland" in load_scenario("wwii").players
    assert ("Soviet Union", "Poland") in (wwii.ground_truth.wars or [])
    ws = load_scenario("warring_states").waragent.ground_truth
    assert "Han" in ws.alliances[0] and set(ws.uncertain) == {"Chu", "Qi"}


NUMBERS = {4: "four", 6: "six"}


@pytest.mark.parametrize("name", NAMES)
def test_window_stated_and_every_entry_dated(name):
    s = load_scenario(name)
    # The window names the rounds the file plays.
    assert f"{NUMBERS[s.rounds]} rounds of {s.timestep}" in s.waragent.ground_truth.window
    # Every entry of the ground truth and of the initial state carries a dated comment.
    lines = (files("wargraph.scenarios.waragent") / f"{name}.yaml").read_text("utf-8").splitlines()
    section, dated = None, 0
    for line in lines:
        key = re.match(r"^ {2,4}(\w+):", line)
        if key:
            section = key.group(1)
        entry = line.lstrip().startswith("- ") or re.match(r"^ {4}mobilized: \[", line)
        if entry and section in ENTRY_SECTIONS:
            assert re.search(r"#.*(\d{4}|\d{3} BC)", line), f"{name}: undated entry {line!r}"
            dated += 1
    assert dated >= 5


ENTRY_SECTIONS = {
    "alliances",
    "wars",
    "mobilized",
    "initial_alliances",
    "initial_treaties",
    "initial_wars",
    "initial_mobilized",
}


def _texts(s) -> str:
    data = s.model_dump(mode="json")
    data["waragent"].pop("anonymisation")
    return json.dumps(data, ensure_ascii=False)


def test_anonymisation_round_trip(scenario):
    name, s = scenario
    anon = Anonymiser(s.waragent.anonymisation)
    data = s.model_dump(mode="json")
    data["waragent"].pop("anonymisation")
    there = anon.translate(data)
    assert there != data
    assert anon.translate(there, backwards=True) == data


def test_anonymised_scenario_leaks_no_names(scenario):
    name, s = scenario
    a = s.anonymised()
    text = _texts(a)
    for word in LEAKS[name]:
        assert not re.search(rf"\b{re.escape(word)}", text), f"{name}: {word!r} leaks"
    assert a.countries == [s.waragent.anonymisation[c] for c in s.countries]
    assert set(a.waragent.great_powers) <= set(a.countries)
    # ...and the anonymised scenario is itself valid and translates back to the original.
    back = Anonymiser(a.waragent.anonymisation)
    assert [back.real(c) for c in a.countries] == s.countries


def test_anonymiser_whole_words_and_longest_first():
    anon = Anonymiser(
        {
            "Germany": "Country A",
            "German Empire": "Country B",
            "Hungary": "Country C",
            "Austria-Hungary": "Country D",
        }
    )
    assert anon.forward("German Empire and Germany; Austria-Hungary, Hungary.") == (
        "Country B and Country A; Country D, Country C."
    )
    assert anon.forward("Germanys Hungarya") == "Germanys Hungarya"
    text = "Germany's army met Austria-Hungary's."
    assert anon.back(anon.forward(text)) == text


def test_anonymiser_rejects_ambiguous_mappings():
    with pytest.raises(ValueError, match="one-to-one"):
        Anonymiser({"A": "X", "B": "X"})
    with pytest.raises(ValueError, match="both a real and a neutral"):
        Anonymiser({"A": "B", "B": "C"})


# --- variants through --set and clear errors -------------------------------------------------


def test_set_trigger_and_military_scale():
    s = load_scenario(
        "wwi", ["waragent.trigger=naval_incident", "waragent.military_scale.Russia=3"]
    )
    assert "North Sea" in s.waragent.trigger_text
    assert s.waragent.military_scale == {"Russia": 3}
    assert scale_phrase(3) == "In this variant its forces are three times their historical size."
    assert "a third of" in scale_phrase(1 / 3)
    assert "1.5 times" in scale_phrase(1.5)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "waragent.trigger=earthquake",
            "waragent: trigger 'earthquake' is not one of the triggers",
        ),
        ("waragent.great_powers=[Prussia]", "unknown country name(s) ['Prussia']"),
        ("waragent.military_scale.Narnia=2", "unknown country name(s) ['Narnia']"),
        ("waragent.military_scale.Russia=0", "must be > 0"),
        ("waragent.visibility.declare_peace=public", "unknown action(s) ['declare_peace']"),
        (
            "players.Serbia.profile.public_morale=",
            "players.Serbia.profile: missing section(s) ['public_morale']",
        ),
        ("waragent.setting=reckless", "waragent.setting"),
        ("waragent.initial_wars=[[Serbia, Serbia]]", "two different countries"),
        ("waragent.initial_mobilized=[Narnia]", "unknown country name(s) ['Narnia']"),
        ("waragent.ground_truth.uncertain=[Narnia]", "unknown country name(s) ['Narnia']"),
        ("waragent.secretary.max_revisions=-1", "waragent.secretary.max_revisions"),
    ],
)
def test_bad_values_name_the_field(override, expected):
    with pytest.raises(ScenarioError) as err:
        load_scenario("wwi", [override])
    assert expected in str(err.value)
    assert "wwi.yaml" in str(err.value)
