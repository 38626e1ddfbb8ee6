"""wargraph uses LangGraph's public API only: no private config keys (`__pregel_*`), no private
modules, no copying a node's whole `configurable` (which carries those keys) into another call."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = re.compile(
    r"__pregel_|langgraph\._internal|langgraph\.pregel\._|checkpoint_map|"
    r"get_config\(\)\.get\(\"configurable\", \{\}\)\s*$"
)


def sources() -> list[Path]:
    return list((ROOT / "src" / "wargraph").rglob("*.py"))


def test_no_private_langgraph_names_in_the_code():
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in sources()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert sources(), "no sources found"
    assert not hits, "private LangGraph internals used:\n" + "\n".join(hits)
