"""The generic pieces of scored and allocation games (`wargraph.worlds`): a family's section and
the constraints its scenario class declares, the allocation rules and parts, the turn of a
turn-based round, the scoreboard and a result the control narrates, and their view panels."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field, ValidationError

import wargraph.nodes.schemas  # noqa: F401  (registers the built-in schemas)
from wargraph import GameContext, Scenario, Section, Table, World
from wargraph.kernel.scenario import ScenarioError
from wargraph.prompts import family_prompts
from wargraph.seats.schemas import flat_json_schema, schema_for
from wargraph.view.allocation_panels import allocation_panels, seat_keys_panel
from wargraph.worlds import (
    ALLOCATION,
    Allocate,
    BudgetCheck,
    FinalScore,
    Keys,
    Orders,
    Outcome,
    Replies,
    Result,
    Rules,
    ScoreCast,
    Terms,
    add_points,
    check_allocation,
    contest,
    even_split,
    in_turn,
    leaders,
    played,
    render_contest,
    scale_down,
    score_measures,
    spread,
    standing,
)


class Duel(Section):
    keys: Annotated[dict[str, float], Keys("hill")] = Field(min_length=2)
    budget: int = 6


class DuelScenario(Scenario):
    player_count = (2, 3)
    allows_teams = allows_flow = False
    family: str = "duel"
    duel: Duel


PLAYERS = {"ann": {}, "bob": {}}


def duel(**over: Any) -> DuelScenario:
    data = {"title": "t", "setting": "s", "players": PLAYERS, "duel": {"keys": ["x", "y"]}}
    return DuelScenario.model_validate({**data, **over})


def terms(table: Table) -> Terms:
    d = Duel.of(table)
    return Terms(list(d.keys), d.budget, revisions=1, values={"hills": "x, y"}, noun="hill")


def table(sc: Scenario, world: dict[str, Any] | None = None, **state: Any) -> Table:
    base = {"round": 1, "events": [], "world": world or {}, "phase": "order"}
    return Table(sc, GameContext(model="scripted"), {**base, **state}, World("duel"))  # type: ignore[typeddict-item]


# --- the scenario: a section, declared constraints, keys ------------------------------------------


def test_a_section_is_found_by_its_class_and_refuses_unknown_keys():
    sc = duel()
    assert Duel.of(sc) is sc.duel and Duel.of(table(sc)) is sc.duel
    assert sc.duel.keys == {"x": 1, "y": 1}  # a list of names: one point each
    with pytest.raises(ScenarioError, match="has no Duel section"):
        Duel.of(Scenario(title="t", setting="s", players=PLAYERS))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="extra"):
        duel(duel={"keys": ["x", "y"], "bugdet": 3})


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"players": {"ann": {}}}, "players: Duel needs 2 to 3 sides (got 1)"),
        ({"teams": {"t": {"members": ["ann", "bob"], "leader": "ann"}}}, "teams: in Duel every"),
        ({"flow": {"phases": ["order"]}}, "flow: a Duel game has its own phases"),
        ({"duel": {"keys": ["x", "x"]}}, "a hill is named twice"),
        ({"duel": {"keys": ["x", "Big Hill"]}}, "hill 'Big Hill': use a short lower-case name"),
        ({"duel": {"keys": ["x", "json"]}}, "hill 'json'"),  # a pydantic name
        ({"duel": {"keys": {"x": 1, "y": 0}}}, "hill 'y': worth 0"),
        ({"duel": {"keys": ["x"]}}, "at least 2"),
    ],
)
def test_declared_constraints_and_keys_refuse_with_a_message(over, message):
    with pytest.raises(ValidationError) as err:
        duel(**over)
    assert message in str(err.value)


def test_an_exact_count_is_said_as_such():
    class Three(DuelScenario):
        player_count = (3, 3)

    with pytest.raises(ValidationError, match="needs exactly 3 sides"):
        Three.model_validate(duel().model_dump())
    assert duel(players={**PLAYERS, "cat": {}}).players.keys() == {"ann", "bob", "cat"}


# --- the allocation rules ----------------------------------------------------------------------


def test_check_allocation_names_each_problem_in_the_games_words():
    kept, reasons = check_allocation({"x": 4, "y": 2.5, "z": 1}, ["x", "y"], 3, noun="hill")
    assert reasons == [
        "unknown hill(s) z (hills: x, y)",
        "y: 2.5 is not a whole number of units",
        "over budget: 4 units allocated, the budget is 3",
    ]
    assert kept == {"x": 3, "y": 0}
    assert check_allocation({"x": 1, "y": 1}, ["x", "y"], 3)[1] == []  # at most the budget
    _, exact = check_allocation({"x": 1, "y": 1}, ["x", "y"], 3, exact=True)
    assert exact == ["under budget: 2 units allocated, allocate all 3"]


def test_spread_is_proportional_exact_and_ties_go_in_key_order():
    assert spread({"a": 1, "b": 1, "c": 2}, 10) == {"a": 3, "b": 2, "c": 5}
    assert spread({"a": 1, "b": 0}, 3) == {"a": 3, "b": 0}
    assert spread({"a": 0, "b": 0}, 0) == {"a": 0, "b": 0}
    assert scale_down({"a": 5, "b": 15}, 10) == {"a": 3, "b": 7}
    assert scale_down({"a": 1, "b": 2}, 10) == {"a": 1, "b": 2}  # within: as it is
    assert even_split(["a", "b", "c"], 7) == {"a": 3, "b": 2, "c": 2}


def test_a_contest_gives_each_key_to_the_most_units_and_ties_share():
    allocations = {"ann": {"x": 3, "y": 1}, "bob": {"x": 1, "y": 1}}
    winners, points = contest(allocations, {"x": 2, "y": 1})
    assert winners == {"x": ["ann"], "y": ["ann", "bob"]} and points == {"ann": 2.5, "bob": 0.5}
    text = render_contest(allocations, winners)
    assert text == "ann: x 3, y 1\nbob: x 1, y 1\nx: ann\ny: tied by ann and bob"


def test_the_built_in_schema_is_flat_and_leaves_the_rules_to_the_secretary():
    schema = schema_for({"schema": ALLOCATION, "schema_args": {"keys": ["x", "y"], "budget": 4}})  # type: ignore[typeddict-item]
    js = flat_json_schema(schema)
    assert list(js["properties"]) == ["x", "y"] and js["properties"]["x"]["maximum"] == 4
    assert schema.model_validate({"x": -3, "y": 9}).model_dump() == {"x": -3, "y": 9}


# --- the allocation parts ------------------------------------------------------------------------


def test_allocate_asks_with_the_terms_and_records_to_the_actor_or_everyone():
    sc, part = duel(), Allocate(task="allocate", template="summarize_question", terms=terms)
    t = table(sc)
    q = part.question(t, "ann")
    assert q.schema == ALLOCATION and q.schema_args == {"keys": ["x", "y"], "budget": 6}
    assert q.fallback == {"x": 3, "y": 3} and q.facts is None  # facts: a bot's only
    (private,) = part.events(t, "ann", {"x": 6, "y": 0}, "model")
    assert private["audience"] == ["ann", "control"] and private["text"] == "Allocation: x 6, y 0"
    (public,) = Allocate(kind="offer", public=True, terms=terms).events(t, "ann", {"x": 6}, "m")
    assert public["audience"] == ["*"] and public["data"]["offer"] == {"x": 6}
    bot = Table(sc, GameContext(model="scripted", role_models={"bob": "bot:even"}), t.state)
    assert part.question(bot, "bob").facts == {"side": "bob", "budget": 6, "last": {}}


def test_budget_check_refuses_revises_and_scales_and_skips_other_mounts_answers():
    sc, check = duel(), BudgetCheck(terms=terms)
    t = table(sc)
    assert check.max_revisions(t) == 1
    refused = check.check(t, "ann", {"x": 9, "y": 3})
    assert refused.reasons == ["over budget: 12 units allocated, the budget is 6"]
    assert refused.accepted == {"x": 5, "y": 1}
    assert check.give_up(t, "ann", {}, refused)[1].endswith("; played as x 5, y 1")
    replied = table(sc, {"placed_by": {"bob": "respond"}})
    two = World("duel", orders={"propose": Allocate(terms=terms), "respond": Replies(terms=terms)})
    replied.world = two
    assert check.check(replied, "bob", True).ok  # a reply: not an allocation
    assert not check.check(replied, "ann", True).ok  # placed by no named mount: checked
    assert played(t, {"ann": {"x": 9, "y": 3}}, terms) == {
        "ann": {"x": 5, "y": 1},
        "bob": {"x": 0, "y": 0},
    }


def test_the_turn_of_a_turn_based_round():
    sc = duel(players={**PLAYERS, "cat": {}})
    assert [in_turn(table(sc, round=r)) for r in (1, 2, 3, 4)] == ["ann", "bob", "cat", "ann"]
    assert Orders(turn="in_turn").actors(table(sc, round=2)) == ["bob"]
    assert Orders(turn="others").actors(table(sc, round=2)) == ["ann", "cat"]
    with pytest.raises(ValueError, match="Orders.turn: 'mine'"):
        Orders(turn="mine")


def test_replies_answer_the_offer_in_turn():
    sc, part = duel(), Replies(task="reply", template="summarize_question", schema="x", terms=terms)
    t = table(sc, {"proposals": {"ann": {"x": 4, "y": 2}}})
    assert part.actors(t) == ["bob"]
    assert part.question(t, "bob").fallback == {"accept": False}
    assert part.proposal(t, "bob", {"accept": True}) is True
    (e,) = part.events(t, "bob", False, "model")
    assert e["text"] == "bob refuses" and e["audience"] == ["*"]


# --- the scoreboard and a result the control narrates -------------------------------------------


def test_scores_standing_leaders():
    now = add_points({"ann": 1.0, "bob": 0.0}, {"bob": 1 / 3, "cat": 1.0})
    assert now == {"ann": 1.0, "bob": 0.333333, "cat": 1.0}
    assert standing(now) == "ann 1, bob 0.333333, cat 1" and leaders(now) == ["ann", "cat"]
    assert leaders({}) == []


class Coin(Outcome):
    def outcome(self, table: Table, proposals: dict[str, Any]) -> Result:
        return Result("ann wins the toss", {"toss": "ann"}, "The coin falls.", {"ann": 1.0})


def test_rules_outcome_and_final_score_keep_the_scoreboard():
    sc = duel()
    opened = Rules(template="summarize_question").open(table(sc, events=[]))
    assert opened["world"] == {"scores": {"ann": 0.0, "bob": 0.0}}
    assert opened["events"][0]["round"] == 0 and opened["events"][0]["kind"] == "rules"
    assert "scores" not in Rules("summarize_question", scored=False).open(table(sc, events=[]))
    with pytest.raises(ValueError, match="Rules: name the template"):
        Rules().open(table(sc, events=[]))
    t = table(sc, {"scores": {"ann": 2.0, "bob": 0.0}}, phase="adjudicate")
    assert ScoreCast().private_view(t, "bob") == "Score so far: ann 2, bob 0."
    assert ScoreCast().private_view(table(sc), "bob") == ""
    coin = Coin(template="blotto_narrate_question")
    with family_prompts("blotto"):  # a template with the `result`
        asked = coin.question(t, {})
    assert "> ann wins the toss\n> points this round: ann 1" in asked.question
    assert coin.question(t, {}).fallback == {"narrative": "The coin falls."}
    out = coin.resolve(t, {}, None)
    result, told = out["events"]
    assert result["text"] == "ann wins the toss\npoints this round: ann 1\nscore: ann 3, bob 0"
    assert result["data"] == {
        "toss": "ann",
        "points": {"ann": 1.0},
        "scores": out["world"]["scores"],
    }
    assert told["text"] == "The coin falls." and told["data"] == {"source": "fallback"}
    narrated = coin.resolve(t, {}, {"value": {"narrative": "Heads."}, "source": "model"})
    assert narrated["events"][1]["text"] == "Heads."
    (final,) = FinalScore().debrief(t)["events"]
    assert final["text"] == "Final score: ann 2, bob 0; ann wins."
    tie = table(sc, {"scores": {"ann": 1.0, "bob": 1.0}}, phase="analyze")
    assert FinalScore().debrief(tie)["events"][0]["data"]["winners"] == ["ann", "bob"]


def test_score_measures_read_the_last_result_and_the_verdicts():
    events = [
        {"kind": "result", "data": {"scores": {"ann": 1.0, "bob": 0.0}}},
        {"kind": "verdict", "data": {"status": "scaled", "revisions": 1}},
        {"kind": "verdict", "data": {"status": "accepted", "revisions": 1}},
        {"kind": "result", "data": {"scores": {"ann": 1.0, "bob": 2.0}}},
    ]
    measures = score_measures({"events": events}, give_up_status="scaled")
    assert measures == {
        "rounds": 2,
        "scores": {"ann": 1.0, "bob": 2.0},
        "winners": ["bob"],
        "revisions": 2,
        "scaled": 1,
    }
    assert score_measures({"events": []}) == {"rounds": 0, "scores": {}, "winners": []}


# --- the view ------------------------------------------------------------------------------------


class _Lines:
    def ids(self, text: str) -> list[int]:
        return [0]


def test_allocation_panels_and_a_seats_keys():
    result = {
        "kind": "result",
        "round": 1,
        "phase": "adjudicate",
        "audience": ["*"],
        "data": {
            "allocations": {"ann": {"x": 4, "y": 2}, "bob": {"x": 1, "y": 2}},
            "winners": {"x": ["ann"], "y": ["ann", "bob"]},
            "points": {"ann": 1.5, "bob": 0.5},
            "scores": {"ann": 1.5, "bob": 0.5},
        },
    }
    out = allocation_panels("Hills", noun="hill")(
        {"events": [result]}, [(1, "adjudicate")], _Lines()
    )  # type: ignore[arg-type]
    (panel,) = out[0]
    assert panel["columns"] == ["hill", "ann", "bob", "won by"]
    assert panel["rows"] == [
        ["x", "4", "1", "ann"],
        ["y", "2", "2", "ann, bob"],
        ["points", "1.5", "0.5", ""],
        ["score", "1.5", "0.5", ""],
    ]
    sc = duel()
    mine = seat_keys_panel(sc, {"events": [result]}, "bob", sc.duel.keys, title="Hills", note="6.")
    assert mine["rows"] == [["x", "1", "ann", "1"], ["y", "1", "ann and bob (tied)", "2"]]
    assert mine["note"] == "6. Score: ann 1.5, bob 0.5."
    hidden = {**result, "audience": ["ann"]}
    assert seat_keys_panel(sc, {"events": [hidden]}, "bob", sc.duel.keys, title="H")["rows"] == [
        ["x", "1"],
        ["y", "1"],
    ]
