"""A phase is a typed `PhaseSpec` (run, seats, loops), not a function with attributes: the graph
reads the seats a phase may ask and whether it loops from the spec, and a plain function of a
game's own is a phase that may ask any seat."""

from __future__ import annotations

import dataclasses

import pytest

from wargraph.kernel.graphkit import build_game
from wargraph.kernel.phase import PhaseSpec, phase_spec
from wargraph.kernel.scenario import load_scenario
from wargraph.nodes.library import LIBRARY
from wargraph.nodes.seats import asks, control, nobody, players


def _edges(spine):
    sc = load_scenario("summit")
    g = build_game(spine, list(sc.roles), scenario=sc).compile()
    drawn = g.get_graph()
    return {(e.source, e.target) for e in drawn.edges}, sc


def test_every_library_phase_is_declared_as_a_spec():
    for name, phase in LIBRARY.items():
        assert isinstance(phase, PhaseSpec), name
        assert not hasattr(phase.run, "seats"), f"{name}: a function attribute is back"
        assert phase_spec(phase) is phase


def test_a_spec_is_frozen_and_plays_its_function():
    seen = []
    spec = PhaseSpec(lambda state, table: seen.append((state, table)) or {"x": 1})
    assert spec({"s": 1}, "table") == {"x": 1} and seen == [({"s": 1}, "table")]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.loops = True  # type: ignore[misc]


def test_the_graph_draws_a_plain_phase_to_every_seat_and_a_declared_one_to_its_own():
    def mine(state, table):
        return {}

    declared = asks(control)(mine)
    edges, sc = _edges({"mine": mine, "umpire": declared, "quiet": asks(nobody)(mine)})
    everyone = {f"agent_{r}" for r in sc.roles}
    assert {t for s, t in edges if s == "mine"} >= everyone
    assert {t for s, t in edges if s == "umpire" and t.startswith("agent_")} == {
        f"agent_{sc.control.name}"
    }
    assert not {t for s, t in edges if s == "quiet" and t.startswith("agent_")}


def test_a_looping_phase_may_run_again():
    def talks(state, table):
        return {}

    edges, _ = _edges({"talks": asks(players, loops=True)(talks), "after": asks(nobody)(talks)})
    assert ("talks", "talks") in edges
    edges, _ = _edges({"talks": asks(players)(talks), "after": asks(nobody)(talks)})
    assert ("talks", "talks") not in edges
