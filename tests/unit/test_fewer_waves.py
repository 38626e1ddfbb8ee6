"""Fewer calls in series per phase (issue 30): a chat model is built once however many seats ask
for it at once, a model seat's questions of one step are asked together, and Diplomacy's
`diary: with_orders` asks the diaries in the orders' step (`nodes.together`)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import wargraph.graphs.diplomacy.graph as D
import wargraph.models.chat as models
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.nodes.library import CARD_PHASES
from wargraph.nodes.negotiate import negotiate
from wargraph.nodes.together import JoinedPhaseError, together
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.agents import model_seat


def test_seats_asking_for_one_model_at_once_build_it_once(monkeypatch):
    built: list[tuple] = []

    def slow_build(*args: Any) -> object:
        built.append(args)
        time.sleep(0.05)  # long enough for every other seat to ask meanwhile
        return object()

    monkeypatch.setattr(models, "_CHAT_CACHE", {})
    monkeypatch.setattr(models, "_build_chat_model", slow_build)
    got: list[object] = []
    seats = [
        threading.Thread(target=lambda: got.append(models.chat_model("openai:m@http://x/v1")))
        for _ in range(7)
    ]
    for s in seats:
        s.start()
    for s in seats:
        s.join()
    assert len(built) == 1 and len(got) == 7 and all(m is got[0] for m in got)


@pytest.mark.parametrize(
    ("seat", "together_"),
    [
        ({"kind": "ai", "model": "openai:m@http://x/v1"}, True),
        ({"kind": "ai", "model": "embedded"}, True),
        ({"kind": "human"}, False),  # asked in turn, by interrupts
        ({"kind": "scripted"}, False),
        ({"kind": "ai", "model": "scripted"}, False),
        ({"kind": "ai", "model": "bot:greedy"}, False),
        ({"kind": "ai", "model": "openai:m@http://x/v1", "script": []}, False),
    ],
)
def test_only_a_models_questions_are_asked_together(seat, together_):
    assert model_seat({"seat": seat}) is together_  # type: ignore[typeddict-item]


def test_a_phase_that_loops_cannot_be_joined():
    with pytest.raises(JoinedPhaseError, match="negotiate"):
        together(("negotiate", negotiate), ("order", CARD_PHASES["order"]))
    with pytest.raises(JoinedPhaseError, match="distinct"):
        together(("order", CARD_PHASES["order"]), ("order", CARD_PHASES["order"]))


def _game(tmp_path, *overrides: str):
    return play(
        "diplomacy",
        overrides=["diplomacy.max_year=1901", "diplomacy.maps=none", *overrides],
        context=GameContext(model="scripted", seed=3),
        db=None,
        out_dir=tmp_path,
    )


def test_diaries_with_orders_are_asked_in_the_orders_step_and_recorded_the_same(tmp_path):
    graph = D.build(load_scenario("diplomacy", ["diplomacy.diary=with_orders"]))
    assert "summarize" not in graph.nodes and "order" in graph.nodes
    shipped = _game(tmp_path / "shipped")
    joined = _game(tmp_path / "joined", "diplomacy.diary=with_orders")

    def kept(result) -> list[tuple]:
        return [(e["id"], e["phase"], e["kind"], e["text"]) for e in result.values["events"]]

    # the scripted decider answers by ask id: the same answers, recorded the same way
    assert kept(joined) == kept(shipped)
    diaries = [e for e in joined.values["events"] if e["kind"] == "diary"]
    assert len(diaries) == 14 and {e["phase"] for e in diaries} == {"summarize"}

    def first_orders_prompt(folder) -> str:
        calls = read_trace(folder / "trace.jsonl")
        return next(c for c in calls if c["task"] == "orders" and c["role"] == "FRANCE")[
            "messages"
        ][-1]["content"]

    # what the orders lose: this phase's entry, written in the same step
    assert "S1901M:\n> FRANCE diary summary" in first_orders_prompt(tmp_path / "shipped")
    assert "S1901M:\n> FRANCE diary" not in first_orders_prompt(tmp_path / "joined")


def test_a_step_asks_the_diaries_and_orders_together(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    sc = load_scenario("diplomacy", ["diplomacy.max_year=1901", "diplomacy.diary=with_orders"])
    graph = D.build(sc).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 500}
    tasks: list[set[str]] = []
    for update in graph.stream(
        {"scenario": sc.model_dump()},
        config,
        context=GameContext(model="scripted", seed=3),
        stream_mode="updates",
    ):
        for node, values in update.items():
            if node == "order" and (values or {}).get("asks"):
                tasks.append({a["task"] for a in values["asks"]})
    assert tasks[0] == {"diary", "orders"}  # one step, one latency
