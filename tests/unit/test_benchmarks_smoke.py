"""Smoke test of the benchmark suite (benchmarks/): every module imports, and benchmark 1 plays
one crisis game with the scripted decider in quick mode and reports numbers that add up."""

from __future__ import annotations

import importlib
import json

import pytest

from benchmarks import BENCHMARKS, common
from benchmarks.common import Intervals, target, union_length, write_result
from wargraph.runs.trace import read_trace


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_module_imports(name):
    module = importlib.import_module(f"benchmarks.{name}")
    assert name == module.NAME
    assert callable(module.run) and callable(module.main)


def test_union_of_overlapping_spans_counts_shared_time_once():
    assert union_length([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]) == pytest.approx(4.0)
    spans = Intervals()
    spans.add(0.0, 1.0)
    spans.add(0.5, 1.5)
    assert spans.total() == pytest.approx(2.0)
    assert spans.union() == pytest.approx(1.5)


def test_overhead_quick_crisis_numbers_are_positive_and_consistent():
    from benchmarks import overhead

    payload = overhead.run(quick=True, write=False, show=False)
    [row] = payload["rows"]
    assert (row["family"], row["saver"], row["finished"]) == ("crisis", "sqlite", True)
    assert row["wall_s"] > 0 and row["decider_s"] > 0 and row["framework_s"] > 0
    # The parts never add up to more than the wall time they were cut from.
    assert row["decider_s"] + row["engine_s"] + row["framework_s"] <= row["wall_s"] + 1e-9
    assert 0 <= row["checkpoint_s"] <= row["framework_s"]
    assert row["engine_s"] == 0  # the crisis game has no engine: the umpire is a seat
    # Every decision went through the meter: the trace holds one scripted prompt per decision.
    scripted = [e for e in read_trace(f"{row['out_dir']}/trace.jsonl") if e["event"] == "scripted"]
    assert row["decisions"] == len(scripted) > 0
    assert 0 < row["agent_steps"] <= row["decisions"]
    assert row["graph_steps"] > row["agent_steps"]
    assert row["checkpoint_writes"] > row["graph_steps"]  # every step writes, and so do seats
    assert row["framework_ms_per_agent_step"] == pytest.approx(
        1000 * row["framework_s"] / row["agent_steps"]
    )
    [tgt] = payload["targets"]
    assert tgt["value"] == pytest.approx(row["framework_ms_per_agent_step"], abs=1e-3)
    assert tgt["rule"] == "<" and tgt["status"] in ("met", "missed")
    assert payload["machine"]["cpu_count"] >= 1 and payload["machine"]["python"]

    with common.console.capture() as captured:
        overhead.show_tables(payload)
    text = captured.get()
    assert "Framework overhead" in text and "crisis" in text and tgt["status"] in text


@pytest.mark.parametrize(
    ("value", "rule", "limit", "status"),
    [
        (1.0, "<", 2.0, "met"),
        (2.0, "<", 2.0, "missed"),  # the boundary: "<" is strict
        (3.0, "<", 2.0, "missed"),
        (2.0, "<=", 2.0, "met"),
        (2.5, "<=", 2.0, "missed"),
        (5.0, ">", 4.0, "met"),
        (4.0, ">", 4.0, "missed"),
        (4.0, ">=", 4.0, "met"),
        (None, "<", 2.0, "not measured"),
    ],
)
def test_a_target_status_follows_its_rule(value, rule, limit, status):
    t = target("x", value, limit, rule=rule)
    assert t["status"] == status
    assert t["met"] is {"met": True, "missed": False, "not measured": None}[status]


def test_results_are_written_as_json_with_the_machine(tmp_path):
    path = write_result("demo", common.result_payload("demo", 0.0, rows=[]), tmp_path)
    data = json.loads(path.read_text())
    assert data["benchmark"] == "demo" and data["machine"]["cpu_model"]


def test_seats_at_once_compares_each_shape_with_ai_diplomacy_measured_at_the_same_rounds():
    """AI_Diplomacy was measured at 0, 1 and 2 negotiation rounds (2.17, 2.5 and 2.93 s per
    movement phase, benchmarks.reference): each row is set next to the figure at its rounds."""
    from benchmarks import seats_at_once as b

    assert [b.rounds_of(s) for s in b.SHAPES] == [0, 2, 1, 2]
    none = b.like_for_like({"shape": "no press", "wall_per_phase_s": 0.651})
    assert none["ai_diplomacy_wall_s"] == 2.17 and none["ai_diplomacy_how"].startswith("measured")
    assert none["x_ai_diplomacy"] == pytest.approx(0.3)
    one = b.like_for_like({"shape": "one negotiation round", "wall_per_phase_s": 1.0})
    assert one["ai_diplomacy_wall_s"] == 2.5 and one["ai_diplomacy_waves"] == 4
    shipped = b.like_for_like({"shape": "shipped", "wall_per_phase_s": 2.344})
    assert shipped["ai_diplomacy_waves"] == 5 and shipped["ai_diplomacy_wall_s"] == 2.93
    assert shipped["x_ai_diplomacy"] == pytest.approx(0.8)
    assert b.like_for_like({"shape": "shipped", "wall_per_phase_s": None})["x_ai_diplomacy"] is None


def test_like_for_like_takes_the_cpu_between_1901s_last_adjudication_and_1905s():
    """CPU per movement phase of a game is read from the engine probe's lines: the CPU from the
    end of 1901's last adjudication to the end of the last one's, over the movement phases
    adjudicated between (start-up and end left out); a checkout's figure is the least of its
    games, the median beside it."""
    from benchmarks import like_for_like as b

    def lines(start: float, per: float) -> list[dict]:
        names = ["S1901M", "F1901M", "W1901A", "S1902M", "F1902M", "S1903M", "F1903M", "W1903A"]
        return [{"phase": n, "cpu_s": start + per * i, "wall_s": 0.0} for i, n in enumerate(names)]

    one = b.phase_cpu(lines(3.0, 0.1), last=1903)
    assert one["phases_between"] == ["S1902M", "F1902M", "S1903M", "F1903M", "W1903A"]
    assert one["movement_phases_between"] == 4
    assert one["cpu_per_movement_phase_s"] == pytest.approx(0.5 / 4)
    with pytest.raises(RuntimeError):
        b.phase_cpu(lines(3.0, 0.1)[:3])  # nothing adjudicated after 1901
    games = [
        {"adjudications": lines(9.0, per), "cpu_s": 9.0 + per * 8, "tree": "t"}
        for per in (0.3, 0.2, 0.25)
    ]
    row = b.per_phase(games)
    assert row["movement_phases_between"] == 4  # up to 1905: these lines end in 1903
    assert row["cpu_per_movement_phase_s"] == pytest.approx(0.2 * 5 / 4)
    assert row["cpu_per_movement_phase_median_s"] == pytest.approx(0.25 * 5 / 4)
    assert row["x_ai_diplomacy"] == pytest.approx(0.25 / b.CPU_PER_MOVEMENT_PHASE.value, abs=1e-3)


def test_the_engine_probe_records_each_adjudication_from_inside_the_process(tmp_path):
    """The probe (a sitecustomize on PYTHONPATH) writes a line per `Game.process()`: the phase
    ended and the process's CPU after it; nothing without WARGRAPH_ENGINE_PROBE."""
    import os
    import subprocess
    import sys

    from benchmarks import like_for_like as b

    out = tmp_path / "probe.jsonl"
    code = "from diplomacy import Game; g = Game(); g.process(); g.process()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(b.PROBE), *sys.path))}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert not out.exists()
    env["WARGRAPH_ENGINE_PROBE"] = str(out)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    found = b.adjudications(out)
    assert [line["phase"] for line in found] == ["S1901M", "F1901M"]
    assert 0 < found[0]["cpu_s"] <= found[1]["cpu_s"]


def test_like_for_like_scales_the_reference_by_the_machines_speed_now():
    """AI_Diplomacy's stored CPU figure is scaled by the Python workload's least seconds now over
    those of its own runs: a machine 1.4x slower now doubles nothing but the scale."""
    from benchmarks import like_for_like as b
    from benchmarks.calibrate import python_seconds
    from benchmarks.reference import CALIBRATION_S

    assert b.scale_of([CALIBRATION_S * 1.4, CALIBRATION_S * 1.5]) == pytest.approx(1.4)
    assert b.scale_of([]) == 1.0
    assert 0 < python_seconds(1) < 5  # the workload runs here, in seconds


def test_phase_timeline_judges_overhead_per_wave_and_the_floor():
    """Issue 43's two targets from the movement phases a timeline played: the mean overhead per
    wave (<= 0.03 s) and the worst phase's wall over its floor of waves x 500 ms (<= 5%)."""
    from benchmarks import phase_timeline as b

    moves = [
        {"wall_s": 2.08, "waves": [{}] * 4, "overhead_per_wave_s": 0.02},
        {"wall_s": 2.12, "waves": [{}] * 4, "overhead_per_wave_s": 0.03},
    ]
    per_wave, floor = b.targets_of(moves)
    assert per_wave["value"] == pytest.approx(0.025) and per_wave["status"] == "met"
    assert floor["value"] == pytest.approx(6.0) and floor["status"] == "missed"
