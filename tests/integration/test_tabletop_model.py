"""The HAIWIRE tabletop drill on the real embedded model: one incident, one inject, the full team."""

from __future__ import annotations

import time

import pytest

from wargraph.graphs.tabletop.graph import OUTCOME_TEXT, roll_die
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.timeout(300)]

TEAM = {"data_scientist", "lawyer", "comms_lead"}
LEADER = "incident_commander"


def test_one_incident_one_inject_on_the_embedded_model(tmp_path):
    seed = 3
    start = time.perf_counter()
    result = play(
        "haiwire",
        overrides=["rounds=1"],  # caps the injects at one, whatever the drawn severity
        context=GameContext(model="embedded", seed=seed, max_tokens=120),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    elapsed = time.perf_counter() - start
    assert elapsed < 90, f"one inject took {elapsed:.0f} s"
    assert result.finished and not result.values.get("error")

    events = result.record["events"]
    by_kind: dict[str, list[dict]] = {}
    for e in events:
        by_kind.setdefault(e["kind"], []).append(e)
    assert len(by_kind["incident"]) == 1 and len(by_kind["inject"]) == 1
    (roll,) = by_kind["roll"]
    assert roll["data"]["roll"] == roll_die(seed, 1, 20)
    assert {p["author"] for p in by_kind["proposal"]} == TEAM
    (team_plan,) = by_kind["plan"]
    assert team_plan["author"] == "incident_response" and team_plan["text"].strip()
    (narration,) = by_kind["narration"]
    assert narration["text"].strip() and narration["data"]["outcome"] == roll["data"]["outcome"]
    answers = {e["data"]["question"]: e["data"] for e in by_kind["answer"]}
    assert answers["lawyer_consulted"]["choice"] in ("yes", "no", "undetermined")
    assert len(answers) == 4

    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {c["role"] for c in calls} == TEAM | {LEADER, "control"}
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls)
    narrate = [c for c in calls if c["task"] == "narrate"]
    prompt = narrate[-1]["messages"][-1]["content"]
    assert OUTCOME_TEXT[roll["data"]["outcome"]] in prompt
    # The members' proposals stay inside the team during play (the leader may quote them in the
    # team plan, which the control does see; very short texts could match by chance).
    for p in by_kind["proposal"]:
        if len(p["text"]) >= 20 and p["text"] not in team_plan["text"]:
            assert p["text"] not in prompt
    sources = [e["data"]["source"] for e in events if e.get("data", {}).get("source")]
    assert sources.count("model") >= len(sources) - 2  # mostly the model, not the fallback
