"""MkDocs hooks for the API reference (mkdocs.yml `hooks:`).

setup.py installs folders outside src/wargraph/ (src/wargraph/nodes/, src/wargraph/games/, src/wargraph/evals/ ...) under the wargraph
namespace, which reading the source tree cannot see. Before the build, `build/api-src/wargraph`
is made as the installed package looks: links to src/wargraph/'s files and to each mapped folder;
mkdocstrings reads the source there (mkdocs.yml `paths`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "api-src"


def _roots() -> dict[str, str]:
    """setup.py's ROOTS (import name -> folder), read without running setup()."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    start = text.index("ROOTS = {")
    namespace: dict[str, Any] = {}
    exec(text[start : text.index("}", start) + 1], namespace)  # the dict literal alone
    return dict(namespace["ROOTS"])


def on_startup(**_: Any) -> None:
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "wargraph"
    package.mkdir(parents=True)
    roots = _roots()
    for entry in (ROOT / roots.pop("wargraph")).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in roots.items():
        (package / name.split(".", 1)[1]).symlink_to(ROOT / folder)
