"""Bots are declared by the family whose seats they play (`Family.bots`): nothing else lists
them, a plug-in adds its own, and a misspelled or clashing bot is an error naming it."""

from __future__ import annotations

import random

import pytest

import wargraph.kernel.families as families
from wargraph import Bot, Family
from wargraph.models.chat import ModelRefError, parse_model_ref
from wargraph.seats import bots


def first_front(ask, rng):
    return None  # no strategy: the seeded scripted decider answers


BASE = dict(
    scenario_class="wargraph.kernel.scenario:Scenario", graph="wargraph.graphs.crisis.graph"
)
ECHO = Family("echo", **BASE, bots=(Bot("echo_first", f"{__name__}:first_front"),))
TYPO = Family("typo", **BASE, bots=(Bot("typo_bot", f"{__name__}:no_such_function"),))
CLASH = Family("clash", **BASE, bots=(Bot("greedy", f"{__name__}:first_front"),))
NOT_A_BOT = Family("notbot", **BASE, bots=({"name": "x"},))  # type: ignore[arg-type]


def test_the_builtin_bots_come_from_their_families():
    assert bots.known() == {
        "greedy": "diplomacy",
        "hold": "diplomacy",
        "random_legal": "diplomacy",
        "fixed": "blotto",
        "even": "blotto",
        "best_response": "blotto",
    }
    orders = bots.strategy("hold")({"task": "orders", "units": []}, random.Random(0))
    assert orders is None or isinstance(orders, dict)
    assert parse_model_ref("bot:even").provider == "bot"
    with pytest.raises(ModelRefError, match="unknown bot 'nosuch'.*best_response"):
        parse_model_ref("bot:nosuch")


def test_a_plugin_declares_its_own_bot(entry_points):
    entry_points(echo=f"{__name__}:ECHO")
    assert bots.family_of("echo_first") == "echo"
    assert bots.strategy("echo_first") is first_front
    assert families.problems() == {}


def test_a_misspelled_strategy_names_family_bot_and_reference(entry_points):
    entry_points(typo=f"{__name__}:TYPO")
    why = families.problems()["typo"]
    assert "family 'typo'" in why and "'typo_bot'" in why and "no_such_function" in why
    with pytest.raises(families.FamilyError, match="typo_bot"):
        families.load("typo")


def test_a_bot_name_taken_by_another_family_is_reported_and_the_first_keeps_it(entry_points):
    entry_points(clash=f"{__name__}:CLASH")
    assert "'greedy' is 'diplomacy''s already" in families.problems()["clash"]
    assert bots.family_of("greedy") == "diplomacy"


def test_a_bot_that_is_not_a_bot_is_refused_at_declaration(entry_points):
    entry_points(notbot=f"{__name__}:NOT_A_BOT")
    assert "not a wargraph.Bot" in families.problems()["notbot"]
