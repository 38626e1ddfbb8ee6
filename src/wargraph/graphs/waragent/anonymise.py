"""Real names <-> neutral names in text and nested data, both ways, whole words only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class Anonymiser:
    """Real names <-> neutral names (countries, places, people, events), both ways.

    Longest names are replaced first and only as whole words, so "Germany" inside
    "German Empire" or "Country B" inside "Country BA" never half-match.
    """

    def __init__(self, mapping: Mapping[str, str]) -> None:
        values = list(mapping.values())
        dupes = sorted({v for v in values if values.count(v) > 1})
        if dupes:
            raise ValueError(
                f"anonymisation: several names map to {dupes}; the mapping must be one-to-one"
            )
        both = sorted(set(mapping) & set(values))
        if both:
            raise ValueError(f"anonymisation: {both} appear as both a real and a neutral name")
        self.forward_map = dict(mapping)
        self.back_map = {v: k for k, v in mapping.items()}
        self._fwd = self._pattern(self.forward_map)
        self._back = self._pattern(self.back_map)

    @staticmethod
    def _pattern(m: Mapping[str, str]) -> re.Pattern[str] | None:
        if not m:
            return None
        alts = "|".join(re.escape(k) for k in sorted(m, key=len, reverse=True))
        return re.compile(rf"(?<!\w)(?:{alts})(?!\w)")

    @staticmethod
    def _sub(pattern: re.Pattern[str] | None, m: Mapping[str, str], text: str) -> str:
        return pattern.sub(lambda x: m[x.group(0)], text) if pattern else text

    def forward(self, text: str) -> str:
        return self._sub(self._fwd, self.forward_map, text)

    def back(self, text: str) -> str:
        return self._sub(self._back, self.back_map, text)

    def name(self, country: str) -> str:
        return self.forward_map.get(country, country)

    def real(self, neutral: str) -> str:
        return self.back_map.get(neutral, neutral)

    def translate(self, data: Any, backwards: bool = False) -> Any:
        """Every string and mapping key inside nested dicts/lists/tuples, one way or back."""
        f = self.back if backwards else self.forward
        if isinstance(data, str):
            return f(data)
        if isinstance(data, Mapping):
            return {
                (f(k) if isinstance(k, str) else k): self.translate(v, backwards)
                for k, v in data.items()
            }
        if isinstance(data, list | tuple):
            return type(data)(self.translate(v, backwards) for v in data)
        return data
