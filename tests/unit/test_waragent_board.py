"""Board precedence, per-country beliefs, the round update, stopping and the action schema."""

from __future__ import annotations

import json

import pytest

from wargraph.graphs.waragent.rules import (
    DEFAULT_VISIBILITY,
    Action,
    Situation,
    apply_round,
    describe_board,
    empty_board,
    new_world,
    observers,
    parse_actions,
    proposal_model,
    should_stop,
)

C = ["A", "B", "C", "D"]
VIS = DEFAULT_VISIBILITY


def act(type_: str, target: str = "none", message: str = "") -> Action:
    return Action(type=type_, target=target, message=message)


# --- precedence ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "shown"),
    [
        ([], "none"),
        (["treaty"], "treaty"),
        (["treaty", "peace"], "peace"),
        (["peace", "alliance", "treaty"], "alliance"),
        (["alliance", "war"], "war"),
        (["treaty", "war"], "war"),
    ],
)
def test_precedence(kinds, shown):
    b = empty_board(C)
    for k in kinds:
        b.add("A", "B", k)
    assert b.relation("A", "B") == shown == b.relation("B", "A")
    assert b.matrix()[0][1] == shown


def test_betrayal_clears_only_that_relation():
    b = empty_board(C)
    b.add("A", "B", "alliance")
    b.add("A", "B", "treaty")
    w = apply_round(new_world(C, b), {"A": [act("betray_alliance", "B")]}, VIS)
    assert w.true.relation("A", "B") == "treaty"
    w = apply_round(w, {"B": [act("betray_treaty", "A")]}, VIS)
    assert w.true.relation("A", "B") == "none"
    assert w.true.relations == {}


def test_request_accept_forms_relation_and_clears_request():
    w = new_world(C)
    w = apply_round(w, {"A": [act("request_alliance", "B")]}, VIS)
    assert w.true.has_request("A", "B", "alliance")
    assert w.true.relation("A", "B") == "none"
    w = apply_round(w, {"B": [act("accept_alliance", "A")]}, VIS)
    assert w.true.relation("A", "B") == "alliance"
    assert w.true.requests == []


def test_reject_clears_request_without_relation():
    w = apply_round(new_world(C), {"A": [act("request_treaty", "B")]}, VIS)
    w = apply_round(w, {"B": [act("reject_treaty", "A")]}, VIS)
    assert w.true.requests == [] and w.true.relation("A", "B") == "none"


def test_accepted_peace_ends_war_but_declaration_is_remembered():
    w = apply_round(new_world(C), {"A": [act("declare_war", "B")]}, VIS)
    assert w.true.relation("A", "B") == "war"
    w = apply_round(w, {"B": [act("present_peace", "A")]}, VIS)
    w = apply_round(w, {"A": [act("accept_peace", "B")]}, VIS)
    assert w.true.relation("A", "B") == "peace"
    assert w.true.declarations == [("A", "B")]  # history keeps who declared on whom


def test_same_round_war_beats_accepted_peace():
    # Simultaneous moves: B accepts A's peace offer while A declares war again -> war.
    b = empty_board(C)
    b.add_request("A", "B", "peace")
    w = apply_round(
        new_world(C, b), {"A": [act("declare_war", "B")], "B": [act("accept_peace", "A")]}, VIS
    )
    assert w.true.relation("A", "B") == "war"


def test_declarations_are_directed_and_unique():
    w = apply_round(
        new_world(C), {"A": [act("declare_war", "B")], "B": [act("declare_war", "A")]}, VIS
    )
    assert sorted(w.true.declarations) == [("A", "B"), ("B", "A")]
    assert w.true.edges("war") == [("A", "B")]


# --- beliefs -----------------------------------------------------------------------------------


def test_observers_public_and_private():
    assert observers("A", act("declare_war", "B"), C, VIS) == C
    assert observers("A", act("request_alliance", "B"), C, VIS) == ["A", "B"]
    assert observers("A", act("request_alliance", "B"), C, {"request_alliance": "public"}) == C


def test_private_action_seen_only_by_actor_and_target():
    w = apply_round(new_world(C), {"A": [act("request_alliance", "B")]}, VIS)
    w = apply_round(w, {"B": [act("accept_alliance", "A")]}, VIS)
    assert w.true.relation("A", "B") == "alliance"
    assert w.beliefs["A"].relation("A", "B") == "alliance"
    assert w.beliefs["B"].relation("A", "B") == "alliance"
    assert w.beliefs["C"].relation("A", "B") == "none"  # C holds a different belief
    assert w.beliefs["D"].relation("A", "B") == "none"
    assert not w.beliefs["C"].requests


def test_publish_makes_a_private_alliance_common_knowledge():
    w = apply_round(new_world(C), {"A": [act("request_alliance", "B")]}, VIS)
    w = apply_round(w, {"B": [act("accept_alliance", "A")]}, VIS)
    w = apply_round(w, {"A": [act("publish_alliance", "B")]}, VIS)
    assert all(w.beliefs[c].relation("A", "B") == "alliance" for c in C)


def test_public_mobilization_reaches_every_stick():
    w = apply_round(new_world(C), {"C": [act("general_mobilization")]}, VIS)
    assert all(w.beliefs[c].is_mobilized("C") for c in C)
    assert w.true.mobilized == ["C"]


def test_private_mobilization_when_the_scenario_says_so():
    vis = {**VIS, "general_mobilization": "private"}
    w = apply_round(new_world(C), {"C": [act("general_mobilization")]}, vis)
    assert w.beliefs["C"].is_mobilized("C") and not w.beliefs["A"].is_mobilized("C")
    assert w.true.is_mobilized("C")


def test_describe_board_shows_only_the_viewers_beliefs():
    w = apply_round(new_world(C), {"A": [act("request_alliance", "B")]}, VIS)
    assert "A asks you for alliance" in describe_board(w.beliefs["B"], "B")
    assert "asks you" not in describe_board(w.beliefs["C"], "C")


# --- round bookkeeping and stopping ----------------------------------------------------------


def test_history_and_unchanged_counter():
    w = new_world(C)
    assert [h.round for h in w.history] == [0]
    w = apply_round(w, {"A": [act("general_mobilization")]}, VIS)
    assert w.round == 1 and w.unchanged == 0
    w = apply_round(w, {"A": [act("wait")]}, VIS)
    w = apply_round(w, {"B": [act("send_message", "A", "hi")]}, VIS)
    assert w.unchanged == 2
    assert [h.round for h in w.history] == [0, 1, 2, 3]
    assert w.history[1].board.mobilized == ["A"] and w.history[0].board.mobilized == []
    assert should_stop(w, max_rounds=10, unchanged_rounds=2)
    assert should_stop(w, max_rounds=10, unchanged_rounds=3) is None
    assert should_stop(w, max_rounds=10, unchanged_rounds=0) is None
    assert "round limit" in should_stop(w, max_rounds=3, unchanged_rounds=0)


def test_pending_requests_do_not_count_as_change():
    w = apply_round(new_world(C), {"A": [act("request_alliance", "B")]}, VIS)
    assert w.unchanged == 1


def test_apply_round_does_not_mutate_its_input():
    w0 = new_world(C)
    apply_round(w0, {"A": [act("declare_war", "B")]}, VIS)
    assert w0.true.relations == {} and w0.round == 0


def test_world_json_round_trip():
    w = apply_round(new_world(C), {"A": [act("declare_war", "B", "for honour")]}, VIS)
    again = Situation.model_validate(json.loads(w.model_dump_json()))
    assert again == w and again.true.relation("A", "B") == "war"


def test_renamed_world_rekeys_pairs():
    w = apply_round(new_world(C), {"A": [act("declare_war", "D")]}, VIS)
    names = {"A": "Zed", "B": "Yo", "C": "Xi", "D": "Ab"}
    r = w.renamed(lambda c: names.get(c, c))
    assert r.true.relation("Zed", "Ab") == "war"
    assert r.true.declarations == [("Zed", "Ab")]
    assert r.history[1].actions["Zed"][0].target == "Ab"


# --- schema ------------------------------------------------------------------------------------


def test_schema_is_flat_and_enumerated():
    schema = proposal_model(tuple(C), 2).model_json_schema()
    text = json.dumps(schema)
    assert "$defs" not in text and "$ref" not in text and "anyOf" not in text
    items = schema["properties"]["actions"]["items"]
    assert items["properties"]["target"]["enum"] == ["none", *C]
    assert "declare_war" in items["properties"]["type"]["enum"]
    assert schema["properties"]["actions"]["maxItems"] == 2


def test_schema_model_rejects_unknown_target_and_too_many():
    model = proposal_model(tuple(C), 2)
    model.model_validate({"actions": [{"type": "wait", "target": "none", "message": ""}]})
    with pytest.raises(ValueError):
        model.model_validate({"actions": [{"type": "wait", "target": "Q", "message": ""}]})
    with pytest.raises(ValueError):
        model.model_validate({"actions": [{"type": "wait", "target": "none", "message": ""}] * 3})


def test_parse_actions_accepts_the_usual_shapes():
    model = proposal_model(tuple(C), 2)
    m = model.model_validate({"actions": [{"type": "declare_war", "target": "B", "message": "x"}]})
    for raw in (m, m.model_dump(), m.model_dump()["actions"]):
        assert parse_actions(raw) == [act("declare_war", "B", "x")]
    with pytest.raises(ValueError):
        parse_actions("declare war on B")
