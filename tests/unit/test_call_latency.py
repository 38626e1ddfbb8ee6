"""A call's recorded latency is the model's time, not the time spent waiting for the endpoint
(seven Diplomacy seats share one in-process model: the waits would count several times)."""

from __future__ import annotations

import threading
import time

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from wargraph.nodes.schemas import Plan
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import LLMDecider


class SlowModel(FakeListChatModel):
    def invoke(self, *args, **kwargs):  # one model call takes 0.3 s
        time.sleep(0.3)
        return super().invoke(*args)


def test_latency_excludes_the_wait_for_the_model_slot(tmp_path):
    trace = tmp_path / "trace.jsonl"
    seat = {"kind": "ai", "model": "embedded", "trace_path": str(trace), "retries": 0}

    def ask(i: int) -> dict:
        return {
            "id": f"r1.order.plan.p{i}",
            "role": f"p{i}",
            "phase": "order",
            "round": 1,
            "task": "plan",
            "system": "s",
            "context": "c",
            "question": "q",
            "schema": "plan",
            "fallback": {"plan": "wait"},
        }

    deciders = [LLMDecider(seat, model=SlowModel(responses=['{"plan": "go"}'])) for _ in range(3)]
    threads = [
        threading.Thread(target=d.decide, args=(ask(i), Plan)) for i, d in enumerate(deciders)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.perf_counter() - start >= 0.9  # the embedded endpoint takes one call at a time
    calls = [c for c in read_trace(trace) if c["event"] == "call"]
    assert len(calls) == 3
    assert all(0.29 <= c["latency_s"] < 0.6 for c in calls), [c["latency_s"] for c in calls]
