"""Scenario files: loading, overrides, and one clear message per bad file naming file and field."""

from __future__ import annotations

import textwrap

import pytest

from wargraph.kernel.scenario import (
    ScenarioError,
    load_scenario,
    parse_overrides,
    shipped_scenarios,
)

GOOD = """
title: T
setting: S
players:
  a: {persona: dove, personas: {dove: "soft", hawk: "hard"}}
  b: {}
  c: {}
teams:
  t1: {members: [a, b], leader: c}
"""


def write(tmp_path, text, name="s.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_shipped_scenarios_all_load():
    shipped = shipped_scenarios()
    assert {"azuristan_crimsonia", "summit", "strait_standoff"} <= set(shipped)
    for name in ("azuristan_crimsonia", "summit", "strait_standoff"):
        assert load_scenario(name).title


def test_persona_override_selects_named_persona(tmp_path):
    sc = load_scenario(str(write(tmp_path, GOOD)), ["players.a.persona=hawk", "rounds=5"])
    assert sc.players["a"].persona_text == "hard"
    assert sc.rounds == 5
    # free text that is not a key is the persona itself
    sc = load_scenario(str(write(tmp_path, GOOD)), ["players.a.persona=a calm mediator"])
    assert sc.players["a"].persona_text == "a calm mediator"


def test_actors_and_groups(tmp_path):
    sc = load_scenario(str(write(tmp_path, GOOD)))
    assert sc.actors == ["t1"]
    assert sc.groups_of("a") == {"a", "t1"}
    assert sc.groups_of("c") == {"c", "t1"}  # the leader sees the team's channel


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("setting: S\n", "title", "Field required"),
        ("title: T\nsetting: S\nrounds: many\n", "rounds", "valid integer"),
        ("title: T\nsetting: S\nplayers: {a: {kind: robot}}\n", "players.a.kind", "'ai', 'human'"),
        (
            "title: T\nsetting: S\nplayers: {a: {}}\nteams: {t: {members: [a, ghost], leader: a}}\n",
            "teams.t.members",
            "unknown role or team 'ghost'",
        ),
        (
            "title: T\nsetting: S\nplayers: {a: {}}\n"
            "teams: {t: {members: [u], leader: a}, u: {members: [t], leader: a}}\n",
            "teams",
            "cycle",
        ),
        ("title: T\nsetting: S\nplayrs: {}\n", "playrs", "Extra inputs are not permitted"),
    ],
)
def test_bad_file_gives_one_clear_message(tmp_path, text, field, expected):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(path))
    msg = str(info.value)
    assert str(path) in msg
    assert field in msg
    assert expected in msg
    assert "Traceback" not in msg


def test_yaml_syntax_error_names_line(tmp_path):
    path = write(tmp_path, "title: T\nsetting: [unclosed\nplayers: {}\n")
    with pytest.raises(ScenarioError, match=r"s\.yaml:.*line \d+.*YAML syntax error"):
        load_scenario(str(path))


def test_unknown_name_lists_shipped():
    with pytest.raises(ScenarioError, match="azuristan_crimsonia"):
        load_scenario("no_such_scenario")


def test_bad_override_is_clear(tmp_path):
    path = write(tmp_path, GOOD + "injects: []\n")
    with pytest.raises(ScenarioError, match="expected KEY=VALUE"):
        parse_overrides(["players.a.persona"])
    with pytest.raises(ScenarioError, match="injects.5"):
        load_scenario(str(path), ["injects.5.text=x"])
    with pytest.raises(ScenarioError, match="players.a.kind"):
        load_scenario(str(path), ["players.a.kind=robot"])


def test_not_a_mapping(tmp_path):
    with pytest.raises(ScenarioError, match="expected a mapping"):
        load_scenario(str(write(tmp_path, "- just\n- a list\n")))


def test_a_key_given_twice_is_refused(tmp_path):
    path = write(tmp_path, "title: T\nsetting: S\ntitle: U\n")
    with pytest.raises(ScenarioError, match=r"line 3.*'title' is given twice"):
        load_scenario(str(path))
