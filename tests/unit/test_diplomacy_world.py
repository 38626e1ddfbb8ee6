"""The Diplomacy engine wrapper against the real `diplomacy` engine (no mocks)."""

from __future__ import annotations

import json
import random

import pytest

import wargraph.graphs.diplomacy.rules as W


@pytest.fixture(scope="module")
def opening() -> dict:
    return W.new_game(game_id="test-opening")


def play_random(seed: int, stop, until: int = 1905):
    """Seeded random legal orders (through the schema answer path) until ``stop(saved, info)``
    is true or the year passes ``until``. Yields nothing; returns the saved dict where it
    stopped, or None."""
    rng = random.Random(seed)
    saved = W.new_game(game_id=f"seed-{seed}")
    while True:
        info = W.phase_info(saved)
        if info.is_done or info.year > until:
            return None
        if stop(saved, info):
            return saved
        game = W.load(saved)
        orders = {}
        for power in info.powers_alive:
            legal = W.legal_orders(game, power)
            answer = {k: rng.choice(v) for k, v in legal.items()}
            orders[power] = W.finalize_orders(game, power, answer, legal=legal)
        saved, _ = W.adjudicate(saved, orders)


def find_phase(kind: str, predicate=lambda s, p, legal: True):
    """First (saved, power) in seeded random play where the phase type is ``kind`` and some
    power's legal orders satisfy ``predicate``."""
    for seed in range(6):
        hit = {}

        def stop(saved, info, hit=hit):
            if info.type != kind:
                return False
            for power in info.powers_alive:
                legal = W.legal_orders(saved, power)
                if legal and predicate(saved, power, legal):
                    hit["power"] = power
                    return True
            return False

        saved = play_random(seed, stop)
        if saved is not None:
            return saved, hit["power"]
    pytest.fail(f"no {kind} phase found in seeded play")


def _walk(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def assert_flat_schema(schema: dict, legal: dict) -> None:
    keys = set(_walk(schema))
    assert not keys & {"$defs", "definitions", "$ref", "anyOf", "oneOf", "allOf"}
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(legal)
    assert list(schema["properties"]) == list(legal)
    for key, prop in schema["properties"].items():
        assert prop == {"type": "string", "enum": list(legal[key])}
        assert all(isinstance(v, dict) is False for v in prop["enum"])


# ---------------------------------------------------------------------------------------------


def test_new_game_and_phase_info(opening):
    json.dumps(opening)  # JSON-serialisable
    info = W.phase_info(opening)
    assert (info.name, info.type, info.season, info.year, info.is_done) == (
        "S1901M",
        "M",
        "S",
        1901,
        False,
    )
    assert info.powers_alive == W.POWERS
    assert sorted(info.centers["RUSSIA"]) == ["MOS", "SEV", "STP", "WAR"]
    assert "F STP/SC" in info.units["RUSSIA"]
    assert sorted(info.homes["FRANCE"]) == ["BRE", "MAR", "PAR"]
    json.dumps(info.to_dict())
    # A second game is a copy, not the same object, and gets its own id.
    other = W.new_game()
    assert other["id"] != opening["id"]
    other["phases"][0]["state"]["units"]["FRANCE"].clear()
    assert W.phase_info(W.new_game()).units["FRANCE"]
    # load/save round trip keeps the position
    assert W.save(W.load(opening))["phases"][-1]["state"]["units"] == info.units


def test_legal_orders_opening_hand_checks(opening):
    legal = W.legal_orders(opening, "FRANCE")
    assert list(legal) == ["F BRE", "A MAR", "A PAR"]
    par = legal["A PAR"]
    assert par[0] == "A PAR H"
    assert {o for o in par if " - " in o and " S " not in o} == {
        "A PAR - BRE",
        "A PAR - BUR",
        "A PAR - GAS",
        "A PAR - PIC",
    }
    assert "A PAR - MUN" not in par
    assert "A PAR S A MUN - BUR" in par  # support for another power's unit
    assert "F BRE - MAO" in legal["F BRE"]
    assert "A MAR - SPA" in legal["A MAR"]
    assert all(o.startswith(unit + " ") for unit, opts in legal.items() for o in opts)
    # Orderable unit counts per power
    counts = {p: len(W.legal_orders(opening, p)) for p in W.POWERS}
    assert counts == {p: (4 if p == "RUSSIA" else 3) for p in W.POWERS}
    # A fleet on the south coast of St Petersburg moves only along that coast.
    stp = W.legal_orders(opening, "RUSSIA")["F STP/SC"]
    moves = {o.split(" - ")[1] for o in stp if " - " in o and " S " not in o}
    assert moves == {"BOT", "FIN", "LVN"}
    with pytest.raises(ValueError):
        W.legal_orders(opening, "NARNIA")


def test_every_listed_order_is_accepted_by_the_engine(opening):
    for power in ("FRANCE", "RUSSIA", "ENGLAND"):
        for unit, opts in W.legal_orders(opening, power).items():
            for order in opts:
                accepted, rejected = W.check_orders(opening, power, [order])
                assert accepted == [order] and not rejected, (unit, order, rejected)


def test_orders_schema_is_flat_and_enums_are_legal(opening):
    for power in W.POWERS:
        legal = W.legal_orders(opening, power)
        schema = W.orders_json_schema(legal)
        assert_flat_schema(schema, legal)
        # Any answer the schema allows is accepted whole by the secretary.
        rng = random.Random(power)
        for pick in (0, -1, None):
            answer = {
                k: (p["enum"][pick] if pick is not None else rng.choice(p["enum"]))
                for k, p in schema["properties"].items()
            }
            orders = W.finalize_orders(opening, power, answer)
            assert orders == list(answer.values())  # nothing replaced by a fallback
            accepted, rejected = W.check_orders(opening, power, orders)
            assert not rejected and accepted == orders


def test_unit_blocks_opening_hand_checks(opening):
    france = {b["unit"]: b for b in W.unit_blocks(opening, "FRANCE")}
    par = france["A PAR"]
    assert {a["location"] for a in par["adjacent"]} == {"BRE", "BUR", "GAS", "PIC"}
    bre = next(a for a in par["adjacent"] if a["location"] == "BRE")
    assert (bre["occupant"], bre["occupant_owner"], bre["is_centre"]) == ("F BRE", "FRANCE", True)
    assert par["is_home_centre"] and par["centre_owner"] == "FRANCE"
    assert par["legal_orders"] == W.legal_orders(opening, "FRANCE")["A PAR"]
    # Nearest foreign unit of A PAR: A MUN via BUR (2), never a French unit
    assert par["nearest_foreign_units"][0]["distance"] == 2
    assert all(f["owner"] != "FRANCE" for f in par["nearest_foreign_units"])

    england = {b["unit"]: b for b in W.unit_blocks(opening, "ENGLAND", n_centres=10)}
    lon = england["F LON"]
    assert {a["location"] for a in lon["adjacent"]} == {"ENG", "NTH", "WAL", "YOR"}
    near = lon["nearest_unowned_centres"]
    # Hand check: BEL, BRE (French), DEN, HOL, NWY are two fleet moves away; EDI/LVP are owned.
    assert [c["centre"] for c in near if c["distance"] == 2] == ["BEL", "BRE", "DEN", "HOL", "NWY"]
    assert min(c["distance"] for c in near) == 2
    assert next(c for c in near if c["centre"] == "BRE")["owner"] == "FRANCE"
    assert all(c["centre"] not in ("EDI", "LON", "LVP") for c in near)
    # An army on an island reaches the continent only by convoy, and says so.
    lvp = england["A LVP"]
    assert lvp["nearest_unowned_centres"] and all(
        c["by_convoy"] for c in lvp["nearest_unowned_centres"]
    )

    russia = {b["unit"]: b for b in W.unit_blocks(opening, "RUSSIA", n_centres=40)}
    stp = russia["F STP/SC"]
    assert {a["location"] for a in stp["adjacent"]} == {"BOT", "FIN", "LVN"}
    dist = {c["centre"]: c["distance"] for c in stp["nearest_unowned_centres"]}
    assert dist["SWE"] == 2  # STP/SC > BOT > SWE
    assert dist["NWY"] == 3  # not 1: the north coast is not reachable from the south coast
    # Adjacent centres are always included, even beyond n_centres.
    sev = {b["unit"]: b for b in W.unit_blocks(opening, "RUSSIA", n_centres=0)}["F SEV"]
    assert [c["centre"] for c in sev["nearest_unowned_centres"]] == ["RUM"]

    text = W.render_unit_block(par)
    assert text.startswith("A PAR (Paris")
    assert "BUR" in text and "A PAR - PIC" in text
    json.dumps(W.unit_blocks(opening, "TURKEY"))


def test_render_board(opening):
    board = W.render_board(opening, "GERMANY")
    lines = board.splitlines()
    assert lines[0] == "Phase S1901M"
    assert lines[1].startswith("GERMANY (you): 3 centres: BER, KIE, MUN")
    for power in W.POWERS:
        assert power in board
    assert "F STP/SC" in board and "Neutral centres (12)" in board


def test_secretary_round_trip_with_an_illegal_order(opening):
    orders = ["A PAR - MUN", "a mar-spa", "F BRE - MAO", "A MAR H", "A MUN - BUR", "nonsense"]
    accepted, rejected = W.check_orders(opening, "FRANCE", orders)
    assert accepted == ["A MAR - SPA", "F BRE - MAO"]
    reasons = dict(rejected)
    assert set(reasons) == {"A PAR - MUN", "A MAR H", "A MUN - BUR", "nonsense"}
    assert "illegal order" in reasons["A PAR - MUN"] and "A PAR - BUR" in reasons["A PAR - MUN"]
    assert "already has an order" in reasons["A MAR H"]
    assert "UNORDERABLE UNIT" in reasons["A MUN - BUR"]  # Germany's army
    # The rejected order is resubmitted corrected: now all accepted.
    accepted, rejected = W.check_orders(opening, "FRANCE", ["A PAR - BUR", *accepted])
    assert not rejected and len(accepted) == 3
    # check_orders does not touch the caller's saved game
    assert W.load(opening).get_orders("FRANCE") == []


def test_adjudicate_results_hand_check(opening):
    new, results = W.adjudicate(
        opening,
        {
            "FRANCE": ["A PAR - BUR", "A MAR S A PAR - BUR"],
            "GERMANY": ["A MUN - BUR"],
        },
    )
    assert W.phase_info(new).name == "F1901M"
    assert results["phase"] == "S1901M" and results["next_phase"] == "F1901M"
    fr = {r["unit"]: r for r in results["orders"]["FRANCE"]}
    assert fr["A PAR"]["outcome"] == "success" and fr["A PAR"]["type"] == "move"
    assert fr["A MAR"]["type"] == "support" and fr["A MAR"]["outcome"] == "success"
    assert fr["F BRE"]["defaulted"] and fr["F BRE"]["order"] == "F BRE H"
    de = {r["unit"]: r for r in results["orders"]["GERMANY"]}
    assert de["A MUN"]["outcome"] == "bounced" and de["A MUN"]["results"] == ["bounce"]
    assert "A BUR" in W.phase_info(new).units["FRANCE"]
    json.dumps(results)
    # The input is untouched
    assert W.phase_info(opening).name == "S1901M"


def test_adjudicate_reports_engine_errors_without_printing(opening, capsys):
    _, results = W.adjudicate(opening, {"FRANCE": ["A PAR - MUN", "F BRE - MAO"]})
    assert results["errors"]["FRANCE"] and "A PAR - MUN" in results["errors"]["FRANCE"][0]
    fr = {r["unit"]: r for r in results["orders"]["FRANCE"]}
    assert fr["A PAR"]["defaulted"] and fr["A PAR"]["order"] == "A PAR H"
    assert fr["F BRE"]["order"] == "F BRE - MAO" and not fr["F BRE"]["defaulted"]
    assert capsys.readouterr().out == ""


def test_retreat_phase_schema_and_orders():
    saved, power = find_phase("R")
    info = W.phase_info(saved)
    legal = W.legal_orders(saved, power)
    assert set(legal) == set(info.retreats[power])
    for unit, opts in legal.items():
        assert f"{unit} D" in opts
        assert all(W.order_type(o) in ("retreat", "disband") for o in opts)
    assert_flat_schema(W.orders_json_schema(legal), legal)
    for opts in legal.values():
        for order in opts:
            accepted, rejected = W.check_orders(saved, power, [order])
            assert accepted == [order] and not rejected
    # A movement order is refused in a retreat phase
    unit = next(iter(legal))
    _, rejected = W.check_orders(saved, power, [f"{unit} H"])
    assert rejected
    # Fallback: dislodged units disband
    assert W.hold_orders(saved, power) == [f"{u} D" for u in legal]


@pytest.fixture(scope="module")
def winter_1901() -> dict:
    """A W1901A built by hand on the real engine: England is given BRE and MAR and moves
    out of its homes, France moves out of BRE and MAR. After F1901M France has 1 centre and
    3 units (2 disbands), England 5 centres, 3 units and 3 free homes (2 builds)."""
    game = W.load(W.new_game(game_id="winter"))
    game.set_centers("ENGLAND", ["BRE", "MAR"])
    saved = W.save(game)
    saved, _ = W.adjudicate(
        saved,
        {
            "FRANCE": ["F BRE - MAO", "A MAR - GAS"],
            "ENGLAND": ["F LON - NTH", "F EDI - NWG", "A LVP - YOR"],
        },
    )
    saved, _ = W.adjudicate(saved, {})
    assert W.phase_info(saved).name == "W1901A"
    return saved


def test_adjustment_phase_builds_schema_and_post_step(winter_1901):
    saved = winter_1901
    legal = W.legal_orders(saved, "ENGLAND")
    builds = ["A EDI B", "F EDI B", "A LON B", "F LON B", "A LVP B", "F LVP B"]
    assert legal == {"build_1": builds + ["WAIVE"], "build_2": builds + ["WAIVE"]}
    assert_flat_schema(W.orders_json_schema(legal), legal)
    # Post-step: a second build on the same site becomes a WAIVE; the count stays 2.
    assert W.finalize_orders(saved, "ENGLAND", {"build_1": "A EDI B", "build_2": "F EDI B"}) == [
        "A EDI B",
        "WAIVE",
    ]
    assert W.finalize_orders(saved, "ENGLAND", {"build_1": "WAIVE", "build_2": "F LON B"}) == [
        "F LON B",
        "WAIVE",
    ]
    assert W.hold_orders(saved, "ENGLAND") == ["WAIVE", "WAIVE"]
    # The secretary refuses more builds than allowed (and builds for another power's site).
    accepted, rejected = W.check_orders(
        saved, "ENGLAND", ["A EDI B", "F LON B", "A LVP B", "WAIVE", "A PAR B"]
    )
    assert accepted == ["A EDI B", "F LON B"]
    assert [o for o, _ in rejected] == ["A LVP B", "WAIVE", "A PAR B"]
    assert "only 2 build" in dict(rejected)["A LVP B"]
    # Builds are applied
    new, results = W.adjudicate(saved, {"ENGLAND": ["A EDI B", "F LON B"]})
    built = [r for r in results["orders"]["ENGLAND"] if r["type"] == "build"]
    assert [(r["order"], r["outcome"]) for r in built] == [
        ("A EDI B", "success"),
        ("F LON B", "success"),
    ]
    assert {"A EDI", "F LON"} <= set(W.phase_info(new).units["ENGLAND"])


def test_adjustment_phase_disbands_exact_count(winter_1901):
    saved = winter_1901
    legal = W.legal_orders(saved, "FRANCE")
    disbands = ["A GAS D", "A PAR D", "F MAO D"]
    assert legal == {"disband_1": disbands, "disband_2": disbands}
    assert_flat_schema(W.orders_json_schema(legal), legal)
    # Both slots on the same unit: the duplicate is replaced by the engine's civil-disorder
    # choice (farthest from home: F MAO and A GAS are 1 away, fleets first) -> F MAO.
    same = {"disband_1": "A PAR D", "disband_2": "A PAR D"}
    final = W.finalize_orders(saved, "FRANCE", same)
    assert final == ["A PAR D", "F MAO D"]
    same = {"disband_1": "F MAO D", "disband_2": "F MAO D"}
    assert W.finalize_orders(saved, "FRANCE", same) == ["F MAO D", "A GAS D"]
    assert W.hold_orders(saved, "FRANCE") == ["F MAO D", "A GAS D"]
    accepted, rejected = W.check_orders(saved, "FRANCE", [*final, "A GAS D", "WAIVE"])
    assert accepted == final
    assert "exactly 2 disband" in dict(rejected)["A GAS D"] and "WAIVE" in dict(rejected)
    new, results = W.adjudicate(saved, {"FRANCE": final})
    assert sorted(W.phase_info(new).units["FRANCE"]) == ["A GAS"]
    assert all(not r["defaulted"] for r in results["orders"]["FRANCE"])
    # Too few disbands given to adjudicate: the engine's civil-disorder rule removes the
    # rest and the record marks that disband as defaulted.
    new, results = W.adjudicate(saved, {"FRANCE": ["A PAR D"]})
    assert sorted(W.phase_info(new).units["FRANCE"]) == ["A GAS"]
    defaulted = [r["order"] for r in results["orders"]["FRANCE"] if r["defaulted"]]
    assert defaulted == ["F MAO D"]


def test_press_rules():
    ok = W.check_message("FRANCE", "ENGLAND", "Let us share the Channel.", press="full")
    assert ok is None
    assert W.check_message("FRANCE", "GLOBAL", "Peace!", press="public") is None
    assert "public" in W.check_message("FRANCE", "ENGLAND", "psst", press="public")
    assert "no press" in W.check_message("FRANCE", "GLOBAL", "hello", press="none")
    assert "too long" in W.check_message("FRANCE", "GLOBAL", "x" * 11, press="full", max_len=10)
    assert W.check_message("FRANCE", "GLOBAL", "x" * 10, press="full", max_len=10) is None
    assert "empty" in W.check_message("FRANCE", "GLOBAL", "   ", press="full")
    assert "itself" in W.check_message("FRANCE", "FRANCE", "hi", press="full")
    assert W.check_message("FRANCE", "NARNIA", "hi", press="full")
    assert W.check_message("GLOBAL", "FRANCE", "hi", press="full")
    # Eliminated powers are left out of `powers`
    alive = ["ENGLAND", "GERMANY"]
    assert W.check_message("FRANCE", "ENGLAND", "hi", press="full", powers=alive)
    assert W.check_message("GERMANY", "ENGLAND", "hi", press="full", powers=alive) is None


def test_render_svg_per_phase(opening):
    new, _ = W.adjudicate(opening, {"FRANCE": ["A PAR - BUR"]})
    first = W.render_svg(new, "S1901M")
    current = W.render_svg(new)
    assert "<svg" in first and "<svg" in current
    assert first != current  # different positions / orders drawn
    assert "S1901M" in first or "SPRING 1901" in first.upper()
    with pytest.raises(ValueError):
        W.render_svg(new, "S1950M")


def test_a_map_is_the_engines_own_drawing(opening):
    """One Renderer per map serves every drawing (it parsed its SVG twice when made): each
    phase's map is what a fresh engine Renderer draws, in any order, after another game's."""
    from diplomacy.engine.renderer import Renderer

    first, _ = W.adjudicate(opening, {"FRANCE": ["A PAR - BUR"], "GERMANY": ["A MUN - RUH"]})
    later, _ = W.adjudicate(first, {"ENGLAND": ["F LON - NTH"]})
    other, _ = W.adjudicate(opening, {"ITALY": ["A VEN - TYR"]})
    names = [p["name"] for p in later["phases"]]
    W.render_svg(other)  # the shared renderer drew another game last
    for name in reversed(names):
        phases = later["phases"][: names.index(name) + 1]
        fresh = Renderer(W.load({**later, "phases": phases})).render(incl_orders=True)
        assert W.render_svg(later, name) == fresh, name


def test_random_legal_play_to_1905_never_errors():
    rng = random.Random(7)
    saved = W.new_game(game_id="loop")
    kinds = set()
    while W.phase_info(saved).year <= 1905 and not W.phase_info(saved).is_done:
        info = W.phase_info(saved)
        kinds.add(info.type)
        game = W.load(saved)
        orders = {}
        for power in info.powers_alive:
            legal = W.legal_orders(game, power)
            orders[power] = W.finalize_orders(
                game, power, {k: rng.choice(v) for k, v in legal.items()}, legal=legal
            )
        saved, results = W.adjudicate(saved, orders)
        assert not any(results["errors"].values()), (info.name, results["errors"])
        # every submitted order has a result record
        for power, olist in orders.items():
            recorded = [r["order"] for r in results["orders"][power] if not r["defaulted"]]
            assert len([o for o in olist if o != "WAIVE"]) == len(
                [o for o in recorded if o != "WAIVE"]
            )
    json.dumps(saved)
    assert W.phase_info(saved).name == "S1906M"
    assert kinds >= {"M", "A"}
    assert [p["state"]["timestamp"] for p in saved["phases"]] == list(
        range(1, len(saved["phases"]) + 1)
    )


# --- additions for the game graph: the secretary per key, press in the saved game, speed ---------


def test_check_answer_attributes_refusals_to_their_keys(opening):
    legal = W.legal_orders(opening, "FRANCE")
    accepted, refused = W.check_answer(
        opening, "FRANCE", {"F BRE": "F BRE - MAO", "A MAR": "a mar-spa", "A PAR": "A PAR - BUR"}
    )
    assert accepted == {"F BRE": "F BRE - MAO", "A MAR": "A MAR - SPA", "A PAR": "A PAR - BUR"}
    assert not refused
    # An order for another unit under a key, an illegal order, a missing order.
    accepted, refused = W.check_answer(
        opening, "FRANCE", {"A MAR": "A PAR - GAS", "A PAR": "A PAR - BUR"}, legal=legal
    )
    assert accepted == {"A PAR": "A PAR - BUR"}  # the misplaced order does not block A PAR
    assert refused["A MAR"][0] == "A PAR - GAS" and "not an order for A MAR" in refused["A MAR"][1]
    assert refused["F BRE"] == ("", refused["F BRE"][1]) and "no order given" in refused["F BRE"][1]
    accepted, refused = W.check_answer(opening, "FRANCE", {**accepted, "A PAR": "A PAR - MUN"})
    assert "illegal order" in refused["A PAR"][1] and "A PAR - BUR" in refused["A PAR"][1]


def test_a_persons_order_in_its_units_field_may_leave_the_unit_out(opening):
    """A person types the order in the unit's own field: "- SPA", "spa", "H", "S A PAR - BUR"."""
    accepted, refused = W.check_answer(
        opening, "FRANCE", {"F BRE": "- mao", "A MAR": "spa", "A PAR": "H"}
    )
    assert accepted == {"F BRE": "F BRE - MAO", "A MAR": "A MAR - SPA", "A PAR": "A PAR H"}
    assert not refused
    accepted, refused = W.check_answer(
        opening, "FRANCE", {"F BRE": "BRE H", "A MAR": "S A PAR - BUR", "A PAR": "MAR - BUR"}
    )
    assert accepted == {"F BRE": "F BRE H", "A MAR": "A MAR S A PAR - BUR"}
    assert refused["A PAR"][0] == "A PAR MAR - BUR"  # another unit's order is still refused
    assert "illegal order" in refused["A PAR"][1] and "A PAR - BUR" in refused["A PAR"][1]
    # a person's form says so beside each unit, with one of its own moves
    from wargraph.graphs.diplomacy.schemas import orders_text_schema
    from wargraph.seats.schemas import flat_json_schema

    legal = W.legal_orders(opening, "FRANCE")
    fields = flat_json_schema(orders_text_schema({"legal": legal}))["properties"]
    about = fields["A MAR"]["description"]
    assert about.endswith("(the unit may be left out)"), about
    move = about.split('"')[1]
    assert f"A MAR {move}" in legal["A MAR"] and move.startswith("- ")


def test_check_answer_in_an_adjustment_phase(winter_1901):
    accepted, refused = W.check_answer(
        winter_1901, "ENGLAND", {"build_1": "A EDI B", "build_2": "F EDI B"}
    )
    assert accepted == {"build_1": "A EDI B"}
    assert "already built at EDI" in refused["build_2"][1]
    accepted, refused = W.check_answer(
        winter_1901, "ENGLAND", {"build_1": "WAIVE", "build_2": "F LON B"}
    )
    assert accepted == {"build_1": "WAIVE", "build_2": "F LON B"} and not refused


def test_add_messages_keeps_press_in_the_saved_game(opening):
    once = W.add_messages(opening, [("france", "england", "Channel?"), ("FRANCE", "GLOBAL", "Hi")])
    twice = W.add_messages(once, [("ENGLAND", "FRANCE", "Agreed.")])
    assert opening["phases"][-1]["messages"] == []  # the caller's dict is untouched
    msgs = twice["phases"][-1]["messages"]
    assert [(m["sender"], m["recipient"], m["message"]) for m in msgs] == [
        ("FRANCE", "ENGLAND", "Channel?"),
        ("FRANCE", "GLOBAL", "Hi"),
        ("ENGLAND", "FRANCE", "Agreed."),
    ]
    assert [m["time_sent"] for m in msgs] == [1, 2, 3]  # distinct: none overwrites another
    after, _ = W.adjudicate(twice, {})
    assert [m["message"] for m in after["phases"][0]["messages"]] == ["Channel?", "Hi", "Agreed."]
    assert len(W.load(after).message_history["S1901M"]) == 3
    assert (
        W.add_messages(after, [("ITALY", "GLOBAL", "x")])["phases"][-1]["messages"][0]["time_sent"]
        == 4
    )


def test_adjudicating_the_current_phase_equals_the_engine_on_the_whole_game():
    """`adjudicate` loads only the current phase (fast at any game length) and puts the history
    back; the engine processing the whole game gives the same game, to the last field (the
    engine's wall-clock stamps become the phase's position, so equal games are equal)."""
    rng = random.Random(11)
    saved = W.new_game(game_id="same")
    kinds = set()
    while W.phase_info(saved).year <= 1906:
        info = W.phase_info(saved)
        kinds.add(info.type)
        game = W.load(saved)  # the whole game, history included
        orders = {}
        for power in info.powers_alive:
            legal = W.legal_orders(game, power)
            answer = {k: rng.choice(v) for k, v in legal.items()}
            orders[power] = W.finalize_orders(game, power, answer, legal=legal)
            game.set_orders(power, orders[power])
        game.process()
        fast, _ = W.adjudicate(saved, orders)
        assert fast == W.save(game), info.name
        assert W.current(fast)["phases"] == fast["phases"][-1:]
        saved = fast
    assert kinds >= {"M", "A"}
    assert [p["state"]["timestamp"] for p in saved["phases"]] == list(
        range(1, len(saved["phases"]) + 1)
    )


# --- one position loaded once: what is shared must equal what the engine computes afresh ---------


def test_shared_positions_give_what_a_fresh_engine_gives():
    """Legal orders, unit blocks, hold orders and the secretary's quick path (every order one of
    its key's legal orders) against a fresh engine, over a random game with retreats and
    adjustments; press written without the engine equals the engine's own saved form."""
    from diplomacy.engine.message import Message

    from wargraph.graphs.diplomacy.engine import _with_history

    rng = random.Random(3)
    kinds = set()

    def check(saved, info) -> bool:
        kinds.add(info.type)
        fresh = W.load(W.current(saved))
        for power in info.powers_alive:
            legal = W.legal_orders(saved, power)
            assert legal == W.legal_orders(fresh, power), (info.name, power)
            legal[next(iter(legal), "x")] = ["changed"]  # a caller's copy: the cache is intact
            legal = W.legal_orders(saved, power)
            assert legal == W.legal_orders(fresh, power)
            assert W.unit_blocks(saved, power, legal=legal) == W.unit_blocks(fresh, power)
            assert W.hold_orders(saved, power, legal=legal) == W.hold_orders(fresh, power)
            answer = {k: rng.choice(v) for k, v in legal.items()}
            quick = W.check_answer(saved, power, answer, legal=legal)
            accepted, rejected = W.check_orders(saved, power, list(answer.values()))
            if not rejected:  # the engine takes every order as given: so does the quick path
                assert quick == (answer, {}), (info.name, power)
                assert accepted == list(answer.values())
            else:  # e.g. one unit disbanded in two slots: refused as the engine refuses it
                assert quick[1], (info.name, power, rejected)
        if info.type == "M":
            sent = [("FRANCE", "GLOBAL", f"hello {info.name}"), ("ITALY", "austria", "Hi\nthere")]
            for n, (a, b, text) in enumerate(sent, 1):
                fresh.add_message(
                    Message(
                        sender=a.upper(),
                        recipient=b.upper(),
                        message=text,
                        phase=info.name,
                        time_sent=n,
                    )
                )
            added = W.add_messages(saved, sent)
            assert added == _with_history(saved, W.save(fresh))  # as through the engine
        return False

    assert play_random(3, check, until=1904) is None
    assert kinds >= {"M", "A"}
