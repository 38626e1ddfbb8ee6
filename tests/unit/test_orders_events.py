"""`Orders.kind` and `Orders.public` name and open the event an answer makes without overriding
`events`; the default `proposal` reads a one-field answer (a vote) as well as a plan."""

from __future__ import annotations

from wargraph import EVERYONE, GameContext, Table, load_scenario
from wargraph.worlds import Orders


def _table(**overrides: str) -> Table:
    sc = load_scenario("summit", [f"{k}={v}" for k, v in overrides.items()])
    return Table(sc, GameContext(), {"round": 1, "phase": "vote", "events": []})


def test_the_default_event_is_a_plan_for_the_actor_and_the_control():
    table = _table()
    actor = table.scenario.actors[0]
    [e] = Orders().events(table, actor, "We hold.", "scripted")
    assert (e["kind"], e["audience"]) == ("plan", [actor, table.scenario.control.name])


def test_kind_and_public_name_and_open_the_event():
    table = _table()
    actor = table.scenario.actors[0]
    [e] = Orders(task="vote", kind="vote", public=True).events(table, actor, "yes", "script")
    assert (e["kind"], e["audience"], e["text"]) == ("vote", [EVERYONE], "yes")
    assert e["data"] == {"source": "script"} and e["id"] == f"r1.vote.vote.{actor}"


def test_public_false_keeps_a_plan_private_whatever_the_scenario_says():
    table = _table(public_plans="true")
    actor = table.scenario.actors[0]
    [shown] = Orders().events(table, actor, "We hold.", "scripted")
    [kept] = Orders(public=False).events(table, actor, "We hold.", "scripted")
    assert shown["audience"] == [EVERYONE]
    assert kept["audience"] == [actor, table.scenario.control.name]


def test_the_default_proposal_reads_a_plan_or_a_one_field_answer():
    table, orders = _table(), Orders()
    assert orders.proposal(table, "a", {"plan": "We hold."}) == "We hold."
    assert orders.proposal(table, "a", {"vote": "abstain"}) == "abstain"
    assert orders.proposal(table, "a", {"x": 1, "y": 2}) == ""  # several fields: override it
