"""One Diplomacy movement phase on the real embedded model (SmolLM2-135M-Instruct): every order
comes from the model under the legal-order grammar, and none is refused or rejected."""

from __future__ import annotations

import time

import pytest

import wargraph.graphs.diplomacy.rules as W
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]


def test_one_movement_phase_with_zero_illegal_orders(tmp_path):
    start = time.perf_counter()
    result = play(
        "diplomacy",
        # one engine phase (S1901M), orders only: no press and no diary keep it to 7 calls
        overrides=["rounds=1", "diplomacy.press=none", "diplomacy.diary=false"],
        context=GameContext(model="embedded", seed=11),
        db=tmp_path / "g.sqlite",
        out_dir=tmp_path / "out",
    )
    elapsed = time.perf_counter() - start
    assert result.finished and not result.values.get("error")

    (played,) = [e for e in result.values["events"] if "records" in e.get("data", {})]
    data = played["data"]
    assert data["phase"] == "S1901M"
    assert not any(data["engine_errors"].values())  # the engine rejected nothing
    assert not [r for r in data["records"] if r["invalid"]]  # the secretary refused nothing
    assert not [e for e in result.values["events"] if e["kind"] == "verdict"]
    opening = W.new_game()
    for power in W.POWERS:
        legal = W.legal_orders(opening, power)
        given = data["orders"][power]
        assert len(given) == len(legal)
        assert all(order in legal[" ".join(order.split()[:2])] for order in given), power
        assert data["sources"][power] == ["model"], power  # the model's answer, no fallback

    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert {c["role"] for c in calls} == set(W.POWERS)
    assert all(c["task"] == "orders" and c["attempt"] == 1 for c in calls)  # no re-asks
    assert all(c["prompt_tokens"] < 8192 and c["completion_tokens"] > 0 for c in calls)
    # the final position's map, drawn once the game is over (never during play)
    assert [p.name for p in (tmp_path / "out" / "maps").glob("*.svg")] == ["F1901M.svg"]
    print(f"one movement phase, 7 order calls: {elapsed:.0f} s")
