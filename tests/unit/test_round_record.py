"""The round record (`wargraph.kernel.record.RoundRecord`): what `order` places in `world` for
the secretary and the resolution, typed; a seat acting in two mounts keeps both proposals
(`by_mount`), and a mount's `Orders.update` writes the world's own keys."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from wargraph.kernel.graphkit import build_game
from wargraph.kernel.parts import Orders, Resolution
from wargraph.kernel.record import ROUND_KEYS, RoundRecord, round_record
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.world import World
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.order import order

DRAFT = "Lendor drafts: share the water."


@dataclass(frozen=True)
class Draft(Orders):
    def actors(self, table):
        return ["lendor"]

    def update(self, table, proposals):
        drafts = int((table.state.get("world") or {}).get("drafts", 0))
        return {"drafts": drafts + 1, "pen": next(iter(proposals))}


@dataclass(frozen=True)
class Vote(Orders):
    def actors(self, table):
        return ["lendor", "karvia", "miran"]


class Keep(Resolution):
    """Keeps what it was shown, so the test can read it after the round record is emptied."""

    def resolve(self, table, proposals, narration):
        record = round_record(table.state.get("world"))
        return {"world": {"seen": {"proposals": proposals, "by_mount": record.get("by_mount")}}}


def _play(world, scripted, tmp_path, rounds=1):
    sc = load_scenario("summit", [f"rounds={rounds}"])
    spine = {"draft": order, "vote": order, "adjudicate": adjudicate}
    g = build_game(spine, list(sc.roles), world=world, scenario=sc).compile(
        checkpointer=InMemorySaver()
    )
    scripts = {"lendor": [DRAFT, "I vote for it."] * rounds, "karvia": ["Yes."] * rounds}
    cfg = {"configurable": {"thread_id": "r"}, "recursion_limit": 300}
    return g.invoke({"scenario": sc.model_dump()}, cfg, context=scripted(tmp_path, scripts=scripts))


def test_a_seat_acting_in_two_mounts_keeps_both_proposals(scripted, tmp_path):
    world = World(
        orders={"draft": Draft(task="draft"), "vote": Vote(task="vote")}, resolution=Keep()
    )
    out = _play(world, scripted, tmp_path)
    assert not out.get("error")
    seen = out["world"]["seen"]
    assert seen["by_mount"]["draft"] == {"lendor": DRAFT}
    assert seen["by_mount"]["vote"]["lendor"] == "I vote for it."
    assert seen["by_mount"]["vote"]["karvia"] == "Yes."
    assert seen["proposals"]["lendor"] == "I vote for it."  # the latest, as before
    assert out["world"]["by_mount"] == {} and out["world"]["proposals"] == {}  # emptied


def test_a_mounts_orders_may_update_the_world(scripted, tmp_path):
    world = World(
        orders={"draft": Draft(task="draft"), "vote": Vote(task="vote")}, resolution=Keep()
    )
    out = _play(world, scripted, tmp_path, rounds=2)
    assert out["world"]["drafts"] == 2 and out["world"]["pen"] == "lendor"  # kept across rounds


def test_an_update_under_a_round_record_name_is_refused(scripted, tmp_path):
    @dataclass(frozen=True)
    class Bad(Draft):
        def update(self, table, proposals):
            return {"proposals": {}}

    world = World(orders={"draft": Bad(task="draft"), "vote": Vote(task="vote")}, resolution=Keep())
    with pytest.raises(ValueError, match=r"Bad.update \(mount 'draft'\) writes \['proposals'\]"):
        _play(world, scripted, tmp_path)


def test_the_round_record_is_one_typed_dict_read_from_world():
    assert set(ROUND_KEYS) == set(RoundRecord.__annotations__)
    assert {"proposals", "sources", "placed_by", "by_mount", "status"} <= set(ROUND_KEYS)
    world = {"proposals": {"a": 1}, "scores": {"a": 3}}
    assert round_record(world) == {"proposals": {"a": 1}}  # the world's own keys are not in it


def test_each_mounts_proposals_are_kept_as_the_secretary_leaves_them(scripted, tmp_path):
    from wargraph.kernel.parts import Secretary
    from wargraph.kernel.question import Check
    from wargraph.nodes.secretary_validate import secretary_validate

    class Stamp(Secretary):
        def check(self, table, actor, proposal):
            return Check(accepted=f"{proposal} (seen)")

    world = World(
        orders={"draft": Draft(task="draft"), "vote": Vote(task="vote")},
        secretary=Stamp(),
        resolution=Keep(),
    )
    sc = load_scenario("summit", ["rounds=1"])
    spine = {"draft": order, "check": secretary_validate, "vote": order, "adjudicate": adjudicate}
    g = build_game(spine, list(sc.roles), world=world, scenario=sc)
    graph = g.compile(checkpointer=InMemorySaver())
    scripts = {"lendor": [DRAFT, "I vote for it."]}
    cfg = {"configurable": {"thread_id": "s"}, "recursion_limit": 300}
    out = graph.invoke(
        {"scenario": sc.model_dump()}, cfg, context=scripted(tmp_path, scripts=scripts)
    )
    seen = out["world"]["seen"]
    assert seen["by_mount"]["draft"] == {"lendor": f"{DRAFT} (seen)"}  # as the secretary left it
    assert seen["by_mount"]["vote"]["lendor"] == "I vote for it."  # after the check: untouched
