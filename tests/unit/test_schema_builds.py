"""Answer models are built once per distinct shape (issue 43): building a pydantic model and its
JSON schema cost more than a scripted phase's other work, and the negotiation's recipients,
listed in a new order per seat and phase, made a new `Messages` model per seat and phase."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

import wargraph.seats.schemas as schemas
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play

Builds = tuple[Counter[str], dict[str, set[str]]]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[Builds]:
    """Every answer model built from here on, by schema name, and the distinct arguments it
    was built for (the cache emptied first)."""
    counted: Counter[str] = Counter()
    shapes: dict[str, set[str]] = {}

    def counting(name: str, factory: schemas.SchemaFactory) -> schemas.SchemaFactory:
        def build(args: dict[str, Any]) -> Any:
            counted[name] += 1
            shapes.setdefault(name, set()).add(json.dumps(args, sort_keys=True))
            return factory(args)

        return build

    import wargraph.graphs.diplomacy.schemas  # noqa: F401  (registers the Diplomacy schemas)

    for name, factory in list(schemas._SCHEMAS.items()):
        monkeypatch.setitem(schemas._SCHEMAS, name, counting(name, factory))
    schemas._model_for.cache_clear()
    yield counted, shapes
    schemas._model_for.cache_clear()


def test_messages_models_are_built_once_per_recipient_set_across_phases(tmp_path, builds) -> None:
    """Spring and fall 1901: the same seven powers talk in both, two rounds each, so each power
    has one set of recipients all year. Each set's model is built once (7), not once per
    phase (14) because the prompt lists the recipients in a new order each phase."""
    play(
        "diplomacy",
        overrides=["diplomacy.max_year=1901", "diplomacy.maps=none"],
        context=GameContext(model="scripted", seed=3),
        db=None,
        out_dir=tmp_path / "out",
    )
    counted, shapes = builds
    assert counted["diplomacy_messages"] == 7, counted
    # every model built was a shape not seen before: nothing is built twice
    for name, count in counted.items():
        assert count == len(shapes[name]), (name, count)
