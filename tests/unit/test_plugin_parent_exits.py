"""A plug-in whose `prompts=` package's parent exits or raises at import (issue 40, item 12)
is one family that cannot be used, named with its reason, not a silent end of `wargraph
scenarios` or `wargraph serve`: finding a package imports its parent, so that check runs under
the same guard as the plug-in's other imports. Real throwaway packages on sys.path (nothing
installed); the entry points are stand-ins of the installed metadata."""

from __future__ import annotations

import importlib.metadata
import sys

import pytest

import wargraph.kernel.families as families
from wargraph.kernel.families import Family

PARENTS = {
    "wg_parent_exits": "import sys\nsys.exit(0)\n",
    "wg_parent_raises": "raise RuntimeError('the parent refuses')\n",
}


@pytest.mark.parametrize(("package", "said"), [
    ("wg_parent_exits", "SystemExit(0)"),
    ("wg_parent_raises", "RuntimeError: the parent refuses"),
])  # fmt: skip
def test_a_prompts_package_whose_parent_ends_the_program(tmp_path, monkeypatch, package, said):
    (tmp_path / package / "prompts").mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text(PARENTS[package], encoding="utf-8")
    (tmp_path / package / "prompts" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    declared = Family(
        "parented", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph",
        prompts=f"{package}.prompts",
    )  # fmt: skip

    class EntryPoint(importlib.metadata.EntryPoint):
        def load(self):
            return declared

    eps = [EntryPoint(name="parented", value=f"{package}:FAMILY", group=families.GROUP)]
    monkeypatch.setattr(families.importlib.metadata, "entry_points", lambda group=None: eps)
    families.refresh()
    try:
        found = families.families()  # what `wargraph scenarios` and `serve` list
        assert "crisis" in found and "parented" not in found
        why = families.problems()["parented"]
        assert "plug-in 'parented'" in why and said in why, why
        assert families.find_shipped("azuristan_crimsonia") is not None
    finally:
        monkeypatch.undo()
        sys.modules.pop(package, None)
        families.refresh()
