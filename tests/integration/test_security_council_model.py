"""The held-out Security Council (tests/plugins/security_council) on the real embedded model: one
round; its templates reach the prompts, every vote parses under the grammar as one of the three,
and the round's briefing reaches no other member's prompt."""

from __future__ import annotations

import pytest

from tests.plugins.security_council.world import VOTES
from tests.unit.test_security_council import events_of, family, prompt_of  # noqa: F401  (fixture)
from wargraph import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.timeout(1800)]


def test_one_round_of_the_council_on_the_embedded_model(family, tmp_path):  # noqa: F811
    result = play(
        "security_council",
        overrides=["rounds=1"],
        context=GameContext(model="embedded", seed=3, max_tokens=80),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    assert result.finished and not result.values.get("error")
    record = result.record
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {"draft", "answer", "vote", "narrate"} <= {c["task"] for c in calls}
    votes = events_of(record, "vote")
    assert len(votes) == 7 and {e["data"]["source"] for e in votes} == {"model"}
    [outcome] = events_of(record, "outcome")
    assert set(outcome["data"]["votes"].values()) <= set(VOTES)
    assert any("You hold the pen" in prompt_of(c) for c in calls if c["task"] == "draft")
    [briefing] = events_of(record, "inject")
    others = [c for c in calls if c["role"] != briefing["audience"][0]]
    assert others and not any(briefing["text"] in prompt_of(c) for c in others)
