"""The game author's guide (docs/new-game.md) cannot rot: its runnable code is run here.

A fenced block preceded by an HTML comment is runnable:

- `<!-- runs: council/world.py -->` puts the block in that file of a throwaway plug-in package
  (a file named twice gets both blocks, in order); every folder of it is a package (an empty
  `__init__.py` is added where the guide shows none);
- `<!-- runs: test -->` is Python run after the plug-in is installed (its entry point declared
  as `pip install -e` would declare it), each block in a fresh namespace, in order;
- `<!-- runs -->` is Python run on its own, before the plug-in exists.

So the guide's example family is written from the guide alone, registered, played with the
scripted decider and a bot, and every assertion its test blocks make is checked."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

import wargraph.kernel.families as families

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "new-game.md"
BLOCK = re.compile(
    r"<!--\s*runs(?::\s*(?P<target>[^\s>]+))?\s*-->\s*\n```(?P<lang>[a-z]*)\n(?P<code>.*?)\n```",
    re.S,
)
PACKAGE = "council"  # the guide's example plug-in
ENTRY = f"{PACKAGE}:FAMILY"


def blocks() -> list[tuple[str, str, str]]:
    """(target, fence language, code) of every runnable block, in the guide's order."""
    text = GUIDE.read_text(encoding="utf-8")
    return [(m["target"] or "", m["lang"], m["code"]) for m in BLOCK.finditer(text)]


def _write_package(root: Path, files: dict[str, list[str]]) -> None:
    for rel, parts in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    for folder in {(root / rel).parent for rel in files}:
        while folder != root:
            init = folder / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
            folder = folder.parent


def _forget(package: str) -> None:
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]


def test_the_guide_marks_its_runnable_code():
    found = blocks()
    targets = [t for t, _, _ in found]
    # the example family's package as the guide lays it out, and tests that play it
    for rel in ("__init__.py", "world.py", "graph.py", "bots.py", "panels.py"):
        assert f"{PACKAGE}/{rel}" in targets, f"the guide no longer shows {PACKAGE}/{rel}"
    assert any(t.endswith(".yaml") for t in targets), "no runnable scenario file"
    assert targets.count("test") >= 2, "the guide's tests of its example are gone"
    for target, lang, _ in found:
        if target in ("", "test") or target.endswith(".py"):
            assert lang == "python", f"runs block {target or '(standalone)'} is not ```python"


def test_the_guides_standalone_blocks_run():
    for target, _, code in blocks():
        if target == "":
            exec(compile(code, f"{GUIDE.name} (standalone block)", "exec"), {"__name__": "guide"})


def test_the_guides_example_family_installs_plays_and_passes_its_own_tests(
    tmp_path, monkeypatch, entry_points
):
    files: dict[str, list[str]] = {}
    tests: list[str] = []
    for target, _, code in blocks():
        if target == "test":
            tests.append(code)
        elif target:
            files.setdefault(target, []).append(textwrap.dedent(code))
    _write_package(tmp_path, files)
    _forget(PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry_points(**{PACKAGE: ENTRY})  # what `pip install -e` of the plug-in declares
    try:
        fam = families.load(PACKAGE)  # every reference resolved and every hook checked
        assert fam.name == PACKAGE and families.problems() == {}
        for n, code in enumerate(tests, 1):
            exec(compile(code, f"{GUIDE.name} (test block {n})", "exec"), {"__name__": "guide"})
    finally:
        _forget(PACKAGE)
        families.refresh()


@pytest.mark.parametrize("target", ["council/world.py", "council/graph.py"])
def test_the_example_stays_small(target):
    # the guide promises a whole turn-based game with a private briefing in a few screens
    lines = sum(code.count("\n") + 1 for t, _, code in blocks() if t == target)
    assert 0 < lines <= 160, f"{target}: {lines} lines"
