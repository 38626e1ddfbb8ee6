"""Plug-in families are imported only when their family is used, under guard: a plug-in that
exits at import, hangs or prints cannot end, freeze or corrupt another command; when its own
family is used, the error names the plug-in. Real throwaway packages, installed in the venv."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import wargraph.kernel.families as families
from tests.plugins import installed_apart, pyproject

WARGRAPH = Path(sys.executable).with_name("wargraph")

FAMILY = """
from wargraph.kernel.families import Family

FAMILY = Family("{name}", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph", None, "test")
"""
PLUGIN = {
    "pyproject.toml": pyproject(
        "wargraph-unruly-plugins-test",
        {n: f"wg_unruly_test.{n}:FAMILY" for n in ("quits", "hangs", "loud")},
        "wg_unruly_test",
    ),
    "wg_unruly_test/__init__.py": "",
    "wg_unruly_test/quits.py": "import sys\nsys.exit(0)\n",
    "wg_unruly_test/hangs.py": "import time\ntime.sleep(3600)\n",
    "wg_unruly_test/loud.py": (
        "import os\nprint('LOUD-PLUGIN says hello')\nos.write(1, b'LOUD-PLUGIN on fd 1\\n')\n"
        + FAMILY.format(name="loud")
    ),
}


@pytest.fixture(scope="module")
def unruly(tmp_path_factory):
    """The unruly plug-ins, installed where only this test's processes look (installed into the
    venv, a plug-in that hangs at import froze other workers' commands meanwhile)."""
    src, target = tmp_path_factory.mktemp("unruly"), tmp_path_factory.mktemp("unruly_site")
    with installed_apart(src, PLUGIN, target) as env:
        ENV.update(env)
        yield
        ENV.clear()


ENV: dict[str, str] = {}  # the environment of this test's processes (`unruly`)


def run(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(WARGRAPH), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=ENV or None,
    )


def scenario_of(family: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{family}.yaml"
    path.write_text(
        f"family: {family}\ntitle: T\nsetting: A test.\nrounds: 1\nplayers: {{a: {{}}, b: {{}}}}\n"
    )
    return path


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_unruly_plugins_affect_only_their_own_family(unruly, tmp_path):
    # other commands never import them: no hang, no exit, clean stdout
    started = time.monotonic()
    graph = run("graph", "azuristan_crimsonia", cwd=tmp_path, timeout=60)
    assert graph.returncode == 0, graph.stderr
    assert graph.stdout.lstrip().startswith(("graph", "---", "%%")) and "LOUD" not in graph.stdout
    played = run(
        "play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1",
        "--db", str(tmp_path / "g.sqlite"), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert played.returncode == 0 and "Game over" in played.stdout, played.stdout + played.stderr
    # a built-in bot is found without importing any plug-in (one hangs): a bots' game plays
    bots = run(
        "play", "blotto", "--model", "bot:even", "--rounds", "1",
        "--db", str(tmp_path / "b.sqlite"), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert bots.returncode == 0 and "Game over" in bots.stdout, bots.stdout + bots.stderr
    assert time.monotonic() - started < 120

    # a plug-in that exits at import: its family's game fails, naming it; exit code not 0
    quits = run("play", str(scenario_of("quits", tmp_path)), "--model", "scripted", cwd=tmp_path)
    assert quits.returncode == 2, quits.stdout + quits.stderr
    assert "plug-in 'quits'" in quits.stderr and "SystemExit" in quits.stderr

    # a plug-in that prints at import: its output goes to stderr, stdout holds only the graph
    loud = run("graph", str(scenario_of("loud", tmp_path)), cwd=tmp_path)
    assert loud.returncode == 0, loud.stderr
    assert "LOUD-PLUGIN" not in loud.stdout and "LOUD-PLUGIN says hello" in loud.stderr
    assert "LOUD-PLUGIN on fd 1" in loud.stderr

    # a plug-in that hangs at import: only its own family's commands wait; stderr names it
    hangs = subprocess.Popen(
        [str(WARGRAPH), "validate", str(scenario_of("hangs", tmp_path))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=ENV,
    )  # fmt: skip
    try:
        _out, err = hangs.communicate(timeout=families.SLOW_IMPORT_S + 8)
        pytest.fail(f"a hanging plug-in's import returned: {err}")
    except subprocess.TimeoutExpired:
        hangs.kill()
        _out, err = hangs.communicate(timeout=10)
    assert "plug-in 'hangs'" in err and "still importing" in err, err


def test_listing_names_reads_metadata_only(monkeypatch):
    import importlib.metadata

    loaded = []

    class EntryPoint(importlib.metadata.EntryPoint):
        def load(self):  # would import the plug-in
            loaded.append(self.name)
            raise AssertionError("imported")

    eps = [EntryPoint(name="lazy", value="no_such_mod:FAMILY", group=families.GROUP)]
    monkeypatch.setattr(families.importlib.metadata, "entry_points", lambda group=None: eps)
    families.refresh()
    try:
        assert families.names()[-1] == "lazy" and loaded == []
        assert families.get("crisis").name == "crisis" and loaded == []
        assert families.find_shipped("wwi") is not None and loaded == []  # built-in names
    finally:
        monkeypatch.undo()
        families.refresh()


def test_a_slow_import_is_named_on_stderr(monkeypatch, capfd):
    monkeypatch.setattr(families, "SLOW_IMPORT_S", 0.1)
    assert families.guarded_import("plug-in 'slow' (x:Y)", lambda: time.sleep(0.5) or 7) == 7
    assert "plug-in 'slow' (x:Y) is still importing" in capfd.readouterr().err


def test_an_exit_at_import_is_contained_and_named():
    with pytest.raises(families.PluginError, match=r"plug-in 'q'.*exits at import"):
        families.guarded_import("plug-in 'q'", lambda: sys.exit(3))
