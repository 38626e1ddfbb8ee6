"""Games paused at a person under wargraph before the seat's own node (commit 7106707: a seat's
step then ran as its subgraph, which raised the person's question) resume and finish under this
code, through what a user runs: `runner.resume` with the answer keyed by the id the store shows
(as the seat page and a LangGraph client send it), and `wargraph resume` at a terminal.

The store and what the old code made of it are in tests/fixtures/paused_before_seat_node (made
by its make.py at 373f789): three games of `azuristan_crimsonia`, a person's seat waiting for its
round-1 plan, the same seat waiting in round 2 with notes of round 1, and the control's round-1
narration waiting for a person's review. Each must end as the old code ended it with the same
answers: every event the same (the answers in the record as given, nothing lost or doubled),
and the seat's notes from before the pause still its own.

Regression: the answer went to the old interrupt id, which the seat's node (raising the question
from another task) never matched: the answer was dropped and the person asked again."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command
from typer.testing import CliRunner

from tests.aio import run
from wargraph.cli import app
from wargraph.runs.runner import game_graph, load_run, resume, thread_config
from wargraph.store.saver import open_async_saver, open_saver

FIXTURE = Path(__file__).parents[1] / "fixtures" / "paused_before_seat_node"
EXPECTED: dict[str, dict[str, Any]] = json.loads((FIXTURE / "expected.json").read_text())
SEAT = {"first": "azuristan", "later": "azuristan", "review": "control"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    copy = tmp_path / "games.sqlite"
    shutil.copy(FIXTURE / "games.sqlite", copy)
    return str(copy)


def stored(db: str, thread: str) -> tuple[list[Any], dict[str, Any], list[dict[str, Any]]]:
    """The questions waiting, the game's values and the waiting seat's notes, as stored."""
    sc, _ = load_run(db, thread)
    with open_saver(db, create=False) as saver:
        graph = game_graph(sc, saver)
        state = graph.get_state(thread_config(thread))
        ns = {"configurable": {"thread_id": thread, "checkpoint_ns": f"agent_{SEAT[thread]}"}}
        notes = graph.get_state(ns).values.get("memory", [])
    return list(state.interrupts), state.values, notes


@pytest.mark.parametrize("thread", sorted(EXPECTED))
def test_an_old_pause_resumes_by_its_id_and_ends_as_the_old_code_did(db, thread):
    old = EXPECTED[thread]
    waiting, values, notes = stored(db, thread)
    assert [(i.id, i.value) for i in waiting] == [(old["waiting"]["id"], old["waiting"]["value"])]
    assert values["events"] == old["events"] and notes == old["notes"]

    # resumed with no answer: the same question stays open, under the same id
    again = resume(db=db, thread_id=thread)
    assert again.interrupts == [old["waiting"]] and again.values["events"] == old["events"]

    answers = list(old["answers"])
    result = resume(db=db, thread_id=thread, answers={old["waiting"]["id"]: answers[0]})
    asked = [old["waiting"]["value"]["ask_id"]]
    given = 1
    while result.interrupts:  # a later question (never the one answered again)
        (question,) = result.interrupts
        assert question["value"]["seat"] == SEAT[thread]
        assert question["value"]["ask_id"] not in asked and not question["value"]["error"]
        asked.append(question["value"]["ask_id"])
        result = resume(db=db, thread_id=thread, answers={question["id"]: answers[given]})
        given += 1
    assert result.finished and given == len(answers)

    events = result.record["events"]
    assert events == old["events_at_end"]  # as the old code ended it, answers as given
    assert events[: len(old["events"])] == old["events"]  # nothing before the pause changed
    assert len({e["id"] for e in events}) == len(events)  # nothing doubled
    mine = [e for e in events if e["author"] == SEAT[thread] and e["round"] >= 1]
    for answer in answers:
        text = answer if isinstance(answer, str) else answer.get("text")
        if text:
            assert sum(e["text"] == text for e in mine) == 1, text
    _, _, notes_after = stored(db, thread)
    assert notes_after == old["notes_at_end"]
    assert all(n in notes_after for n in old["notes"])  # the seat's notes of before stay its own


@pytest.mark.parametrize("thread", ["first", "later"])
def test_wargraph_resume_at_a_terminal_answers_the_old_question(db, thread, tmp_path, monkeypatch):
    old = EXPECTED[thread]
    answers = list(old["answers"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": answers.pop(0))
    out = tmp_path / "records"
    r = CliRunner().invoke(app, ["resume", "--thread", thread, "--db", db, "--out", str(out)])
    assert r.exit_code == 0 and "Game over" in r.output, r.output
    assert not answers  # each question asked once
    record = json.loads((out / "record.json").read_text())
    assert record["done"] and record["events"] == old["events_at_end"]
    assert stored(db, thread)[2] == old["notes_at_end"]


@pytest.mark.parametrize("thread", ["later", "review"])
def test_a_served_game_answers_the_old_question_under_ainvoke(db, thread):
    """As a LangGraph server runs the game (`ainvoke` on the saver's async methods), with the
    answer keyed by the id of the question the thread's state shows (the seat page's way)."""
    old = EXPECTED[thread]
    sc, ctx = load_run(db, thread)
    answers = list(old["answers"])

    async def play_on() -> dict[str, Any]:
        async with open_async_saver(db, create=False) as saver:
            graph = game_graph(sc, saver)
            config = thread_config(thread)
            while (state := await graph.aget_state(config)).interrupts:
                (question,) = state.interrupts
                resume = Command(resume={question.id: answers.pop(0)})
                await graph.ainvoke(resume, config, context=ctx)
            return state.values

    values = run(play_on())
    assert values["done"] and not answers
    assert values["events"] == old["events_at_end"]
    assert stored(db, thread)[2] == old["notes_at_end"]
