"""A power's order prompt never drops one of its own units or the unit's orders (issue 29, item
3): scripted games to 1910 (real engine), every order prompt of every power read from the trace
and checked against the engine's units of that phase."""

from __future__ import annotations

import re

import pytest

import wargraph.graphs.diplomacy.geography as G
from wargraph.graphs.diplomacy.orders import legal_orders
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

PHASE = re.compile(r"^# The game: Diplomacy, .*\((\w+)\)", re.M)


def _units_to_order(state: dict, power: str, kind: str) -> list[str]:
    """The units a power orders in a phase: all of them in movement, the dislodged in retreats."""
    if kind == "M":
        return [u.lstrip("*") for u in state["units"].get(power, []) if not u.startswith("*")]
    if kind == "R":
        return list(state["retreats"].get(power, {}))
    return []


@pytest.mark.parametrize("seed", [3, pytest.param(11, marks=pytest.mark.slow)])
def test_every_order_prompt_holds_every_own_unit_and_its_orders(tmp_path, seed):
    trace = tmp_path / "trace.jsonl"
    result = play(
        "diplomacy",
        overrides=[
            "diplomacy.max_year=1910",
            "diplomacy.negotiation_rounds=0",
            "diplomacy.maps=none",
        ],
        context=GameContext(model="scripted", seed=seed, trace_path=str(trace)),
        db=None,
    )
    assert result.finished
    from diplomacy import Game

    phases = {p["name"]: p for p in result.values["world"]["diplomacy"]["phases"]}
    asked = [c for c in read_trace(trace) if c.get("task") == "orders"]
    checked = set()
    big = 0
    for call in asked:
        prompt = call["messages"][-1]["content"]
        assert "more not shown" not in prompt, (call["ask_id"], prompt[-400:])
        name = PHASE.search(prompt).group(1)
        state = phases[name]["state"]
        units = _units_to_order(state, call["role"], name[-1])
        game = Game()
        game.set_state(state)
        legal = legal_orders(game, call["role"])
        for unit in units:
            # the unit's block: its line, then its orders (holds and moves always listed)
            block = re.search(
                rf"^{re.escape(unit)} \(.*?(?=^[AF] [A-Z]|\n\n|\Z)", prompt, re.M | re.S
            )
            assert block, (call["ask_id"], unit, prompt)
            opts = legal[unit]
            kept = [o for o in opts if G.order_kind(unit, o) in ("H", "D", "-", "R")]
            text = block.group(0)
            assert G.compact_orders(unit, opts) in text or G.compact_orders(unit, kept) in text, (
                call["ask_id"],
                unit,
                text,
            )
        checked.add((name, call["role"]))
        big = max(big, len(units))
    years = {n[1:5] for n, _ in checked}
    assert "1910" in years and len(checked) > 100
    assert big >= 8  # a power with many units was among them
