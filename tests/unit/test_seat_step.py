"""A seat's step (src/wargraph/seats/agents.py): the agent node decides its asks itself and
keeps the seat's state in the seat's own checkpoint namespace. Its notes reach its own prompts
only, outlive a restart of the process, and a person reviewing a draft never makes the seat ask
its model again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import build_for
from wargraph.seats.scripted import ScriptedDecider
from wargraph.store.saver import open_saver

NOTES = "Your private notes from earlier (yours alone):\n"


def _notes(call: dict[str, Any]) -> list[str]:
    """The notes section of a traced prompt, one note a line ("> (round 1, act) ...")."""
    prompt = call["messages"][-1]["content"]
    if NOTES not in prompt:
        return []
    return prompt.split(NOTES, 1)[1].split("\n\n", 1)[0].splitlines()


def _memory(db: Path, thread: str, role: str) -> list[dict[str, Any]]:
    with open_saver(db) as saver:
        tup = saver.get_tuple(
            {"configurable": {"thread_id": thread, "checkpoint_ns": f"agent_{role}"}}
        )
    assert tup is not None, role
    return list(tup.checkpoint["channel_values"]["memory"])


def test_a_seats_notes_reach_only_its_own_prompts_and_outlive_a_restart(tmp_path):
    sc = load_scenario("wwi", ["rounds=2"])
    db, thread = tmp_path / "game.sqlite", "notes"
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": 10_000}
    ctx = GameContext(model="scripted", seed=3, trace_path=str(tmp_path / "trace.jsonl"))
    # round 1, then the process "ends" (the store is closed) ...
    with open_saver(db) as saver:
        graph = build_for(sc).compile(checkpointer=saver, interrupt_after=["adjudicate"])
        graph.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
        stopped = graph.get_state(cfg)
        assert stopped.next and not stopped.values.get("done")
    # ... and another one plays on from the store alone
    with open_saver(db) as saver:
        graph = build_for(sc).compile(checkpointer=saver)
        while not graph.get_state(cfg).values.get("done"):
            graph.invoke(None, cfg, context=ctx)

    calls = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    roles = sorted({c["role"] for c in calls})
    memory = {r: _memory(db, thread, r) for r in roles}
    for role in roles:  # a seat keeps only what it answered
        own = {c["ask_id"] for c in calls if c["role"] == role}
        assert {m["id"] for m in memory[role]} <= own, role
    shown = 0
    for call in calls:
        own = [m["text"] for m in memory[call["role"]]]
        for line in _notes(call):
            note = line.removeprefix("> ")[:60]  # a note's opening identifies it
            assert any(n.startswith(note) for n in own), (call["role"], call["ask_id"], note)
            shown += 1
    assert shown, "no prompt showed a seat's notes: the test would check nothing"
    # the second process's prompts show notes the first process wrote
    later = [n for c in calls if c["round"] == 2 for n in _notes(c) if "(round 1," in n]
    assert later, "round 1's notes did not reach round 2 after the restart"


@pytest.fixture
def asked(monkeypatch) -> list[str]:
    """The id of every ask the scripted decider answers, in order."""
    ids: list[str] = []
    decide = ScriptedDecider.decide

    def counted(self, ask, schema, *, memory=""):
        ids.append(ask["id"])
        return decide(self, ask, schema, memory=memory)

    monkeypatch.setattr(ScriptedDecider, "decide", counted)
    return ids


def test_a_person_reviewing_a_draft_never_makes_the_seat_ask_again(checkpointer, asked):
    sc = load_scenario("azuristan_crimsonia", ["rounds=1", "questions=[]", "control.review=true"])
    graph = build_for(sc).compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "r"}}
    ctx = GameContext(model="scripted")
    graph.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
    (review,) = graph.get_state(cfg).interrupts
    drafted = [a for a in asked if a.endswith(".control")]
    assert drafted, asked
    # a wrong answer asks the person again; the seat's draft is not made again
    graph.invoke(Command(resume={review.id: {"accept": "maybe"}}), cfg, context=ctx)
    (again,) = graph.get_state(cfg).interrupts
    assert again.value["error"] and again.value["draft"] == review.value["draft"]
    graph.invoke(Command(resume={again.id: {"accept": True}}), cfg, context=ctx)
    state = graph.get_state(cfg)
    assert state.values["done"] and not state.interrupts
    assert [a for a in asked if a.endswith(".control")] == drafted
    memory = graph.get_state(
        {"configurable": {"thread_id": "r", "checkpoint_ns": "agent_control"}}
    ).values["memory"]
    assert [m["id"] for m in memory] == drafted  # the reviewed step is remembered once


def test_a_game_forked_from_an_earlier_state_gives_each_seat_its_notes_of_then(checkpointer, asked):
    sc = load_scenario("azuristan_crimsonia", ["rounds=2", "questions=[]"])
    graph = build_for(sc).compile(checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "f"}}
    ctx = GameContext(model="scripted", seed=5)
    graph.invoke({"scenario": sc.model_dump()}, cfg, context=ctx)
    seat = {"configurable": {"thread_id": "f", "checkpoint_ns": "agent_azuristan"}}
    played = graph.get_state(seat).values["memory"]
    assert {m["round"] for m in played} == {1, 2}
    # the first checkpoint of round 2, and the game played on again from there
    start = next(
        s
        for s in reversed(list(graph.get_state_history(cfg)))
        if s.values.get("round") == 2 and s.next and not s.next[0].startswith("agent_")
    )
    asked.clear()
    graph.invoke(None, start.config, context=ctx)
    # round 2 is asked again (a seat does not hand back its answers of the first play) ...
    assert asked and all(a.startswith("r2.") for a in asked), asked
    # ... from the notes of round 1, and ends with the same notes
    assert graph.get_state(seat).values["memory"] == played


def test_a_seat_takes_the_checkpoint_it_wrote_without_reading_it_again(tmp_path, monkeypatch):
    """Issue 43: each seat read, unsealed and decoded its own last checkpoint before its request
    left. In a game's process the seat keeps the one it wrote (the game's state records it), so
    it reads none after its first step; its notes are the same as a restarted process reads."""
    from wargraph.runs.runner import play
    from wargraph.store.saver import Saver

    reads: list[str] = []
    real = Saver.get_tuple

    def counting(self, config):
        ns = config["configurable"].get("checkpoint_ns", "")
        if ns.startswith("agent_"):
            reads.append(ns)
        return real(self, config)

    monkeypatch.setattr(Saver, "get_tuple", counting)
    db = tmp_path / "g.sqlite"
    result = play(
        "wwi",
        overrides=["rounds=3"],
        context=GameContext(model="scripted", seed=2),
        db=db,
        thread_id="kept",
        out_dir=tmp_path / "out",
    )
    assert result.finished
    calls = [json.loads(x) for x in (tmp_path / "out" / "trace.jsonl").read_text().splitlines()]
    seats = sorted({c["role"] for c in calls})
    # a seat's first step finds no checkpoint of its own; its later steps read none
    assert sorted(reads) == [f"agent_{r}" for r in seats]
    later = [n for c in calls if c.get("round") == 3 for n in _notes(c) if "(round 2," in n]
    assert later  # later prompts still carry the seat's notes
    for role in seats:
        assert _memory(db, "kept", role)


def test_the_seats_kept_per_saver_are_bounded(tmp_path, monkeypatch):
    """A study plays many games on one saver: the seats' last checkpoints kept in memory stay
    within WRITTEN_KEPT, the oldest dropped first; a dropped seat reads its checkpoint from the
    store again and keeps its notes."""
    import wargraph.seats.agents as agents
    from wargraph.runs.runner import play

    monkeypatch.setattr(agents, "WRITTEN_KEPT", 3)
    seen: list[dict] = []
    real = agents._written

    def watching(saver):
        kept = real(saver)
        if kept is not None and not any(k is kept for k in seen):
            seen.append(kept)
        return kept

    monkeypatch.setattr(agents, "_written", watching)
    result = play(
        "wwi",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=2),
        db=tmp_path / "g.sqlite",
        thread_id="bounded",
        out_dir=tmp_path / "out",
    )
    assert result.finished and seen
    assert all(len(kept) == 3 for kept in seen), [len(k) for k in seen]
    calls = [json.loads(x) for x in (tmp_path / "out" / "trace.jsonl").read_text().splitlines()]
    later = [n for c in calls if c.get("round") == 2 for n in _notes(c) if "(round 1," in n]
    assert later  # evicted seats still read their notes (from the store)
