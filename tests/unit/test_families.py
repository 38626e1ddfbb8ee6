"""Game families as plug-ins: the registry (built-ins and `wargraph.families` entry points), its
errors, and an out-of-tree family package installed into the venv and played with `wargraph play`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import wargraph.kernel.families as families
from tests.plugins import installed_apart, pyproject
from wargraph.kernel.families import Family
from wargraph.kernel.scenario import ScenarioError, load_scenario, shipped_scenarios
from wargraph.runs.runner import family_module

WARGRAPH = Path(sys.executable).with_name("wargraph")

# A family defined in this test module, as a plug-in package would define one.
ECHO = Family(
    "echo", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph", None, "a test"
)
NOT_A_FAMILY = {"name": "echo"}


def test_builtin_families_register_through_the_registry():
    names = list(families.families())
    assert names[:6] == ["blotto", "crisis", "diplomacy", "flow", "tabletop", "waragent"]
    for name in names[:6]:
        assert callable(families.graph_module(name).build)
    assert families.scenario_class("blotto").__name__ == "BlottoScenario"
    shipped = shipped_scenarios()
    assert {"blotto", "haiwire", "wwi", "summit"} <= set(shipped)
    assert family_module(load_scenario("blotto")).__name__ == "wargraph.graphs.blotto.graph"


def test_a_plugin_family_is_found_and_used(entry_points, tmp_path):
    entry_points(echo=f"{__name__}:ECHO")
    assert families.families()["echo"] is ECHO and families.problems() == {}
    path = tmp_path / "echo.yaml"
    path.write_text("family: echo\ntitle: Echo\nsetting: A test.\nplayers: {a: {}}\n")
    sc = load_scenario(str(path))
    assert sc.family == "echo"
    assert family_module(sc).__name__ == "wargraph.graphs.crisis.graph"
    # the server serves it too: `wargraph serve` adds its graph, and its factory module knows it
    from wargraph.server.factory import available
    from wargraph.server.serve import effective_config

    graphs, skipped = effective_config(None)
    assert graphs["graphs"]["echo"] == "wargraph.server.graphs:echo" and "echo" not in skipped
    assert available()["echo"] is None


@pytest.mark.parametrize(
    "name, target, why",
    [
        ("crisis", f"{__name__}:ECHO", "taken by a built-in family"),
        ("echo", "no_such_plugin_pkg.family:FAMILY", "cannot be loaded (ModuleNotFoundError"),
        (
            "echo",
            f"{__name__}:NOT_A_FAMILY",
            "expected a wargraph.kernel.families.Family, got dict",
        ),
        ("other", f"{__name__}:ECHO", "named 'other' but the family 'echo'"),
    ],
)
def test_a_broken_plugin_is_reported_and_the_rest_still_play(
    entry_points, tmp_path, name, target, why
):
    entry_points(**{name: target})
    assert why in families.problems()[name]
    assert "blotto" in families.families() and families.get("crisis").graph.endswith("crisis.graph")
    if name != "crisis":  # a scenario of the broken family names the file and the reason
        path = tmp_path / "x.yaml"
        path.write_text(f"family: {name}\ntitle: X\nsetting: A test.\n")
        with pytest.raises(ScenarioError, match=rf"x\.yaml: family: .*{name}"):
            load_scenario(str(path))


def test_an_unknown_family_lists_the_known_ones():
    with pytest.raises(ScenarioError, match=r"unknown game family 'nope' \(known: .*blotto"):
        load_scenario({"family": "nope", "title": "x", "setting": "y"})


# --- an out-of-tree package, really installed ------------------------------------------------------

PLUGIN = {
    "pyproject.toml": pyproject(
        "wargraph-duel-plugin-test",
        {"duel": "wargraph_duel_test:FAMILY"},
        "wargraph_duel_test",
        data="*.yaml",
    ),
    "wargraph_duel_test/__init__.py": '''
        """A two-seat duel: each side states a plan; the rules say the longer plan wins."""
        from wargraph.kernel.families import Family
        from wargraph.kernel.graphkit import build_game
        from wargraph.nodes.adjudicate import adjudicate
        from wargraph.nodes.order import order
        from wargraph.kernel.scenario import Scenario, load_scenario
        from wargraph.kernel.state import make_event
        from wargraph.worlds import Resolution, World

        FAMILY = Family("duel", "wargraph_duel_test:DuelScenario", "wargraph_duel_test",
                        "wargraph_duel_test", "a two-seat duel")


        class DuelScenario(Scenario):
            family: str = "duel"


        class Bout(Resolution):
            def resolve(self, table, proposals, narration):
                best = max(sorted(proposals), key=lambda side: len(proposals[side]))
                return {"events": [make_event(round=table.round, phase=table.phase,
                                              kind="duel", author="referee",
                                              text=f"{best} wins the exchange")]}


        def build(scenario):
            sc = load_scenario(scenario)
            return build_game({"order": order, "adjudicate": adjudicate},
                              roster=list(sc.roles), world=World("duel", resolution=Bout()), scenario=sc)
    ''',
    "wargraph_duel_test/duel_at_dawn.yaml": """
        family: duel
        title: "Duel at dawn"
        setting: "Two fencers meet at dawn."
        rounds: 2
        players:
          left: {persona: "A patient fencer."}
          right: {persona: "A reckless fencer."}
    """,
}


@pytest.fixture
def duel_plugin(tmp_path):
    """The plug-in installed into a folder of its own: the environment its processes need."""
    with installed_apart(tmp_path / "duel_src", PLUGIN, tmp_path / "site") as env:
        yield env


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_installed_plugin_family_plays_with_wargraph_play(duel_plugin, tmp_path):
    listed = subprocess.run(
        [str(WARGRAPH), "scenarios"], capture_output=True, text=True, timeout=120, env=duel_plugin
    )
    assert "duel_at_dawn" in listed.stdout and "duel" in listed.stdout, listed.stdout
    out = tmp_path / "run"
    played = subprocess.run(
        [str(WARGRAPH), "play", "duel_at_dawn", "--model", "scripted", "--out", str(out),
         "--db", str(tmp_path / "g.sqlite")],
        capture_output=True, text=True, timeout=120, env=duel_plugin,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    record = json.loads((out / "record.json").read_text())
    assert record["done"] and record["scenario"]["family"] == "duel"
    duels = [e for e in record["events"] if e["kind"] == "duel"]
    assert [e["round"] for e in duels] == [1, 2]
    assert all(e["text"].endswith("wins the exchange") for e in duels)
