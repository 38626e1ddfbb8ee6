"""tools/typecheck.py names each file as it is imported once installed (src/wargraph/nodes/ is wargraph.nodes
...): a wrong name would make mypy check a module nobody imports, or miss one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("typecheck_tool", ROOT / "tools" / "typecheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_is_named_as_the_installed_package_imports_it():
    tool = _tool()
    sources = tool.sources(tool.roots())
    named = {s.module: s.path for s in sources}
    # the kernel, the phase library and a family composition, under their installed names
    assert named["wargraph.seats.deciders"] == "src/wargraph/seats/deciders.py"
    assert named["wargraph.nodes.order"] == "src/wargraph/nodes/order.py"
    assert named["wargraph.nodes"] == "src/wargraph/nodes/__init__.py"
    assert named["wargraph.games.crisis.graph"] == "src/wargraph/games/crisis/graph.py"
    assert len(named) == len(sources)  # no module named twice
    for module, path in named.items():
        found = importlib.util.find_spec(module)
        assert found is not None and found.origin is not None, module
        assert Path(found.origin).resolve() == (ROOT / path).resolve(), module


def test_the_mapping_is_read_from_setup_py(tmp_path):
    tool = _tool()
    assert tool.roots()["wargraph.nodes"] == "nodes"
    setup = tmp_path / "setup.py"
    setup.write_text("from setuptools import setup\nsetup()\n")
    with pytest.raises(SystemExit, match="no ROOTS mapping"):
        tool.roots(setup)
