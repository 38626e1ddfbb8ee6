"""Every game family is found one way: an entry point in `wargraph.families` naming a `Family`
that declares all it has; its references are resolved and checked when it loads. Built-ins and
plug-ins alike; replay hooks, CLI options, eval commands and tournament scores go through it."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import wargraph.kernel.families as families
from tests.plugins import bargain
from wargraph.cli import app
from wargraph.evals.tournament.results import seat_scores
from wargraph.evals.tournament.spec import Score
from wargraph.kernel.families import Family, FamilyError, Option
from wargraph.kernel.familyargs import split
from wargraph.runs.records import RecordError

runner = CliRunner()
BARGAIN = str(Path(bargain.__file__).with_name("three_way.yaml"))
HERE = __name__


def replay_outcome(start: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    return {}


def eval_records(records: list[Path], out: Path, *, judge: str = "") -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "judged.json").write_text(json.dumps({"records": len(records), "judge": judge}))


def scored(record: dict[str, Any], path: Path) -> dict[str, Any]:
    return {"scores": {"a": 3, "b": 7}}


NOT_CALLABLE = 42
BASE = dict(
    scenario_class="wargraph.kernel.scenario:Scenario", graph="wargraph.graphs.crisis.graph"
)
HOOKY = Family("hooky", **BASE, replay_outcome=f"{HERE}:replay_outcomes")  # misspelled
STIFF = Family("stiff", **BASE, replay_stop=f"{HERE}:NOT_CALLABLE")
EVALS = Family(
    "evals",
    **BASE,
    eval_command=f"{HERE}:eval_records",
    eval_options=(Option("--judge", "judge", "the judge"),),
)
SCORED = Family("scored", **BASE, measures=f"{HERE}:scored")
BAD_KEY = Family("badkey", **BASE, play_options=(Option("--max-year", "diplomacy.max_year"),))
BAD_FLAG = Family("badflag", **BASE, play_options=(Option("-r", "rounds"),))
BAD_EVAL_KEY = Family(
    "badeval", **BASE, eval_command=f"{HERE}:eval_records", eval_options=(Option("--x", "nope"),)
)
CLASH = Family("clash", **BASE, play_options=(Option("--rounds", "rounds"),))
BAD_CRISIS = dataclasses.replace(
    Family("crisis", **BASE, scenarios="wargraph.scenarios.crisis"),
    critical_state="wargraph.graphs.diplomacy.replay:critical_stat",
)


@pytest.fixture
def own_families(monkeypatch):
    """Stand-in for wargraph's own installed metadata: `own_families(name="module:FAMILY")`."""

    def install(**targets: str) -> None:
        class Dist:
            entry_points = [
                importlib.metadata.EntryPoint(name=n, value=v, group=families.GROUP)
                for n, v in targets.items()
            ]

        monkeypatch.setattr(families.importlib.metadata, "distribution", lambda name: Dist())
        families.refresh()

    yield install
    monkeypatch.undo()
    families.refresh()


# --- one way to find a family -------------------------------------------------------------------


def test_builtins_and_plugins_come_from_the_same_entry_point_group(entry_points):
    own = importlib.metadata.distribution("wargraph").entry_points.select(group=families.GROUP)
    assert sorted(ep.name for ep in own) == list(families.builtin_names())
    assert set(families.builtin_names()) == {
        "blotto", "crisis", "diplomacy", "flow", "tabletop", "waragent",
    }  # fmt: skip
    for ep in own:  # the registry hands out exactly what the entry point names
        assert families.get(ep.name) is ep.load()
    entry_points(evals=f"{HERE}:EVALS")
    assert families.get("evals") is EVALS and families.names()[-1] == "evals"
    # both load the same way: every reference resolved
    assert families.attribute("evals", "eval_command") is eval_records
    import wargraph.graphs.diplomacy.replay as dip

    assert families.attribute("diplomacy", "critical_state") is dip.critical_state
    assert families.attribute("crisis", "critical_state") is None  # the generic rule


def test_every_builtin_loads_with_every_reference_checked():
    for name in families.builtin_names():
        fam = families.load(name)
        for field, kind in families.REFERENCES.items():
            if getattr(fam, field) and kind == families.FUNCTION:
                assert callable(families.attribute(name, field)), (name, field)


def test_every_reference_field_is_checked_at_load():
    plain = {"name", "description", "play_options", "eval_options", "bots"}  # bots: at load too
    assert {f.name for f in dataclasses.fields(Family)} == set(families.REFERENCES) | plain


def test_a_plugin_cannot_take_a_builtin_name(entry_points):
    entry_points(crisis=f"{HERE}:HOOKY")
    assert "taken by a built-in family" in families.problems()["crisis"]
    assert families.get("crisis").graph == "wargraph.graphs.crisis.graph"


def test_wargraphs_own_entry_points_are_not_plugins():
    families.refresh()
    every = importlib.metadata.entry_points(group=families.GROUP)
    mine = [ep for ep in every if ep.dist is not None and ep.dist.name == "wargraph"]
    assert sorted(ep.name for ep in mine) == list(families.builtin_names())
    assert not set(families.builtin_names()) & set(families.problems())


# --- checked at load ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target", "message"),
    [
        ("hooky", "HOOKY",
         f"family 'hooky': its replay_outcome '{HERE}:replay_outcomes' cannot be loaded"),
        ("stiff", "STIFF", f"family 'stiff': its replay_stop '{HERE}:NOT_CALLABLE' is not a function"),
        ("badkey", "BAD_KEY",
         "play_options --max-year sets 'diplomacy.max_year', but Scenario has no field"),
        ("badflag", "BAD_FLAG", "play_options '-r' is not of the form --lower-case-words"),
        ("badeval", "BAD_EVAL_KEY",
         f"eval_options --x sets 'nope', which {HERE}:eval_records does not take"),
    ],
)  # fmt: skip
def test_a_bad_declaration_is_reported_naming_field_and_reference(
    entry_points, name, target, message
):
    entry_points(**{name: f"{HERE}:{target}"})
    assert message in families.problems()[name]
    with pytest.raises(FamilyError, match="its (replay|play|eval)"):
        families.load(name)
    with pytest.raises(FamilyError):  # and nothing of it is used afterwards
        families.graph_module(name)
    assert "crisis" in families.families()  # the others still play


def test_an_unknown_field_is_a_type_error_naming_it(entry_points, tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="replay_outcomes"):
        Family("x", **BASE, replay_outcomes=f"{HERE}:replay_outcome")  # type: ignore[call-arg]
    (tmp_path / "typo_family.py").write_text(
        "from wargraph.kernel.families import Family\n"
        "FAMILY = Family('typo', 'wargraph.kernel.scenario:Scenario', 'wargraph.graphs.crisis.graph',\n"
        "                replay_outcomes='x:y')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entry_points(typo="typo_family:FAMILY")
    why = families.problems()["typo"]
    assert "plug-in 'typo'" in why and "unexpected keyword argument 'replay_outcomes'" in why


def test_a_builtin_with_a_misspelled_hook_is_a_hard_error(own_families, tmp_path):
    every = {n: f"wargraph.graphs.{n}:FAMILY" for n in ("blotto", "diplomacy")}
    own_families(crisis=f"{HERE}:BAD_CRISIS", **every)
    assert families.builtin_names() == ("blotto", "crisis", "diplomacy")
    with pytest.raises(FamilyError, match=r"family 'crisis': its critical_state '.*critical_stat'"):
        families.graph_module("crisis")
    assert "crisis" not in families.problems()  # not a plug-in's problem: wargraph's own bug
    played = runner.invoke(
        app, ["play", "azuristan_crimsonia", "--model", "scripted", "--db", str(tmp_path / "g.db")]
    )
    assert played.exit_code == 2 and "critical_stat'" in played.output, played.output
    assert families.graph_module("blotto").__name__ == "wargraph.graphs.blotto.graph"


def test_without_installed_metadata_the_source_tree_declares_the_builtins(monkeypatch):
    def missing(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(families.importlib.metadata, "distribution", missing)
    families.refresh()
    try:
        assert families.source_declared(), "these tests run from a source tree"
        assert families.builtin_names() == (
            "blotto",
            "crisis",
            "diplomacy",
            "flow",
            "tabletop",
            "waragent",
        )
        monkeypatch.setattr(families, "source_declared", lambda: {})
        families.refresh()
        with pytest.raises(FamilyError, match="declared nowhere.*reinstall wargraph"):
            families.names()
        said = runner.invoke(app, ["validate", "blotto"])
        assert said.exit_code == 2 and "reinstall wargraph" in said.output, said.output
    finally:
        monkeypatch.undo()
        families.refresh()


# --- what goes through the entry ------------------------------------------------------------------


def test_play_takes_the_options_the_family_declares(entry_points, tmp_path):
    out = tmp_path / "dip"
    played = runner.invoke(
        app,
        ["play", "diplomacy", "--model", "scripted", "--max-year", "1902",
         "--negotiation-rounds=0", "--out", str(out), "--db", str(tmp_path / "d.db")],
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    record = json.loads((out / "record.json").read_text())
    assert record["scenario"]["diplomacy"]["max_year"] == 1902
    assert record["scenario"]["diplomacy"]["negotiation_rounds"] == 0
    assert "the last year (1902) is played" in played.output
    # a plug-in's options work the same way
    entry_points(bargain="tests.plugins.bargain:FAMILY")
    played = runner.invoke(
        app,
        ["play", BARGAIN, "--pie", "60", "--model", "scripted", "--out", str(tmp_path / "b"),
         "--db", str(tmp_path / "b.db")],
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    assert json.loads((tmp_path / "b" / "record.json").read_text())["scenario"]["pie"] == 60


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["azuristan_crimsonia", "--max-year", "1902"],
         "no option --max-year for a crisis game (crisis games take no options of their own); "
         "--max-year is an option of diplomacy games"),
        (["diplomacy", "--max-yaer", "1902"], "did you mean --max-year?"),
        (["diplomacy", "--max-year"], "--max-year needs a value (YEAR)"),
        (["blotto", "--rouns", "2"], "did you mean --rounds?"),
    ],
)  # fmt: skip
def test_an_option_the_family_does_not_declare_is_a_clear_error(tmp_path, args, message):
    played = runner.invoke(app, ["play", *args, "--model", "scripted", "--db", str(tmp_path / "x")])
    assert played.exit_code == 2, played.output
    assert message in " ".join(played.output.split()) and "Traceback" not in played.output


def test_a_family_option_named_like_the_commands_own_is_refused(entry_points, tmp_path):
    entry_points(clash=f"{HERE}:CLASH")
    path = tmp_path / "c.yaml"
    path.write_text("family: clash\ntitle: C\nsetting: A test.\nplayers: {a: {}}\n")
    played = runner.invoke(
        app, ["play", str(path), "--model", "scripted", "--db", str(tmp_path / "x")]
    )
    assert played.exit_code == 2, played.output
    assert "family 'clash': its play_options --rounds is an option of wargraph play itself" in (
        " ".join(played.output.split())
    )


def test_play_help_lists_the_families_options():
    shown = " ".join(runner.invoke(app, ["play", "--help"]).output.split())
    assert "diplomacy: --max-year YEAR last year played" in shown


def test_split_sets_aside_unknown_long_options_with_their_values():
    own = {"--rounds": True, "--xray": False, "--set": True}
    kept, given = split(
        [
            "s",
            "--max-year",
            "1902",
            "--rounds",
            "3",
            "--set",
            "--k=v",
            "--n=2",
            "--xray",
            "--",
            "--z",
        ],
        own,
    )
    assert kept == ["s", "--rounds", "3", "--set", "--k=v", "--xray", "--", "--z"]
    assert given == [("--max-year", "1902"), ("--n", "2")]
    assert split(["s", "--last"], own) == (["s"], [("--last", None)])
    assert split(["--a", "--rounds", "2"], own) == (["--rounds", "2"], [("--a", None)])


def test_eval_runs_the_family_eval_command(entry_points, tmp_path):
    entry_points(evals=f"{HERE}:EVALS")
    done = runner.invoke(app, ["eval", "evals", "a", "b", "--judge", "j", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "judged.json").read_text()) == {"records": 2, "judge": "j"}
    none = runner.invoke(app, ["eval", "crisis", "a"])
    assert none.exit_code == 2 and "the crisis family has no eval command" in none.output
    assert "(families with one: diplomacy, waragent, evals)" in " ".join(none.output.split())
    unknown = runner.invoke(app, ["eval", "nope", "a"])
    assert unknown.exit_code == 2 and "unknown game family 'nope'" in unknown.output


def test_tournament_scores_come_from_the_family_measures(entry_points, tmp_path):
    entry_points(scored=f"{HERE}:SCORED")
    record = {"scenario": {"family": "scored"}, "events": []}
    (tmp_path / "record.json").write_text(json.dumps(record))
    got = seat_scores(Score(kind="points"), ["a", "b"], tmp_path, {})
    assert got == {"a": 3.0, "b": 7.0}
    (tmp_path / "record.json").write_text(json.dumps({**record, "scenario": {"family": "crisis"}}))
    with pytest.raises(RecordError, match="crisis game's measures hold no scores to rank by"):
        seat_scores(Score(kind="centres"), ["a"], tmp_path, {})
