"""Diplomacy's message question asks the choice (send or pass) before the messages: asked after
them, SmolLM2-135M wrote a message and then passed. Scripted games draw the same messages as
before the field moved (the fixed `action` is not drawn)."""

from __future__ import annotations

import copy
import random

from wargraph.deciders import ScriptedDecider, flat_json_schema, scripted_value, stable_seed
from wargraph.worlds.diplomacy import world as DG

ARGS = {"recipients": ["GLOBAL", "FRANCE"], "limit": 2, "chars": 60}


def test_the_choice_comes_first_and_send_is_its_first_option():
    schema = flat_json_schema(DG._messages_schema(ARGS))
    assert list(schema["properties"]) == ["action", "messages"]
    assert schema["required"] == ["action", "messages"]
    assert schema["properties"]["action"]["enum"][0] == "send"
    assert schema["properties"]["messages"]["minItems"] == 1


def test_scripted_messages_do_not_depend_on_where_the_fixed_choice_stands():
    model = DG._messages_schema(ARGS)
    ask = {
        "id": "r1.negotiate.message.ENGLAND.x1",
        "role": "ENGLAND",
        "task": "message",
        "scripted": {"action": "send"},
        "fallback": {"action": "pass", "messages": []},
    }
    got = ScriptedDecider(seed=5).decide(ask, model)
    assert got["source"] == "scripted" and got["value"]["action"] == "send"
    # the messages alone, drawn from the same seed: what the old order (messages first) drew
    alone = copy.deepcopy(flat_json_schema(model))
    del alone["properties"]["action"]
    rng = random.Random(stable_seed(5, ask["id"]))
    drawn = scripted_value(alone, rng, "ENGLAND message")
    assert got["value"]["messages"] == drawn["messages"]
