"""The bargaining plug-in (tests/plugins/bargain) on the real embedded model: one round, its own
templates reach the model's prompts, the split and the replies parse under the grammar, and
adjudicate sees the proposer's split next to both replies."""

from __future__ import annotations

import pytest

from tests.unit.test_bargain_plugin import SCENARIO, of_kind, plugin  # noqa: F401  (fixture)
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]


def test_one_round_of_bargaining_on_the_embedded_model(plugin, tmp_path):  # noqa: F811
    result = play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="embedded", seed=3, max_tokens=80),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    assert result.finished and not result.values.get("error")
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {"offer", "reply"} <= {c["task"] for c in calls}
    prompts = {c["task"]: str(c.get("messages") or c.get("prompt")) for c in calls}
    assert "propose how to split a pie of 90" in prompts["offer"]  # the plug-in's template
    assert "three-way bargaining" in prompts["offer"]  # its player_system, over wargraph's
    replies = of_kind(result.record, "reply")
    assert {e["author"] for e in replies} == {"bob", "cat"}
    assert {e["data"]["source"] for e in replies + of_kind(result.record, "offer")} == {"model"}
    (res,) = of_kind(result.record, "deal|refused")
    assert sum(res["data"]["split"].values()) == 90
