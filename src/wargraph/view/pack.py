"""The view's data, small: every text is stored as a list of line numbers into one table of
distinct lines (a long game's prompts repeat the same briefs, board and history hundreds of
times, and maps share their base drawing), then the JSON is gzipped and inlined as base64."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any


class Lines:
    """The table of distinct lines; `ids(text)` gives a text's line numbers."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def id(self, line: str) -> int:
        found = self._index.get(line)
        if found is None:
            found = self._index[line] = len(self.table)
            self.table.append(line)
        return found

    def ids(self, text: Any) -> list[int]:
        return [self.id(line) for line in str(text if text is not None else "").split("\n")]

    def svg_ids(self, svg: str) -> list[int]:
        """An SVG cut after each tag's end (the renderer writes long lines), so the base map's
        paths are shared between phases; joined again with newlines (harmless in SVG)."""
        return [self.id(part) for part in svg.replace(">\n", ">").replace(">", ">\n").split("\n")]


def pack(payload: dict[str, Any]) -> str:
    """The payload as gzip + base64 (what the page's script decodes)."""
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), compresslevel=9, mtime=0)).decode()
