"""The three shipped scenarios: they load, carry the ground truth, and anonymise cleanly."""

from __future__ import annotations

import json
import re

import pytest

from wargraph.scenario import ScenarioError, load_scenario
from wargraph.worlds.waragent import PROFILE_SECTIONS, Anonymiser, scale_phrase

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
        "323 BC",
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


def test_ground_truth_as_in_the_issue():
    wwi = load_scenario("wwi").waragent.ground_truth
    assert ["Russia", "France"] in wwi.alliances and len(wwi.alliances) == 5
    assert ("German Empire", "Serbia") in wwi.wars and len(wwi.wars) == 5
    assert "United States" not in wwi.mobilized and len(wwi.mobilized) == 7
    wwii = load_scenario("wwii").waragent.ground_truth
    assert sorted(map(sorted, wwii.alliances)) == [
        ["Britain", "France"],
        ["Germany", "Italy"],
        ["Germany", "Japan"],
    ]
    assert set(wwii.wars) == {("Britain", "Germany"), ("France", "Germany"), ("Japan", "China")}
    assert set(wwii.mobilized) == {"Britain", "Germany", "France", "Japan", "China", "Soviet Union"}
    ws = load_scenario("warring_states").waragent.ground_truth
    assert ws.wars is None
    assert sorted(ws.alliances[0]) == sorted(["Yan", "Zhao", "Chu", "Wei", "Qi"])
    assert len(ws.mobilized) == 7


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
        ("waragent.secretary.max_revisions=-1", "waragent.secretary.max_revisions"),
    ],
)
def test_bad_values_name_the_field(override, expected):
    with pytest.raises(ScenarioError) as err:
        load_scenario("wwi", [override])
    assert expected in str(err.value)
    assert "wwi.yaml" in str(err.value)
