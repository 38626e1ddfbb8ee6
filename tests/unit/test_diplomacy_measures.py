"""Diplomacy measures (`worlds/diplomacy/measures.py`) on hand-computed examples and real games."""

from __future__ import annotations

import random

import pytest

import wargraph.graphs.diplomacy.measures as M
import wargraph.graphs.diplomacy.rules as W


def _state(name, units, centers, retreats=None):
    return {
        "name": name,
        "units": units,
        "centers": centers,
        "retreats": retreats or {p: {} for p in units},
    }


def test_phase_key_orders_phases():
    names = ["W1901A", "S1902M", "F1901R", "S1901M", "F1901M", "COMPLETED", "S1901R"]
    assert sorted(names, key=M.phase_key) == [
        "S1901M",
        "S1901R",
        "F1901M",
        "F1901R",
        "W1901A",
        "S1902M",
        "COMPLETED",
    ]


def test_game_score_elimination_and_survivors_by_hand():
    # France loses its last unit and centre in F1903M (seen in the W1903A state): score 3.
    # Turkey survives to the end (max year 1904) with 5 centres: 4 + 5 = 9.
    # England keeps only a dislodged unit in one state: still alive; ends with 1 centre: 5.
    phases = [
        _state(
            "F1903M",
            {"FRANCE": ["A PAR"], "TURKEY": ["A CON"], "ENGLAND": ["F LON"]},
            {"FRANCE": ["PAR"], "TURKEY": ["CON"], "ENGLAND": ["LON"]},
        ),
        _state(
            "F1903R",
            {"FRANCE": [], "TURKEY": ["A CON"], "ENGLAND": []},
            {"FRANCE": ["PAR"], "TURKEY": ["CON"], "ENGLAND": ["LON"]},
            retreats={"FRANCE": {}, "TURKEY": {}, "ENGLAND": {"F LON": ["WAL"]}},
        ),
        _state(
            "W1903A",
            {"FRANCE": [], "TURKEY": ["A CON"], "ENGLAND": ["F WAL"]},
            {"FRANCE": [], "TURKEY": ["CON", "ANK", "SMY", "BUL", "GRE"], "ENGLAND": ["LON"]},
        ),
        _state(
            "S1904M",
            {"FRANCE": [], "TURKEY": ["A CON"], "ENGLAND": ["F WAL"]},
            {"FRANCE": [], "TURKEY": ["CON", "ANK", "SMY", "BUL", "GRE"], "ENGLAND": ["LON"]},
        ),
    ]
    saved = {"phases": [{"name": s["name"], "state": s} for s in phases]}
    assert M.game_score(saved, 1904) == {"ENGLAND": 5.0, "FRANCE": 3.0, "TURKEY": 9.0}
    # max_year may be given as an offset as well
    assert M.game_score(saved, 4) == M.game_score(saved, 1904)


def test_game_score_solo_on_the_real_engine():
    # Germany is handed 17 centres, then takes BEL in F1901M: 18 centres, the engine ends
    # the game. max_year 1905 -> 5; win year 1901 -> 1; Germany: 5 + (5 - 1) + 18 = 27.
    game = W.load(W.new_game(game_id="solo"))
    for p in W.POWERS:
        if p != "GERMANY":
            game.set_units(p, [], reset=True)
    centres = ["BER", "KIE", "MUN", "HOL", "LON", "DEN", "SWE", "NWY", "WAR"]
    centres += ["MOS", "VIE", "BUD", "TRI", "PAR", "BRE", "MAR", "EDI"]
    game.set_centers("GERMANY", centres)
    game.set_units("GERMANY", ["A RUH"])
    saved = W.save(game)
    saved, _ = W.adjudicate(saved, {})  # S1901M
    saved, _ = W.adjudicate(saved, {"GERMANY": ["A RUH - BEL"]})  # F1901M
    info = W.phase_info(saved)
    assert info.is_done and len(info.centers["GERMANY"]) == 18
    score = M.game_score(saved, 1905)
    # Austria and France hold nothing from the start: eliminated "in" 1901 -> 1.
    # England keeps LVP (5 + 1), Russia SEV and STP (5 + 2), Italy and Turkey 3 each (5 + 3).
    assert score == {
        "GERMANY": 27.0,
        "AUSTRIA": 1.0,
        "FRANCE": 1.0,
        "ENGLAND": 6.0,
        "RUSSIA": 7.0,
        "ITALY": 8.0,
        "TURKEY": 8.0,
    }


def test_game_score_after_random_play_counts_centres():
    rng = random.Random(3)
    saved = W.new_game()
    while W.phase_info(saved).year <= 1902:
        info = W.phase_info(saved)
        orders = {}
        for p in info.powers_alive:
            legal = W.legal_orders(saved, p)
            orders[p] = W.finalize_orders(saved, p, {k: rng.choice(v) for k, v in legal.items()})
        saved, _ = W.adjudicate(saved, orders)
    final = W.phase_info(saved).centers
    assert M.game_score(saved, 1902) == {p: 2.0 + len(final[p]) for p in W.POWERS}


def test_order_stats_by_hand():
    records = [
        {"phase": "S1901M", "power": "FRANCE", "order": "A PAR - BUR", "result": "success"},
        {"phase": "S1901M", "power": "FRANCE", "order": "A MAR - BUR", "result": "bounced"},
        {"phase": "S1901M", "power": "FRANCE", "order": "F BRE H", "result": "success"},
        {"phase": "S1901M", "power": "FRANCE", "order": "A PAR - MUN", "invalid": True},
        {"phase": "F1901M", "power": "FRANCE", "order": "A BUR S A MAR - PAR", "result": "void"},
        {"phase": "F1901M", "power": "FRANCE", "order": "F BRE H", "result": ["dislodged"]},
        {"phase": "F1901R", "power": "FRANCE", "order": "F BRE R PIC", "result": ""},
        {"phase": "W1901A", "power": "FRANCE", "order": "A PAR B", "result": "success"},
        {"phase": "W1901A", "power": "FRANCE", "order": "WAIVE", "result": "success"},
        {"phase": "S1901M", "power": "GERMANY", "order": "A MUN H", "result": "success"},
    ]
    stats = M.order_stats(records, power="FRANCE")
    t = stats["by_type"]
    assert t["move"] == {
        "count": 3,
        "success": 1,
        "bounced": 1,
        "void": 0,
        "dislodged": 0,
        "cut": 0,
        "invalid": 1,
    }
    assert t["hold"]["count"] == 2 and t["hold"]["success"] == 1 and t["hold"]["dislodged"] == 1
    assert t["support"]["void"] == 1
    assert t["retreat"]["success"] == 1 and t["build"]["success"] == 1
    assert t["convoy"]["count"] == 0 and t["disband"]["count"] == 0
    assert stats["total"] == 8  # WAIVE is not an order of a unit
    assert stats["invalid_rate"] == pytest.approx(1 / 8)
    assert stats["hold_rate"] == pytest.approx(2 / 5)  # 2 holds of 5 movement-phase orders
    everyone = M.order_stats(records)
    assert everyone["total"] == 9 and everyone["hold_rate"] == pytest.approx(3 / 6)
    assert M.order_stats([])["invalid_rate"] == 0.0


def test_records_from_real_adjudication():
    saved = W.new_game()
    _, results = W.adjudicate(saved, {"FRANCE": ["A PAR - BUR"], "GERMANY": ["A MUN - BUR"]})
    # A PAR's first order was rejected, its second accepted; F BRE's only order was rejected,
    # so the engine's default "F BRE H" is replaced by the invalid record.
    rejected = {"FRANCE": [("A PAR - MUN", "illegal"), ("f bre - mun", "illegal")]}
    recs = M.records_from_results(results, rejected)
    assert len(recs) == 22 - 1 + 2
    by = {(r["power"], r["order"]): r for r in recs}
    assert by[("FRANCE", "A PAR - BUR")]["result"] == "bounced"
    assert by[("FRANCE", "A PAR - MUN")]["invalid"]
    assert ("FRANCE", "F BRE H") not in by
    assert by[("ITALY", "A ROM H")]["defaulted"]
    stats = M.order_stats(recs)
    assert stats["by_type"]["move"]["bounced"] == 2
    assert stats["invalid"] == 2 and stats["invalid_rate"] == pytest.approx(2 / 23)
    assert stats["hold_rate"] == pytest.approx(19 / 21)


DIARIES = [
    {
        "phase": "S1901M",
        "power": "FRANCE",
        "relationships": {"ENGLAND": "Ally", "GERMANY": "Enemy"},
    },
    {"phase": "S1901M", "power": "ENGLAND", "relationships": {"FRANCE": "Friendly"}},
    {"phase": "F1901M", "power": "FRANCE", "relationships": {"ENGLAND": "Neutral", "GERMANY": "x"}},
    {"phase": "F1901M", "power": "GERMANY", "relationships": {"FRANCE": "unfriendly"}},
]


def test_relationship_series_by_hand():
    s = M.relationship_series(DIARIES)
    assert s["phases"] == ["S1901M", "F1901M"]
    assert s["outgoing"]["FRANCE"] == {"S1901M": 0.0, "F1901M": 0.0}  # (2 - 2) / 2; 0 / 1
    assert s["outgoing"]["ENGLAND"] == {"S1901M": 1.0}
    assert s["outgoing"]["GERMANY"] == {"F1901M": -1.0}
    assert s["incoming"]["FRANCE"] == {"S1901M": 1.0, "F1901M": -1.0}
    assert s["incoming"]["ENGLAND"] == {"S1901M": 2.0, "F1901M": 0.0}
    assert s["incoming"]["GERMANY"] == {"S1901M": -2.0}  # the unknown label "x" is ignored


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_relationship_chart_writes_a_file(tmp_path, suffix, magic):
    path = M.relationship_chart(M.relationship_series(DIARIES), tmp_path / f"rel{suffix}")
    data = path.read_bytes()
    assert data.startswith(magic) and len(data) > 1000
