"""One source root: every module under src/wargraph is imported from the file its name says
(a file's path is its import path), so tools need no mapping (mypy, coverage, editors)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "wargraph").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if "__pycache__" in parts:
            continue
        name = ".".join(p for p in parts if p != "__init__")
        found[name] = path
    return found


def test_every_module_is_imported_from_the_file_its_name_says():
    modules = _modules()
    assert "wargraph.kernel.table" in modules and "wargraph.graphs.diplomacy.graph" in modules
    for name, path in modules.items():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        assert Path(spec.origin).resolve() == path.resolve(), name


def test_nothing_is_left_in_the_old_roots():
    for old in ("wargraph", "graphs", "nodes", "evals", "prompts", "scenarios"):
        stray = [p for p in (ROOT / old).rglob("*.py")] if (ROOT / old).exists() else []
        assert not [p for p in stray if "__pycache__" not in p.parts], old
