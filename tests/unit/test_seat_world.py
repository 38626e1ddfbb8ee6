"""What a person's seat page shows of the world (`Family.seat_world`) and how a Diplomacy unit's
legal orders read as choices: only what the seat may know (a country's own beliefs, results it
has seen), every legal order in words with its notation kept, a hook's failure as one line."""

from __future__ import annotations

import pytest

from wargraph.graphs.diplomacy.engine import new_game, position
from wargraph.graphs.diplomacy.order_choices import GROUPS, choices, key_label, order_words
from wargraph.graphs.diplomacy.orders import legal_orders_at
from wargraph.graphs.diplomacy.schemas import orders_text_schema
from wargraph.graphs.waragent.board import empty_board
from wargraph.kernel.families import attribute
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.state import EVERYONE
from wargraph.seats.deciders import parse_answer
from wargraph.seats.schemas import flat_json_schema
from wargraph.server.seat_world import world_of

NAMES = {"BUR": "Burgundy", "MAR": "Marseilles", "SPA/SC": "Spain (South Coast)", "LON": "London"}


@pytest.mark.parametrize(
    ("order", "words"),
    [
        ("A PAR H", "Hold"),
        ("A PAR - BUR", "Move to Burgundy (BUR)"),
        ("A BRE - LON VIA", "Move to London (LON) by convoy"),
        ("F MAO - SPA/SC", "Move to Spain (South Coast) (SPA/SC)"),
        ("A PAR S A MAR - BUR", "Support A MAR into Burgundy (BUR)"),
        ("A PAR S F BRE", "Support F BRE to hold"),
        ("F ENG C A BRE - LON", "Convoy A BRE to London (LON)"),
        ("A BUR R MAR", "Retreat to Marseilles (MAR)"),
        ("A BUR D", "Disband"),
        ("A MAR B", "Build an army in Marseilles (MAR)"),
        ("F BRE B", "Build a fleet in BRE"),  # a province the names do not know: as written
        ("WAIVE", "Waive this build"),
        ("A PAR X Y", "A PAR X Y"),  # a shape it does not know: as written
    ],
)
def test_an_order_in_words(order, words):
    assert order_words(order, NAMES) == words


def test_a_units_choices_are_its_legal_orders_hold_first_in_groups():
    legal = legal_orders_at(position(new_game(game_id="t")), "FRANCE")
    for unit, orders in legal.items():
        got = choices(unit, orders)
        assert sorted(c["value"] for c in got) == sorted(orders), "a legal order went missing"
        assert got[0] == {"value": f"{unit} H", "label": "Hold", "group": "Hold"}
        ranks = [GROUPS.index(c["group"]) for c in got]
        assert ranks == sorted(ranks)
    assert key_label("A PAR") == "A PAR · army in Paris (PAR)"
    assert key_label("build_2") == "Build 2"


def test_a_persons_orders_schema_lists_the_choices_and_still_takes_free_text():
    legal = {"A PAR": ["A PAR H", "A PAR - BUR"], "build_1": ["A MAR B", "WAIVE"]}
    model = orders_text_schema({"legal": legal, "preset": {"A PAR": "A PAR H", "build_1": "WAIVE"}})
    props = flat_json_schema(model)["properties"]
    assert [c["value"] for c in props["A PAR"]["x-choices"]] == ["A PAR H", "A PAR - BUR"]
    assert props["A PAR"]["x-preset"] == "A PAR H" and props["build_1"]["x-preset"] == "WAIVE"
    # what a person typed in the "Other" line is still an answer (the secretary reads it)
    assert parse_answer({"A PAR": "- bur"}, model).model_dump()["A PAR"] == "- bur"
    # a preset that is no legal order is not offered
    odd = orders_text_schema({"legal": legal, "preset": {"A PAR": "A PAR - MOS"}})
    assert "x-preset" not in flat_json_schema(odd)["properties"]["A PAR"]


def test_the_diplomacy_board_is_the_map_and_every_powers_units():
    saved = new_game(game_id="t")
    hook = attribute("diplomacy", "seat_world")
    first = hook(None, {"world": {"diplomacy": saved}}, "FRANCE")
    assert [p["kind"] for p in first] == ["svg", "table"]
    assert first[0]["svg"].lstrip().startswith("<?xml") and "S1901M" in first[0]["title"]
    rows = {r[0]: r for r in first[1]["rows"]}
    assert rows["FRANCE (you)"][1:3] == ["3", "3"] and "A PAR (Paris)" in rows["FRANCE (you)"][3]
    assert "F STP/SC (St Petersburg (South Coast))" in rows["RUSSIA"][3]
    assert first[1]["colors"]["FRANCE"] == "royalblue"
    assert hook(None, {"world": {}}, "FRANCE") == []  # before the engine game exists
    over = hook(None, {"world": {"diplomacy": saved}, "done": True}, "FRANCE")
    assert over[0]["title"] == "The board: the end of the game (S1901M)"


def test_a_country_sees_its_own_board_not_the_true_one():
    true = empty_board(["A", "B", "C"])
    true.add("B", "C", "war")  # the truth: A does not know it
    belief = empty_board(["A", "B", "C"])
    belief.add("A", "B", "alliance")
    belief.mobilize("C")
    belief.add_request("C", "A", "peace")
    values = {
        "world": {
            "waragent": {
                "true": true.model_dump(mode="json"),
                "beliefs": {"A": belief.model_dump(mode="json")},
            }
        }
    }
    hook = attribute("waragent", "seat_world")
    (mine,) = hook(None, values, "A")
    rows = {r[0]: r for r in mine["rows"]}
    assert rows["B"][1] == "alliance" and rows["C"][2] == "yes"
    assert rows["C"][3] == "asks you for peace"
    assert "war" not in str(mine), "the true board leaked into a country's page"
    assert hook(None, values, "secretary") == []  # no country: no board


def test_a_blotto_side_sees_only_the_results_it_was_shown():
    sc = load_scenario("blotto")
    hook = attribute("blotto", "seat_world")
    (fronts,) = hook(sc, {"events": []}, "north")
    assert [r[:2] for r in fronts["rows"]] == [["west", "1"], ["centre", "1"], ["east", "2"]]
    assert "Budget: 10" in fronts["note"]
    shown = {
        "kind": "result",
        "round": 1,
        "audience": [EVERYONE],
        "data": {
            "winners": {"west": ["north"], "centre": ["south"], "east": ["north", "south"]},
            "allocations": {"north": {"west": 4, "centre": 1, "east": 5}},
            "scores": {"north": 2.0, "south": 2.0},
        },
    }
    hidden = {**shown, "round": 2, "audience": ["south"], "data": {"winners": {"west": ["x"]}}}
    (fronts,) = hook(sc, {"events": [shown, hidden]}, "north")
    rows = {r[0]: r for r in fronts["rows"]}
    assert fronts["columns"][2] == "taken in round 1"
    assert rows["east"][2:] == ["north and south (tied)", "5"]
    assert "Score: north 2, south 2." in fronts["note"]


def test_the_server_keeps_a_moments_panels_and_says_when_a_hook_fails(monkeypatch):
    sc = load_scenario("diplomacy")
    values = {"world": {"diplomacy": new_game(game_id="t")}, "round": 1, "events": []}
    key, panels = world_of("thread-1", "FRANCE", sc, values)
    assert world_of("thread-1", "FRANCE", sc, values) == (key, panels)  # kept, not redrawn
    assert world_of("thread-1", "FRANCE", load_scenario("azuristan_crimsonia"), values) is None

    def broken(scenario, values, seat):
        raise RuntimeError("no map today")

    import wargraph.kernel.families as families

    real = families.attribute
    monkeypatch.setattr(
        families,
        "attribute",
        lambda name, field: broken if field == "seat_world" else real(name, field),
    )
    key2, panels2 = world_of("thread-2", "FRANCE", sc, values)
    assert panels2 == [{"kind": "text", "title": "The board", "text": "not drawn: no map today"}]
    assert key2 != key
