"""Fields of answer schemas whose types are known only when a game runs: enums (legal orders,
the seats one may write to, the countries one may target) and lists of models made then."""

from __future__ import annotations

from collections.abc import Iterable
from types import GenericAlias
from typing import Any, Literal


def one_of(values: Iterable[str]) -> Any:
    """`Literal[v1, v2, ...]` for a pydantic field, built from run-time values. Typed Any: a type
    checker can only check literals written in the source."""
    return Literal.__getitem__(tuple(values))


def list_of(model: type[Any]) -> Any:
    """`list[model]` for a pydantic field, `model` made at run time (`create_model`). Typed Any:
    a type checker without pydantic's plugin cannot take a variable as a type."""
    return GenericAlias(list, (model,))
