"""The secretary's rules: each one has a failing and a passing case; then the amend step."""

from __future__ import annotations

import pytest

from wargraph.graphs.waragent.rules import Action, Board, amend, empty_board, validate

C = ["A", "B", "C", "D"]


def act(type_: str, target: str = "none", message: str = "") -> Action:
    return Action(type=type_, target=target, message=message)


def board(**rel: str) -> Board:
    """board(AB="alliance", BC="war") with single-letter pair names."""
    b = empty_board(C)
    for pair, kind in rel.items():
        b.add(pair[0], pair[1], kind)
    return b


def reasons(actions: list[Action], b: Board | None = None, actor: str = "A", max_actions: int = 3):
    return validate(actor, actions, b or empty_board(C), C, max_actions=max_actions)


# Each case: (description, actions, board, substring of the expected reason) -> fails;
# the paired passing case changes exactly the thing the rule is about.
FAILING = [
    ("unknown action", [act("nuke", "B")], None, "unknown action"),
    ("unknown target", [act("declare_war", "Z")], None, "unknown target"),
    ("self target", [act("request_alliance", "A")], None, "yourself"),
    ("message needs text", [act("send_message", "B", "  ")], None, "message text"),
    ("already at war", [act("declare_war", "B")], board(AB="war"), "already at war"),
    ("war on ally without betrayal", [act("declare_war", "B")], board(AB="alliance"), "your ally"),
    ("accept without request", [act("accept_alliance", "B")], None, "has not asked you"),
    ("reject without request", [act("reject_treaty", "B")], None, "has not asked you"),
    ("accept peace without offer", [act("accept_peace", "B")], board(AB="war"), "has not asked"),
    ("betray without relation", [act("betray_alliance", "B")], None, "no alliance"),
    (
        "betray treaty without relation",
        [act("betray_treaty", "B")],
        board(AB="alliance"),
        "no treaty",
    ),
    ("publish without relation", [act("publish_treaty", "B")], None, "no treaty"),
    ("mobilize twice (board)", [act("general_mobilization")], None, "already mobilized"),
    ("mobilize twice (same set)", [act("general_mobilization")] * 2, None, "appears twice"),
    (
        "request existing alliance",
        [act("request_alliance", "B")],
        board(AB="alliance"),
        "already have",
    ),
    (
        "request alliance from enemy",
        [act("request_alliance", "B")],
        board(AB="war"),
        "present peace",
    ),
    ("peace without war", [act("present_peace", "B")], None, "not at war"),
    ("duplicate war", [act("declare_war", "B"), act("declare_war", "B")], None, "twice"),
]


@pytest.mark.parametrize(("name", "actions", "b", "expected"), FAILING, ids=[f[0] for f in FAILING])
def test_rule_fails(name, actions, b, expected):
    if name == "mobilize twice (board)":
        b = empty_board(C)
        b.mobilize("A")
    v = reasons(actions, b)
    assert not v.ok
    assert any(expected in r for rs in v.action_reasons for r in rs), v.action_reasons


def _requested(sender: str, receiver: str, kind: str, base: Board | None = None) -> Board:
    b = base or empty_board(C)
    b.add_request(sender, receiver, kind)
    return b


PASSING = [
    ("known action and target", [act("declare_war", "B")], None),
    ("message with text", [act("send_message", "B", "hello")], None),
    ("war on a non-ally", [act("declare_war", "B")], board(AC="alliance")),
    (
        "war on ally after betrayal",
        [act("betray_alliance", "B"), act("declare_war", "B")],
        board(AB="alliance"),
    ),
    (
        "betrayal may come after the war",
        [act("declare_war", "B"), act("betray_alliance", "B")],
        board(AB="alliance"),
    ),
    ("accept a real request", [act("accept_alliance", "B")], _requested("B", "A", "alliance")),
    ("reject a real request", [act("reject_treaty", "B")], _requested("B", "A", "treaty")),
    (
        "accept a real peace offer",
        [act("accept_peace", "B")],
        _requested("B", "A", "peace", board(AB="war")),
    ),
    ("betray a real alliance", [act("betray_alliance", "B")], board(AB="alliance")),
    ("publish a real treaty", [act("publish_treaty", "B")], board(AB="treaty")),
    ("mobilize once", [act("general_mobilization")], None),
    ("request a new alliance", [act("request_alliance", "B")], None),
    ("peace with an enemy", [act("present_peace", "B")], board(AB="war")),
    ("two messages", [act("send_message", "B", "x"), act("send_message", "B", "y")], None),
    ("wait ignores its target", [act("wait", "B")], None),
]


@pytest.mark.parametrize(("name", "actions", "b"), PASSING, ids=[p[0] for p in PASSING])
def test_rule_passes(name, actions, b):
    v = reasons(actions, b)
    assert v.ok, v.text(actions)


def test_request_direction_matters():
    # A asked B: B may accept, A may not accept its own request.
    b = _requested("A", "B", "alliance")
    assert validate("B", [act("accept_alliance", "A")], b, C).ok
    assert not validate("A", [act("accept_alliance", "B")], b, C).ok


def test_request_twice_fails_until_answered():
    b = _requested("A", "B", "alliance")
    assert not reasons([act("request_alliance", "B")], b).ok
    assert reasons([act("request_alliance", "C")], b).ok


def test_too_many_actions_is_a_general_reason():
    acts = [act("send_message", t, "hi") for t in "BCD"]
    assert reasons(acts, max_actions=3).ok
    v = reasons(acts, max_actions=2)
    assert not v.ok and "at most 2" in v.general[0]


# --- the ally-at-war rule: join, betray, or be told --------------------------------------


def test_ally_at_war_unanswered_fails():
    b = board(AB="alliance", BC="war")
    v = reasons([act("wait")], b)
    assert not v.ok
    assert "your ally B is at war with C" in v.general[0]


@pytest.mark.parametrize(
    "answer",
    [[act("declare_war", "C")], [act("betray_alliance", "B")]],
    ids=["join", "betray"],
)
def test_ally_at_war_answered_passes(answer):
    assert reasons(answer, board(AB="alliance", BC="war")).ok


def test_ally_at_war_already_fighting_passes():
    assert reasons([act("wait")], board(AB="alliance", BC="war", AC="war")).ok


def test_ally_at_war_with_you_is_not_an_obligation():
    # B is at war with A itself (and still formally allied): no "join" is asked of A.
    assert reasons([act("wait")], board(AB="alliance", BD="war", AD="war")).ok


# --- the amend step --------------------------------------------------------------------------


def test_amend_drops_invalid_and_keeps_valid():
    b = board(AB="alliance")
    proposal = [act("accept_alliance", "C"), act("request_treaty", "D"), act("declare_war", "A")]
    kept, notes = amend("A", proposal, b, C)
    assert [a.short() for a in kept] == ["request_treaty -> D"]
    assert len(notes) == 2 and all(n.startswith("dropped") for n in notes)
    assert validate("A", kept, b, C).ok


def test_amend_repeats_until_stable():
    # The betrayal is invalid (no alliance with C), dropping nothing else; but here the war on
    # ally B relies on a betrayal of B that is a duplicate: the second copy goes, the war stays.
    b = board(AB="alliance")
    proposal = [act("betray_alliance", "B"), act("betray_alliance", "B"), act("declare_war", "B")]
    kept, _ = amend("A", proposal, b, C)
    assert [a.type for a in kept] == ["betray_alliance", "declare_war"]
    assert validate("A", kept, b, C).ok


def test_amend_empty_becomes_wait():
    kept, notes = amend("A", [act("betray_peace", "B")], empty_board(C), C)
    assert [a.type for a in kept] == ["wait"]
    assert notes


def test_amend_truncates_to_limit():
    acts = [act("send_message", t, "hi") for t in "BCD"]
    kept, notes = amend("A", acts, empty_board(C), C, max_actions=2)
    assert len(kept) == 2 and "over the limit" in notes[-1]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("waive", ["wait"]),
        ("join", ["wait", "declare_war -> C"]),
        ("betray", ["wait", "betray_alliance -> B"]),
    ],
)
def test_amend_ally_at_war_policy(policy, expected):
    b = board(AB="alliance", BC="war")
    kept, notes = amend("A", [act("wait")], b, C, ally_at_war=policy)
    assert [a.short() for a in kept] == expected
    assert any("B" in n for n in notes)
    if policy != "waive":
        assert validate("A", kept, b, C).ok


def test_amend_join_never_declares_war_on_an_unbetrayed_ally():
    # B and C are both allies of A and at war with each other: A cannot join one side
    # without first breaking with the other, so the amended set must pass every rule.
    b = board(AB="alliance", AC="alliance", BC="war")
    kept, notes = amend("A", [act("wait")], b, C, ally_at_war="join")
    assert validate("A", kept, b, C).ok, notes
    wars = {a.target for a in kept if a.type == "declare_war"}
    betrayed = {a.target for a in kept if a.type == "betray_alliance"}
    assert wars <= betrayed and betrayed
