"""Free orders (`diplomacy.orders: free`) on the real `diplomacy` engine: how written orders are
read, what the secretary refuses and why, the revision that keeps accepted orders, the counts a
game records and the invalid-order and re-ask rates its measures report, with a decider that
writes some illegal orders."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import wargraph.seats.agents as agents
from wargraph.evals.diplomacy import eval_diplomacy
from wargraph.graphs.diplomacy.free_orders import (
    check_free,
    free_counts,
    needs_revision,
    parse_orders,
    revised_orders,
)
from wargraph.graphs.diplomacy.measures import free_order_stats, game_measures
from wargraph.graphs.diplomacy.orders import legal_orders
from wargraph.graphs.diplomacy.rules import new_game
from wargraph.graphs.diplomacy.schemas import free_orders_schema
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.runs.records import load_record
from wargraph.runs.runner import play
from wargraph.seats.deciders import json_answer
from wargraph.seats.scripted import ScriptedDecider


@pytest.fixture(scope="module")
def start() -> dict[str, Any]:
    return new_game(game_id="free-orders-test")


# --- reading ------------------------------------------------------------------------------------


def test_orders_are_read_from_lines_lists_and_json_text() -> None:
    assert parse_orders(["A PAR - BUR", "F BRE - MAO"]) == ["A PAR - BUR", "F BRE - MAO"]
    text = "My orders:\n1. A PAR - BUR\n- F BRE S A PAR - PIC  # cover\n`A MAR H`.\n\n"
    assert parse_orders(text) == ["A PAR - BUR", "F BRE S A PAR - PIC", "A MAR H"]
    assert parse_orders(['["A PAR - BUR", "A MAR - SPA"]']) == ["A PAR - BUR", "A MAR - SPA"]
    assert parse_orders("A PAR - BUR; A MAR - SPA (to take Spain)") == [
        "A PAR - BUR",
        "A MAR - SPA",
    ]
    assert parse_orders([None, 3, ""]) == []
    assert parse_orders(None) == []


# --- the secretary on the real engine ---------------------------------------------------------


def test_legal_orders_written_freely_are_accepted_and_keyed_by_unit(start) -> None:
    legal = legal_orders(start, "FRANCE")
    accepted, refused = check_free(
        start, "FRANCE", ["a par - bur", "F BRE S A PAR - PIC", "A MAR H"], legal
    )
    assert refused == {}
    assert accepted == {"A PAR": "A PAR - BUR", "F BRE": "F BRE S A PAR - PIC", "A MAR": "A MAR H"}


def test_illegal_orders_are_refused_with_the_engines_reason(start) -> None:
    legal = legal_orders(start, "FRANCE")
    written = ["A PAR - BUR", "F BRE - MUN", "A MUN - BUR", "A PAR - PIC", "nonsense"]
    accepted, refused = check_free(start, "FRANCE", written, legal)
    assert accepted == {"A PAR": "A PAR - BUR"}
    assert set(refused) == {"F BRE - MUN", "A MUN - BUR", "A PAR - PIC", "nonsense", "A MAR"}
    assert refused["F BRE - MUN"][1].startswith("illegal order")
    assert "legal for F BRE" in refused["F BRE - MUN"][1]  # the reason helps the next try
    assert refused["A PAR - PIC"][1] == "A PAR already has an order this phase"
    # a unit whose written order was refused is not also counted as left without one
    assert "F BRE" not in refused
    assert refused["A MAR"] == ["", "no order given for A MAR"]


def test_adjustments_and_retreats_written_freely(start) -> None:
    """Builds fill the slots in the order written, one too many is refused; a required disband
    left out is a unit without an order; a dislodged unit's retreat is keyed by the unit."""
    from wargraph.graphs.diplomacy.rules import adjudicate, phase_info

    spring, _ = adjudicate(start, {"FRANCE": ["A MAR - SPA", "A PAR - BUR", "F BRE - MAO"]})
    fall, _ = adjudicate(spring, {"FRANCE": ["A SPA H", "A BUR H", "F MAO - POR"]})
    assert phase_info(fall).name == "W1901A"
    legal = legal_orders(fall, "FRANCE")
    assert list(legal) == ["build_1", "build_2"]
    accepted, refused = check_free(fall, "FRANCE", ["F BRE B", "A PAR B", "A MAR B"], legal)
    assert accepted == {"build_1": "F BRE B", "build_2": "A PAR B"}
    assert "only 2 build(s)" in refused["A MAR B"][1]
    accepted, refused = check_free(fall, "FRANCE", ["WAIVE"], legal)
    assert accepted == {"build_1": "WAIVE"} and refused == {}  # the other slot is waived

    # a dislodged unit: Austria dislodges Italy's A VEN (it may not retreat where the attack came from)
    s1, _ = adjudicate(start, {"AUSTRIA": ["A VIE - TYR", "A BUD - TRI", "F TRI - ADR"]})
    f1, _ = adjudicate(
        s1, {"AUSTRIA": ["A TYR - VEN", "A TRI S A TYR - VEN", "F ADR S A TYR - VEN"]}
    )
    assert phase_info(f1).name == "F1901R"
    legal = legal_orders(f1, "ITALY")
    assert list(legal) == ["A VEN"]
    accepted, refused = check_free(f1, "ITALY", ["A VEN R PIE"], legal)
    assert accepted == {"A VEN": "A VEN R PIE"} and refused == {}
    accepted, refused = check_free(f1, "ITALY", ["A VEN R TYR"], legal)  # the attacker's
    assert accepted == {} and refused["A VEN R TYR"][1].startswith("illegal order")


def test_only_a_unit_left_without_an_order_or_a_refused_build_asks_again(start) -> None:
    legal = legal_orders(start, "FRANCE")
    full = ["A PAR - BUR", "F BRE - MAO", "A MAR H", "A MUN - BUR", "A PAR - PIC"]
    accepted, refused = check_free(start, "FRANCE", full, legal)
    assert len(refused) == 2 and not needs_revision(legal, accepted, refused)
    accepted, refused = check_free(start, "FRANCE", full[:2], legal)
    assert needs_revision(legal, accepted, refused)  # A MAR has no order
    builds = {"build_1": ["A PAR B", "WAIVE"], "build_2": ["A PAR B", "WAIVE"]}
    assert not needs_revision(builds, {"build_1": "A PAR B"}, {})  # the other is waived
    assert needs_revision(builds, {}, {"A MUN B": ["A MUN B", "illegal"]})


FRAGMENTS = ["A", "F", "- BUR", "A PAR S A", "WAIVE", "VIA", "]", "F Marines, 2019 (D-day)", "B"]


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_what_the_engine_cannot_read_is_refused_not_a_crash(start, fragment) -> None:
    """Seen from SmolLM2-135M and in fuzzing: the engine's parser raises on some fragments
    (IndexError on "A" or "WAIVE" in a movement phase); the secretary refuses them."""
    legal = legal_orders(start, "FRANCE")
    accepted, refused = check_free(start, "FRANCE", [fragment, "A MAR H"], legal)
    assert accepted == {"A MAR": "A MAR H"}
    assert fragment in refused and refused[fragment][0] == fragment


def test_a_revision_keeps_the_accepted_orders_and_replaces_reordered_units(start) -> None:
    legal = legal_orders(start, "FRANCE")
    before = ["A PAR - BUR", "F BRE - MUN", "A MAR - SPA"]
    after = revised_orders(start, "FRANCE", before, ["F BRE - MAO", "A MAR H"], legal)
    assert after == ["A PAR - BUR", "F BRE - MAO", "A MAR H"]
    accepted, refused = check_free(start, "FRANCE", after, legal)
    assert refused == {} and accepted["A MAR"] == "A MAR H"


def test_counts_from_a_trail() -> None:
    trail = [
        {
            "proposal": {"orders": ["A PAR - BUR", "F BRE - MUN", "X"]},
            "source": "model",
            "detail": {
                "F BRE - MUN": ["F BRE - MUN", "illegal"],
                "X": ["X", "illegal"],
                "A MAR": ["", "no order given for A MAR"],
            },
        },
        {"proposal": {"orders": ["A PAR - BUR", "F BRE H"]}, "source": "model"},
    ]
    assert free_counts(trail, 1) == {
        "written": 3,
        "invalid": 2,
        "missing": 1,
        "revisions": 1,
        "source": "model",
    }
    # a decider's fallback wrote nothing: no orders counted for the rates
    fallback = [{"proposal": {"orders": ["A PAR H"]}, "source": "fallback", "detail": {}}]
    assert free_counts(fallback, 0)["written"] == 0


def test_rates_are_per_power_and_model() -> None:
    def narration(phase: str, counts: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "narration", "data": {"phase": phase, "free_orders": counts}}

    row = {"missing": 0, "source": "model"}
    results = [
        narration(
            "S1901M",
            {
                "FRANCE": {**row, "written": 3, "invalid": 1, "revisions": 1, "model": "m1"},
                "ENGLAND": {**row, "written": 3, "invalid": 0, "revisions": 0, "model": "m2"},
            },
        ),
        narration(
            "F1901M",
            {"FRANCE": {**row, "written": 4, "invalid": 0, "revisions": 0, "model": "m1"}},
        ),
    ]
    f = free_order_stats(results)
    assert f is not None
    assert (f["written"], f["invalid"], f["phases"], f["reasked"]) == (10, 1, 3, 1)
    assert f["invalid_rate"] == pytest.approx(0.1)
    assert f["by_power"]["FRANCE"]["invalid_rate"] == pytest.approx(1 / 7)
    assert f["by_power"]["FRANCE"]["reask_rate"] == pytest.approx(0.5)
    assert f["by_model"]["m2"]["invalid_rate"] == 0.0
    assert f["by_power"]["TURKEY"]["phases"] == 0
    assert f["by_power"]["TURKEY"]["invalid_rate"] is None  # nothing written: no rate
    assert free_order_stats([narration("S1901M", {})]) is None


# --- the answer is recorded as written --------------------------------------------------------


def test_a_written_order_is_never_repaired_as_prose() -> None:
    """An order repeats the question's words by nature (a support names units the prompt
    lists): the echo check must not drop it, nor the name check rewrite it."""
    schema: type[BaseModel] = free_orders_schema({})
    asked = "Legal for F BRE: F BRE S A PAR - PIC | F BRE - MAO. Write F BRE S A PAR - PIC."
    raw = '{"orders": ["F BRE S A PAR - PIC", "A PAR - PIC", "F ENG - LON"]}'
    names = {"sides": ["ENGLAND", "FRANCE"], "entities": []}
    answer, fixes, dropped = json_answer(raw, schema, names, instructions=asked)
    assert answer.model_dump()["orders"] == ["F BRE S A PAR - PIC", "A PAR - PIC", "F ENG - LON"]
    assert (fixes, dropped) == ([], [])
    # prose where an order should be is an invalid order for the secretary, not a void answer
    prose = "You are Turkey, and your order is as follows: " + "F ARM - ANK S A CON " * 8
    long, _, _ = json_answer(json.dumps({"orders": [prose]}), schema, names)
    assert long.model_dump()["orders"] == [prose]
    with pytest.raises(ValueError):  # no order at all is no answer (the decider asks again)
        json_answer('{"orders": []}', schema, names, instructions=asked)


def test_the_scenario_refuses_an_unknown_mode() -> None:
    assert load_scenario("diplomacy", ["diplomacy.orders=free"]).diplomacy.orders == "free"
    assert load_scenario("diplomacy").diplomacy.orders == "constrained"
    with pytest.raises(ScenarioError):
        load_scenario("diplomacy", ["diplomacy.orders=loose"])


# --- a game with a decider that writes illegal orders -----------------------------------------


class Sloppy:
    """Writes its orders as the scripted seat does, but FRANCE swaps F BRE's order for an
    illegal one and adds an order for a German unit, then fixes F BRE when asked; ENGLAND
    writes an illegal F LON order and repeats it on every revision (so the unit holds)."""

    asks: list[dict[str, Any]] = []

    def __init__(self, seed: int) -> None:
        self.scripted = ScriptedDecider(seed)

    def decide(self, ask: Any, schema: Any, *, memory: str = "") -> dict[str, Any]:
        if ask["schema"] != "diplomacy_orders_free":
            return self.scripted.decide(ask, schema, memory=memory)
        Sloppy.asks.append(ask)
        first = ask["task"] == "orders"
        orders = list(ask["scripted"]["orders"]) if first else []
        if ask["role"] == "FRANCE" and "S1901" in ask["question"]:
            if first:
                orders = [o for o in orders if not o.startswith("F BRE")]
                orders += ["F BRE - MUN", "A MUN - BUR"]
            else:
                orders = ["F BRE H"]
        if ask["role"] == "ENGLAND" and "S1901" in ask["question"]:
            orders = [o for o in orders if not o.startswith("F LON")] + ["F LON - PAR"]
        if ask["role"] == "GERMANY" and "S1901" in ask["question"] and first:
            orders += ["A PAR - BUR"]  # a French unit, beside a full set of its own
        return {"value": {"orders": orders}, "source": "scripted"}


def test_a_game_counts_refused_orders_and_reasks(tmp_path, monkeypatch) -> None:
    real = agents.decider_for
    monkeypatch.setattr(
        agents,
        "decider_for",
        lambda seat: (
            Sloppy(int(seat.get("seed", 0))) if seat.get("model") == "scripted" else real(seat)
        ),
    )
    Sloppy.asks = []
    out = tmp_path / "game"
    play(
        "diplomacy",
        overrides=[
            "diplomacy.orders=free",
            "diplomacy.max_year=1901",
            "diplomacy.negotiation_rounds=0",
            "diplomacy.diary=false",
        ],
        context=GameContext(model="scripted", seed=3),
        out_dir=out,
        db=tmp_path / "game.sqlite",
    )
    record = load_record(out)
    spring = next(
        e
        for e in record["events"]
        if e["kind"] == "narration" and e["data"].get("phase") == "S1901M"
    )
    counts = spring["data"]["free_orders"]
    assert counts["FRANCE"] == {
        "written": 4,
        "invalid": 2,
        "missing": 0,
        "revisions": 1,
        "source": "scripted",
        "model": "scripted",
    }
    assert counts["ENGLAND"]["invalid"] == 1 and counts["ENGLAND"]["revisions"] == 2
    # an extra order for another power's unit is invalid, but with every unit ordered nothing
    # is left to ask for
    assert counts["GERMANY"]["invalid"] == 1 and counts["GERMANY"]["revisions"] == 0
    assert counts["ITALY"]["invalid"] == 0 and counts["ITALY"]["revisions"] == 0
    # FRANCE's fix was played; ENGLAND's refused fleet held, its order recorded as invalid
    assert "F BRE H" in spring["data"]["orders"]["FRANCE"]
    assert "F LON H" in spring["data"]["orders"]["ENGLAND"]
    invalid = [r for r in spring["data"]["records"] if r["invalid"]]
    assert sorted((r["power"], r["order"]) for r in invalid) == [
        ("ENGLAND", "F LON - PAR"),
        ("GERMANY", "A PAR - BUR"),
    ]
    # the revision asked names the refused order, the engine's reason and the unit to order
    revise = next(a for a in Sloppy.asks if a["role"] == "FRANCE" and a["task"] == "revise")
    assert "F BRE - MUN" in revise["question"] and "illegal order" in revise["question"]
    assert "Write a legal order for each of: F BRE" in revise["question"]
    first = next(a for a in Sloppy.asks if a["role"] == "FRANCE" and a["task"] == "orders")
    assert "JSON list of strings" in first["question"]

    m = game_measures(record)["free_orders"]
    assert m["by_power"]["FRANCE"]["invalid"] == 2
    assert m["by_power"]["ENGLAND"]["reask_rate"] > 0
    assert 0 < m["invalid_rate"] < 1
    assert m["by_model"]["scripted"]["written"] == m["written"]
    summary = eval_diplomacy([out], tmp_path / "eval")
    assert summary["games"][0]["free_orders"]["invalid"] == m["invalid"]
    assert (
        "Free orders: invalid-order rate" in (tmp_path / "eval" / "diplomacy_eval.md").read_text()
    )


def test_constrained_games_record_no_free_counts(tmp_path) -> None:
    out = tmp_path / "game"
    play(
        "diplomacy",
        overrides=[
            "diplomacy.max_year=1901",
            "diplomacy.negotiation_rounds=0",
            "diplomacy.diary=false",
        ],
        context=GameContext(model="scripted", seed=3),
        out_dir=out,
        db=tmp_path / "game.sqlite",
    )
    record = load_record(out)
    assert not any("free_orders" in (e.get("data") or {}) for e in record["events"])
    assert "free_orders" not in game_measures(record)


# --- tournaments report them per entrant -------------------------------------------------------


def test_a_tournament_reports_free_orders_per_entrant(tmp_path, monkeypatch) -> None:
    from wargraph.evals.tournament import load_tournament, run_tournament

    real = agents.decider_for
    monkeypatch.setattr(
        agents,
        "decider_for",
        lambda seat: (
            Sloppy(int(seat.get("seed", 0))) if seat.get("model") == "scripted" else real(seat)
        ),
    )
    t = load_tournament(
        {
            "name": "free_orders",
            "scenario": "diplomacy",
            "set": {
                "diplomacy.orders": "free",
                "diplomacy.max_year": 1901,
                "diplomacy.negotiation_rounds": 0,
                "diplomacy.diary": False,
                "diplomacy.maps": "none",
            },
            "entrants": {"writer": {"model": "scripted"}, "hold": {"model": "bot:hold"}},
            "rotations": 1,
            "score": "centres",
            "seed": 0,
            "concurrency": 1,
        }
    )
    run_tournament(t, tmp_path, show_progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    free = summary["free_orders"]
    assert set(free) == {"writer"}  # a bot picks legal orders: free orders measure models
    games = [r for r in summary["games"] if r.get("free_orders")]
    # Sloppy's illegal orders: FRANCE's two, ENGLAND's and GERMANY's one, where a model held them
    expected = sum(
        {"FRANCE": 2, "ENGLAND": 1, "GERMANY": 1}.get(seat, 0)
        for r in games
        for seat in r["free_orders"]
        if r["seats"][seat] == "writer"
    )
    assert free["writer"]["invalid"] == expected > 0
    assert 0 < free["writer"]["invalid_rate"] < 1
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Free orders" in report and "| writer |" in report
