"""Enum fields of answer schemas whose values are known only when a game runs (legal orders,
the seats one may write to, the countries one may target)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal


def one_of(values: Iterable[str]) -> Any:
    """`Literal[v1, v2, ...]` for a pydantic field, built from run-time values. Typed Any: a type
    checker can only check literals written in the source."""
    return Literal.__getitem__(tuple(values))
