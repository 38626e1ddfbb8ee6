"""What a game with secret roles, hidden scores and elimination needs from the public API (a
held-out "cabinet with a mole" needed workarounds for each): a setup event every memory policy
keeps, scores a seat sees only its own of, a result that writes the world and ends the game,
and turns taken by the seats the cast keeps (an eliminated seat is not asked)."""

from __future__ import annotations

from typing import Any

from tests.unit.test_world_pieces import duel
from wargraph import GameContext, Table, World
from wargraph.kernel.views import view_for
from wargraph.worlds import ORDER, Cast, Orders, Outcome, Result, ScoreCast, in_turn


class Survivors(Cast):
    """The seats not yet eliminated (`world["out"]`) act."""

    def actors(self, table: Table, phase: str) -> list[str]:
        out = set((table.state.get("world") or {}).get("out") or [])
        return [a for a in super().actors(table, phase) if a not in out]


def table_of(sc: Any, world: dict[str, Any], cast: Cast | None = None, **state: Any) -> Table:
    base = {"round": 1, "events": [], "world": world, "phase": "order"}
    w = World("duel", cast=cast) if cast else World("duel")
    return Table(sc, GameContext(model="scripted"), {**base, **state}, w)  # type: ignore[typeddict-item]


def test_a_setup_event_is_kept_by_every_memory_policy_in_later_rounds():
    sc = duel(players={"ann": {}, "bob": {}, "cat": {}})
    t = table_of(sc, {}, round=1, phase="deal")
    secret = t.setup_event(
        kind="role", author="scenario", text="You are the mole.", audience=["bob"]
    )
    plain = t.event(kind="note", author="scenario", text="round one", audience=["bob"])
    assert secret["round"] == 0 and secret["id"] != plain["id"]
    later = {"round": 3, "events": [secret, plain], "world": {}, "phase": "order"}
    for policy in ("full", "last_round", "diary"):
        seen = view_for(later, "bob", sc, policy=policy)  # type: ignore[arg-type]
        assert secret in seen, policy
        assert view_for(later, "ann", sc, policy=policy) == []  # someone else's secret
    assert plain not in view_for(later, "bob", sc, policy="last_round")  # round 1: forgotten


def test_turns_go_round_the_seats_the_cast_keeps():
    sc = duel(players={"ann": {}, "bob": {}, "cat": {}})
    kept = [in_turn(table_of(sc, {"out": ["bob"]}, Survivors(), round=r)) for r in (1, 2, 3)]
    assert kept == ["ann", "cat", "ann"]  # bob, eliminated, never holds the pen
    t = table_of(sc, {"out": ["bob"]}, Survivors(), round=2)
    assert Orders(turn="in_turn").actors(t) == ["cat"]
    assert Orders(turn="others").actors(t) == ["ann"]  # not the eliminated bob
    assert Survivors().actors(t, ORDER) == ["ann", "cat"]


class Vote(Outcome):
    def outcome(self, table: Table, proposals: dict[str, Any]) -> Result:
        return Result(
            "the cabinet expels bob",
            {"expelled": "bob"},
            points={"ann": 1.0, "cat": 2.0},
            world={"out": ["bob"]},
            ends=True,
        )


def test_a_secret_result_writes_the_world_ends_the_game_and_tells_each_its_own_score():
    sc = duel(players={"ann": {}, "bob": {}, "cat": {}})
    t = table_of(sc, {"scores": {"ann": 0.0, "bob": 0.0, "cat": 0.0}}, phase="adjudicate")
    out = Vote(template="blotto_narrate_question", secret=True).resolve(t, {}, None)
    assert out["done"] is True and out["world"]["out"] == ["bob"]
    assert out["world"]["scores"] == {"ann": 1.0, "bob": 0.0, "cat": 2.0}
    result, *own, told = out["events"]
    assert result["audience"] == [sc.control.name]  # the table of scores: the control's
    assert {e["audience"][0]: e["text"] for e in own} == {
        "ann": "Your points this round: 1; your score: 1.",
        "bob": "Your points this round: 0; your score: 0.",
        "cat": "Your points this round: 2; your score: 2.",
    }
    assert told["audience"] == ["*"] and told["kind"] == "narration"
    after = table_of(sc, out["world"])
    assert ScoreCast(secret=True).private_view(after, "cat") == "Your score so far: 2."
    assert "ann" not in ScoreCast(secret=True).private_view(after, "cat")
    public = Vote(template="blotto_narrate_question").resolve(t, {}, None)
    assert public["events"][0]["audience"] == ["*"] and len(public["events"]) == 2
