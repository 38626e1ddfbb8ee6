"""Diplomacy prompts that agree with the game, on scripted games of 1901: every prompt's header
names the phase being played (from the engine), no prompt shows a block twice
(`quality_metrics.repeated_blocks`: a heading twice, a line of 30+ characters twice, or a list
whose items all appear elsewhere) and a power that heard nothing in a phase gets its diary entry
by code, without a model call."""

from __future__ import annotations

import pytest

from benchmarks import quality_metrics as Q
from wargraph.kernel.context import GameContext
from wargraph.runs.records import load_record
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = pytest.mark.slow

YEAR_1901 = {"diplomacy.max_year": 1901, "diplomacy.maps": "none"}


def scripted_1901(tmp_path, **overrides):
    out = tmp_path / "game"
    play(
        "diplomacy",
        overrides={**YEAR_1901, **overrides},
        context=GameContext(model="scripted", seed=3),
        db=None,
        out_dir=out,
    )
    return read_trace(out / "trace.jsonl"), load_record(out / "record.json")


@pytest.fixture(scope="module")
def talks_game(tmp_path_factory):
    return scripted_1901(tmp_path_factory.mktemp("talks"), **{"diplomacy.negotiation_rounds": 1})


def user_turn(entry: dict) -> str:
    return next(m["content"] for m in entry["messages"] if m["role"] == "human")


def test_every_prompt_names_the_phase_being_played(talks_game):
    trace, record = talks_game
    played = Q.phases_by_round(record)
    assert {p[:5] for p in played.values()} >= {"S1901", "F1901"}
    prompts = Q.prompts(trace)
    assert prompts
    for entry in prompts:
        header = user_turn(entry).splitlines()[0]
        assert header.startswith("# The game: Diplomacy, ")
        assert Q.named_phase(header) == played[int(entry["round"])][:5], header
        assert played[int(entry["round"])] in header  # the engine's code too


def test_no_prompt_shows_a_block_twice(talks_game):
    trace, _ = talks_game
    for entry in Q.prompts(trace):
        prompt = "\n".join(m["content"] for m in entry["messages"])
        assert Q.repeated_blocks(prompt) == [], (entry["ask_id"], Q.repeated_blocks(prompt))


def test_diaries_of_phases_with_talks_are_asked(talks_game):
    trace, record = talks_game
    diaries = [e for e in record["events"] if e["kind"] == "diary"]
    assert diaries and all(e["data"]["source"] == "scripted" for e in diaries)
    assert sum(1 for e in Q.prompts(trace) if e["task"] == "diary") == len(diaries)


def test_a_silent_phase_gets_its_diary_by_code_without_a_call(tmp_path):
    trace, record = scripted_1901(tmp_path, **{"diplomacy.press": "none"})
    assert [e for e in Q.prompts(trace) if e["task"] == "diary"] == []
    diaries = [e for e in record["events"] if e["kind"] == "diary"]
    assert len(diaries) == 2 * 7  # spring and fall movement, every power
    for e in diaries:
        assert e["data"]["source"] == "code"
        assert (
            e["data"]["summary"]
            == f"{e['data']['phase']}: no messages were sent or received this phase."
        )
    assert Q.silent_diaries(record) == (14, 0, 0)
