"""Experiment files: schema, grid expansion, game plans, flag overrides and clear errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from wargraph.evals.experiment import (
    ExperimentError,
    conditions_of,
    load_experiment,
    plan_games,
    shipped_experiments,
)
from wargraph.kernel.scenario import shipped_scenarios

BASE = {"scenario": "azuristan_crimsonia", "set": {"rounds": 1}, "model": "scripted"}


def exp_of(**fields):
    return load_experiment({**BASE, **fields})


def write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_grid_is_the_product_of_axes_in_file_order():
    exp = exp_of(
        grid={
            "azuristan": {"key": "players.azuristan.persona", "values": ["dove", "hawk"]},
            "temp": {
                "cold": {"context.temperature": 0.1},
                "warm": {"context.temperature": 1.0, "model": "embedded"},
                "mixed": {"role_models.control": "embedded", "prompt_variant": "v1"},
            },
        }
    )
    conds = conditions_of(exp)
    assert [c.label for c in conds] == [
        "dove+cold",
        "dove+warm",
        "dove+mixed",
        "hawk+cold",
        "hawk+warm",
        "hawk+mixed",
    ]
    by = {c.label: c for c in conds}
    assert by["hawk+cold"].levels == {"azuristan": "hawk", "temp": "cold"}
    # scenario overrides merge the base `set` with each level's keys
    assert by["hawk+cold"].overrides == {"rounds": 1, "players.azuristan.persona": "hawk"}
    assert by["dove+mixed"].overrides["prompt_variant"] == "v1"
    # reserved keys go to the run settings, not to the scenario
    assert by["hawk+cold"].context["temperature"] == 0.1
    assert by["dove+warm"].model == "embedded" and by["dove+cold"].model == "scripted"
    assert by["dove+mixed"].role_models == {"control": "embedded"}
    assert "model" not in by["dove+warm"].overrides


def test_explicit_conditions_scenario_level_and_default():
    exp = exp_of(
        conditions={"short": {"rounds": 1}, "long": {"rounds": 2, "scenario": "strait_standoff"}}
    )
    conds = conditions_of(exp)
    assert [(c.label, c.scenario, c.overrides["rounds"]) for c in conds] == [
        ("short", "azuristan_crimsonia", 1),
        ("long", "strait_standoff", 2),
    ]
    assert conds[0].levels == {"condition": "short"}
    (only,) = conditions_of(exp_of())
    assert only.label == "default" and only.overrides == {"rounds": 1}


def test_plans_seeds_thread_ids_and_fingerprints():
    exp = exp_of(
        runs=3,
        seed=10,
        grid={"p": {"key": "players.crimsonia.persona", "values": ["dove", "hawk"]}},
    )
    plans = plan_games(exp)
    assert [(p.run, p.condition.label, p.seed) for p in plans] == [
        (0, "dove", 10),
        (0, "hawk", 10),
        (1, "dove", 11),
        (1, "hawk", 11),
        (2, "dove", 12),
        (2, "hawk", 12),
    ]
    assert len({p.thread_id for p in plans}) == 6 and len({p.folder for p in plans}) == 6
    assert plans[0].thread_id.startswith("experiment.dove.000.")
    ctx = plans[3].game_context()
    assert ctx.seed == 11 and ctx.model == "scripted" and ctx.max_tokens == 200
    # the same file plans the same games; a changed condition plans new ones
    assert [p.thread_id for p in plan_games(exp)] == [p.thread_id for p in plans]
    changed = exp_of(
        runs=3,
        seed=10,
        grid={"p": {"key": "players.crimsonia.persona", "values": ["dove", "hawk"]}},
        context={"temperature": 0.2},
    )
    assert not {p.thread_id for p in plan_games(changed)} & {p.thread_id for p in plans}
    explicit = exp_of(runs=2, seeds=[7, 3])
    assert [p.seed for p in plan_games(explicit)] == [7, 3]


def test_flags_override_the_file(tmp_path):
    path = write(
        tmp_path,
        """
        scenario: azuristan_crimsonia
        set: {rounds: 1, players.control.model: embedded}
        runs: 20
        model: embedded
        role_models: {azuristan: embedded}
        judge: {model: embedded}
        grid:
          who:
            a: {role_models.crimsonia: embedded}
            b: {model: embedded}
        """,
    )
    exp = load_experiment(path, runs=2, model="scripted")
    assert exp.name == "exp" and exp.runs == 2
    assert exp.model == "scripted" and exp.judge_model == "scripted"
    for c in conditions_of(exp):
        assert c.model == "scripted"
        assert set(c.role_models.values()) <= {"scripted"}
        assert c.overrides.get("players.control.model") == "scripted"
    with pytest.raises(ExperimentError, match="--runs 0"):
        load_experiment(path, runs=0)
    with pytest.raises(ExperimentError, match="--model.*expected embedded"):
        load_experiment(path, model="gpt4")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"runs": 0}, r"runs: Input should be greater than or equal to 1"),
        ({"colour": "red"}, r"colour: Extra inputs are not permitted"),
        ({"runs": 3, "seeds": [1]}, r"seeds: 1 seeds for 3 runs"),
        ({"questions": [{"text": "a?"}, {"id": "q1", "text": "b?"}]}, r"ids must be distinct"),
        ({"questions": [{"text": "a?", "options": ["only"]}]}, r"at least two options"),
        ({"questions": [{"text": "a?", "options": ["x", "x"]}]}, r"distinct"),
        ({"questions": [{"id": "bad id", "text": "a?"}]}, r"questions.0.id"),
        ({"model": "gpt4"}, r"expected embedded, scripted"),
        ({"grid": {"p": {}}}, r"grid.p: an axis needs at least one level"),
        ({"concurrency": 0}, r"concurrency"),
    ],
)
def test_bad_files_get_clear_errors(fields, message):
    with pytest.raises(ExperimentError, match=message):
        exp_of(**fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"grid": {"p": {"a": "hawk"}}}, r"grid.p.a: a level is a mapping"),
        ({"grid": {"p": {"a": {"context.colour": 1}}}}, r"context.colour: unknown setting"),
        ({"grid": {"p": {"a": {"role_models": "x"}}}}, r"role_models: expected a mapping"),
        ({"set": {"rounds": 0}}, r"condition default: .*rounds: Input should be greater"),
        ({"scenario": "no_such_scenario"}, r"no_such_scenario: no shipped scenario"),
        ({"role_models": {"nobody": "scripted"}}, r"unknown seat\(s\) \['nobody'\]"),
        ({"set": {"players.crimsonia.kind": "human"}}, r"played by people"),
        (
            {"conditions": {"a": {}, "b": {}}, "compare": [["a", "c"]]},
            r"compare: unknown condition 'c'",
        ),
        ({"conditions": {"a b": {}, "a_b": {}}}, r"both named"),
    ],
)
def test_bad_conditions_fail_before_any_game(fields, message):
    with pytest.raises(ExperimentError, match=message):
        plan_games(exp_of(**fields))


def test_file_errors(tmp_path):
    with pytest.raises(ExperimentError, match="no such experiment file"):
        load_experiment(tmp_path / "missing.yaml")
    with pytest.raises(ExperimentError, match="no shipped experiment of that name"):
        load_experiment("nope")
    bad = write(tmp_path, "scenario: [unclosed\n", "bad.yaml")
    with pytest.raises(ExperimentError, match=r"bad.yaml: line 2.*YAML syntax error"):
        load_experiment(bad)
    listed = write(tmp_path, "- a\n- b\n", "list.yaml")
    with pytest.raises(ExperimentError, match="mapping of experiment fields"):
        load_experiment(listed)
    noscen = write(tmp_path, "runs: 2\n", "noscen.yaml")
    with pytest.raises(ExperimentError, match=r"noscen.yaml: scenario: Field required"):
        load_experiment(noscen)


def test_relative_scenario_is_found_next_to_the_experiment(tmp_path):
    scen = yaml.safe_load(shipped_scenarios()["azuristan_crimsonia"].read_text())
    scen["title"] = "Local copy"
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(scen))
    path = write(tmp_path, "scenario: local.yaml\nmodel: scripted\n")
    (plan,) = plan_games(load_experiment(path))
    assert plan.condition.scenario == str(tmp_path / "local.yaml")


def test_yes_no_options_survive_yaml(tmp_path):
    path = write(
        tmp_path,
        """
        scenario: azuristan_crimsonia
        questions:
          - {text: "War?", options: [yes, no]}
          - {text: "Peace?"}
        """,
    )
    exp = load_experiment(path)
    assert [q.options for q in exp.questions] == [["yes", "no"], []]
    assert [q.id for q in exp.questions] == ["q1", "q2"]


def test_shipped_experiments_validate():
    """Every shipped protocol loads; those whose scenario is shipped plan their games."""
    shipped = shipped_experiments()
    assert {
        "azuristan_personas",
        "waragent_accuracy",
        "waragent_triggers",
        "diplomacy_benchmark",
    } <= set(shipped)
    scenarios = shipped_scenarios()
    for name in shipped:
        exp = load_experiment(name, model="scripted")
        conds = conditions_of(exp)
        if all(c.scenario in scenarios for c in conds):
            plans = plan_games(exp)
            assert len(plans) == exp.runs * len(conds)


def test_persona_protocol_is_the_published_one():
    exp = load_experiment("azuristan_personas")
    assert exp.runs == 20 and exp.set["rounds"] == 1
    conds = {c.label: c for c in conditions_of(exp)}
    assert list(conds) == ["dove-dove", "dove-hawk", "hawk-hawk"]
    assert conds["dove-hawk"].overrides["players.azuristan.persona"] == "dove"
    assert conds["dove-hawk"].overrides["players.crimsonia.persona"] == "hawk"
    assert [q.text for q in exp.questions] == [
        "Did armed conflict occur between Azuristan and Crimsonia?"
    ]
    # the personas really differ in the scenarios the games will play
    from wargraph.kernel.scenario import load_scenario

    sc = load_scenario(conds["hawk-hawk"].scenario, conds["hawk-hawk"].overrides)
    assert "even if it takes a war" in sc.players["azuristan"].persona_text
    assert sc.rounds == 1


def test_waragent_protocols():
    acc = load_experiment("waragent_accuracy")
    assert acc.runs == 7
    assert [c.scenario for c in conditions_of(acc)] == ["wwi", "wwii", "warring_states"]
    trig = load_experiment("waragent_triggers")
    conds = conditions_of(trig)
    assert [c.overrides["waragent.trigger"] for c in conds] == [
        "historical",
        "none",
        "naval_incident",
        "strait_clash",
    ]
    assert len(plan_games(trig)) == 28


def test_diplomacy_protocol_uses_per_role_models():
    exp = load_experiment("diplomacy_benchmark")
    assert exp.runs == 20 and exp.set["diplomacy.max_year"] == 1905
    (cond,) = conditions_of(exp)
    assert cond.role_models == {"FRANCE": "embedded"} and cond.model == "embedded"
