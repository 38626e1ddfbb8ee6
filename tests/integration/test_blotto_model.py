"""Blotto on the real embedded model: one round of talks, a diary, allocations under the flat
grammar, the secretary, the scored fronts and the control's narration."""

from __future__ import annotations

import pytest

from wargraph.graphs.blotto.world import check_allocation, score_fronts
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]


def test_one_round_of_blotto_on_the_embedded_model(tmp_path):
    result = play(
        "blotto",
        overrides=["rounds=1", "questions=[]"],
        context=GameContext(model="embedded", seed=5, max_tokens=120),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    assert result.finished and not result.values.get("error")
    sc = result.record["scenario"]
    fronts, budget = list(sc["blotto"]["fronts"]), sc["blotto"]["budget"]
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {c["role"] for c in calls} == {"north", "south", "control"}
    assert {"message", "diary", "allocate", "narrate"} <= {c["task"] for c in calls}
    # the flat schema holds under the grammar: the model's allocations parse (no fallback)
    allocations = [e for e in result.record["events"] if e["kind"] == "allocation"]
    assert {e["data"]["source"] for e in allocations} == {"model"}
    (res,) = [e for e in result.record["events"] if e["kind"] == "result"]
    played = res["data"]["allocations"]
    assert all(check_allocation(a, fronts, budget)[1] == [] for a in played.values())
    assert res["data"]["points"] == score_fronts(played, sc["blotto"]["fronts"])[1]
    (told,) = [e for e in result.record["events"] if e["kind"] == "narration"]
    assert told["text"].strip()
