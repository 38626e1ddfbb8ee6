"""Bots of known strength play legal, purposeful moves."""

from __future__ import annotations

import random

import pytest

import wargraph.graphs.diplomacy.rules as W
from wargraph.graphs.blotto.bots import best_response, fixed_split
from wargraph.graphs.diplomacy.bots import greedy, random_legal
from wargraph.graphs.diplomacy.orders import legal_orders
from wargraph.models.chat import ModelRefError, parse_model_ref
from wargraph.seats.bots import BotDecider


def test_bot_references():
    assert str(parse_model_ref("bot:greedy")) == "bot:greedy"
    with pytest.raises(ModelRefError, match="unknown bot 'best'"):
        parse_model_ref("bot:best")


def order_ask(game, power: str) -> dict:
    legal = legal_orders(game, power)
    return {
        "id": f"x.{power}",
        "task": "orders",
        "schema_args": {"legal": legal},
        "fallback": dict(zip(legal, W.hold_orders(game, power, legal=legal), strict=False)),
        "facts": {
            "power": power,
            "phase_type": game.phase_type,
            "units": W.unit_blocks(game, power, n_foreign=0, legal=legal),
        },
    }


def test_greedy_heads_for_centres_and_supports(tmp_path):
    game = W.load(W.new_game())
    ask = order_ask(game, "FRANCE")
    orders = greedy(ask, random.Random(0))
    legal = ask["schema_args"]["legal"]
    assert all(orders[u] in legal[u] for u in legal)
    moves = [o for o in orders.values() if " - " in o]
    assert len(moves) >= 2  # spring 1901: units leave home for Spain, Belgium, Portugal ...
    targets = {o.split(" - ")[1][:3] for o in moves}
    assert len(targets) == len(moves)  # never two own units into one province


def test_greedy_supports_when_it_cannot_move_on():
    # Two French units next to Belgium: one attacks, the other cannot claim it too and supports
    game = W.load(W.new_game())
    game.clear_units()
    game.set_units("FRANCE", ["A PIC", "A BUR"])
    game.set_units("GERMANY", ["A BEL"])
    game.set_centers("GERMANY", ["BEL", "BER", "MUN", "KIE"])
    ask = order_ask(game, "FRANCE")
    orders = greedy(ask, random.Random(0))
    supports = [o for o in orders.values() if " S " in o]
    moves = [o for o in orders.values() if " - " in o]
    assert moves and supports, orders
    assert supports[0].endswith(moves[0])


def test_random_legal_is_legal_and_seeded():
    game = W.load(W.new_game())
    ask = order_ask(game, "RUSSIA")
    a, b = random_legal(ask, random.Random(3)), random_legal(ask, random.Random(3))
    assert a == b and all(a[u] in ask["schema_args"]["legal"][u] for u in a)


def blotto_ask(last: dict) -> dict:
    return {
        "id": "b",
        "task": "allocate",
        "schema": "allocation",
        "fallback": {"west": 4, "centre": 3, "east": 3},
        "facts": {
            "side": "north",
            "fronts": {"west": 1, "centre": 1, "east": 2},
            "budget": 10,
            "last": last,
        },
    }


def test_blotto_fixed_and_best_response():
    rng = random.Random(0)
    assert fixed_split(blotto_ask({}), rng) == {"west": 3, "centre": 2, "east": 5}
    assert best_response(blotto_ask({}), rng) == {"west": 3, "centre": 2, "east": 5}
    reply = best_response(blotto_ask({"south": {"west": 4, "centre": 3, "east": 3}}), rng)
    assert sum(reply.values()) == 10
    assert reply["east"] >= 4 and reply["centre"] >= 4  # outbids on 3 of 4 points


def test_a_bot_answers_other_asks_like_the_scripted_decider():
    import wargraph.graphs.diplomacy.schemas  # noqa: F401  (registers the orders schema)
    from wargraph.seats.schemas import schema_for
    from wargraph.seats.scripted import ScriptedDecider

    ask = {
        "id": "m",
        "role": "FRANCE",
        "task": "message",
        "schema": "diplomacy_orders",
        "schema_args": {"legal": {"A PAR": ["A PAR H", "A PAR - BUR"]}},
        "fallback": {"A PAR": "A PAR H"},
    }
    schema = schema_for(ask)
    assert BotDecider("greedy", 1).decide(ask, schema) == ScriptedDecider(1).decide(ask, schema)


@pytest.mark.parametrize(
    ("scenario", "overrides", "bot_seat", "other"),
    [
        ("blotto", {"rounds": 2, "blotto.exchanges": 0, "questions": []}, "north", "south"),
        (
            "diplomacy",
            {
                "diplomacy.max_year": 1901,
                "diplomacy.negotiation_rounds": 0,
                "diplomacy.diary": False,
                "diplomacy.maps": "none",
            },
            "FRANCE",
            "GERMANY",
        ),
    ],
)
def test_only_bot_seats_get_facts(tmp_path, monkeypatch, scenario, overrides, bot_seat, other):
    """The board facts ride on a bot's asks only: a model's asks (and checkpoints) stay lean."""
    import wargraph.seats.bots as bots
    import wargraph.seats.deciders as deciders
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    seen: dict[str, list[bool]] = {}

    def spy(cls):
        original = cls.decide

        def decide(self, ask, schema, *, memory=""):
            seen.setdefault(ask["role"], []).append("facts" in ask)
            return original(self, ask, schema, memory=memory)

        monkeypatch.setattr(cls, "decide", decide)

    spy(bots.BotDecider)
    spy(deciders.ScriptedDecider)
    bot = "bot:best_response" if scenario == "blotto" else "bot:greedy"
    res = play(
        scenario,
        overrides=overrides,
        context=GameContext(model="scripted", role_models={bot_seat: bot}),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "g",
    )
    assert res.record["done"]
    assert any(seen[bot_seat]) and not any(seen[other])
