"""Colonel Blotto, the game written only against the public kernel API: its rules (the
secretary's check and give-up, front scoring), whole scripted games, a person in a seat answering
through interrupts (refused over budget, then revised), determinism and information asymmetry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.graphs.blotto.graph import build
from wargraph.graphs.blotto.world import (
    SCHEMA,
    BlottoScenario,
    check_allocation,
    record_measures,
    score_fronts,
)
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import parse_answer
from wargraph.seats.schemas import flat_json_schema, schema_for
from wargraph.worlds import even_split, scale_down

FRONTS = ["west", "centre", "east"]
POINTS = {"west": 1.0, "centre": 1.0, "east": 2.0}


def run(tmp_path: Path, overrides=(), *, seed: int = 0, humans=(), human_io=None, name="out"):
    return play(
        "blotto",
        overrides=list(overrides),
        context=GameContext(model="scripted", seed=seed, humans=list(humans)),
        db=None,
        out_dir=tmp_path / name,
        human_io=human_io,
    )


def of_kind(result, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.record["events"] if e["kind"] == kind]


# --- the rules ----------------------------------------------------------------------------------


def test_check_accepts_an_allocation_within_the_budget():
    kept, reasons = check_allocation({"west": 3, "centre": 3, "east": 4}, FRONTS, 10)
    assert reasons == [] and kept == {"west": 3, "centre": 3, "east": 4}
    assert check_allocation({"west": 0, "centre": 0, "east": 0}, FRONTS, 10)[1] == []


@pytest.mark.parametrize(
    "allocation, expected",
    [
        ({"west": 8, "centre": 8, "east": 8}, "over budget: 24 units allocated, the budget is 10"),
        ({"west": -2, "centre": 3, "east": 4}, "west: -2 is negative"),
        ({"west": 2, "centre": 3}, "east: missing"),
        ({"west": 2.5, "centre": 3, "east": 4}, "west: 2.5 is not a whole number"),
        ({"west": True, "centre": 3, "east": 4}, "west: True is not a whole number"),
        ({"west": "x", "centre": 3, "east": 4}, "west: 'x' is not a whole number"),
        ({"west": 1, "centre": 1, "east": 1, "sea": 1}, "unknown front(s) sea"),
        (["west", 5], "not an allocation (got list)"),
    ],
)
def test_check_refuses_with_a_reason(allocation, expected):
    _, reasons = check_allocation(allocation, FRONTS, 10)
    assert any(expected in r for r in reasons), reasons


def test_give_up_counts_bad_entries_as_zero_and_scales_down_to_the_budget():
    kept, reasons = check_allocation({"west": -5, "centre": 6, "east": 9}, FRONTS, 10)
    assert len(reasons) == 2  # negative, over budget
    assert kept == {"west": 0, "centre": 4, "east": 6}
    assert sum(kept.values()) == 10


def test_scale_down_is_proportional_and_exact():
    assert scale_down({"a": 10, "b": 10, "c": 10}, 10) == {"a": 4, "b": 3, "c": 3}  # tie: order
    assert scale_down({"a": 1, "b": 2, "c": 7}, 10) == {"a": 1, "b": 2, "c": 7}  # within budget
    assert scale_down({"a": 5, "b": 15}, 10) == {"a": 3, "b": 7}  # 2.5/7.5: order breaks the tie
    assert scale_down({"a": 1, "b": 1, "c": 98}, 10) == {"a": 0, "b": 0, "c": 10}
    for total in (11, 17, 23, 100):
        scaled = scale_down({"a": total // 3, "b": total // 3, "c": total - 2 * (total // 3)}, 10)
        assert sum(scaled.values()) == 10 and min(scaled.values()) >= 0


def test_fronts_go_to_the_larger_force_and_ties_split_the_points():
    winners, points = score_fronts(
        {
            "north": {"west": 5, "centre": 3, "east": 2},
            "south": {"west": 1, "centre": 3, "east": 6},
        },
        POINTS,
    )
    assert winners == {"west": ["north"], "centre": ["north", "south"], "east": ["south"]}
    assert points == {"north": 1.5, "south": 2.5}
    # three sides, an empty front tied by all: its point is split three ways
    _, three = score_fronts(
        {"a": {"x": 2, "y": 0}, "b": {"x": 1, "y": 0}, "c": {"x": 0, "y": 0}}, {"x": 1, "y": 1}
    )
    assert three == {"a": round(1 + 1 / 3, 6), "b": round(1 / 3, 6), "c": round(1 / 3, 6)}
    assert sum(three.values()) == pytest.approx(2)


def test_the_answer_schema_is_flat_one_integer_per_front():
    schema = schema_for(
        {"schema": SCHEMA, "schema_args": {"fronts": FRONTS, "budget": 10}}  # type: ignore[typeddict-item]
    )
    js = flat_json_schema(schema)
    assert "$defs" not in js and list(js["properties"]) == FRONTS
    assert all(p["type"] == "integer" for p in js["properties"].values())
    assert js["required"] == FRONTS
    # what breaks the rules still parses, so the secretary (not the parser) gives the reasons
    assert parse_answer('{"west": -3, "centre": 20, "east": 0}', schema).model_dump()["west"] == -3
    with pytest.raises(ValueError, match="east"):
        parse_answer('{"west": 1, "centre": 2}', schema)
    assert even_split(FRONTS, 10) == {"west": 4, "centre": 3, "east": 3}


# --- whole games (scripted) ------------------------------------------------------------------------


def test_a_scripted_game_uses_all_five_phases_and_keeps_the_rules(tmp_path):
    result = run(tmp_path, seed=4)
    assert result.finished and not result.values.get("error")
    sc = load_scenario("blotto")
    phases = {e["phase"] for e in result.record["events"]}
    assert {"negotiate", "summarize", "order", "secretary_validate", "adjudicate"} <= phases
    assert of_kind(result, "message") and of_kind(result, "summary")
    results = of_kind(result, "result")
    assert [e["round"] for e in results] == [1, 2, 3]
    total = sum(sc.blotto.fronts.values())
    running = {"north": 0.0, "south": 0.0}
    for e in results:
        allocations = e["data"]["allocations"]
        assert all(sum(a.values()) <= sc.blotto.budget for a in allocations.values())
        assert all(u >= 0 for a in allocations.values() for u in a.values())
        # the scores are the fronts' arithmetic, recomputed here from the played allocations
        winners, points = score_fronts(allocations, sc.blotto.fronts)
        assert e["data"]["points"] == points and e["data"]["winners"] == winners
        assert sum(points.values()) == pytest.approx(total)
        running = {s: round(running[s] + points[s], 6) for s in running}
        assert e["data"]["scores"] == running
    (final,) = of_kind(result, "score")
    assert final["data"]["scores"] == running
    assert len(of_kind(result, "narration")) == 3
    assert {e["data"]["question"] for e in of_kind(result, "answer")} == {"q1", "q2"}
    measures = record_measures(result.record, None)
    assert measures["rounds"] == 3 and measures["scores"] == running


def test_scripted_first_drafts_over_budget_are_refused_then_revised_or_scaled(tmp_path):
    # The scripted seat draws each front from 0..budget, so most drafts are over budget: the
    # secretary asks again, and what is finally played is within the budget either way.
    result = run(tmp_path, seed=1)
    verdicts = [e for e in of_kind(result, "verdict") if "status" in e.get("data", {})]
    assert verdicts and all(v["data"]["revisions"] == 1 for v in verdicts)
    assert {v["data"]["status"] for v in verdicts} <= {"accepted", "scaled"}
    for v in verdicts:
        first = v["data"]["trail"][0]
        assert first["reasons"] and "over budget" in " ".join(first["reasons"])
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert {"allocate", "revise"} <= {t["task"] for t in trace}


def test_same_seed_same_record_and_another_seed_another(tmp_path):
    a = run(tmp_path, seed=7, name="a")
    b = run(tmp_path, seed=7, name="b")
    c = run(tmp_path, seed=8, name="c")
    assert a.record["events"] == b.record["events"] and a.record["world"] == b.record["world"]
    assert [e["data"]["allocations"] for e in of_kind(a, "result")] != [
        e["data"]["allocations"] for e in of_kind(c, "result")
    ]


def test_a_secret_in_one_sides_brief_never_reaches_the_other_sides_prompts(tmp_path):
    canary = "CANARY-blotto-9d41"
    result = run(tmp_path, [f"players.north.secrets=[{canary}]"], seed=2)
    assert result.finished
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    roles = {t["role"] for t in trace}
    assert roles == {"north", "south", "control"}
    with_canary = {(t["role"], t["node"]) for t in trace if canary in json.dumps(t["messages"])}
    # the north reads its own brief; the control reads the whole record only after the game
    assert {r for r, _ in with_canary} <= {"north", "control"} and ("north", "order") in with_canary
    assert {n for r, n in with_canary if r == "control"} <= {"analyze"}
    # the north's allocation is secret until adjudication: the south never sees it in order
    north_alloc = [e for e in of_kind(result, "allocation") if e["author"] == "north"]
    assert all(set(e["audience"]) == {"north", "control"} for e in north_alloc)


def test_zero_revisions_scales_an_over_budget_allocation_at_once(tmp_path):
    result = run(tmp_path, ["blotto.revisions=0", "rounds=1"], seed=1)
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert "revise" not in {t["task"] for t in trace}
    scaled = [e for e in of_kind(result, "verdict") if e["data"].get("status") == "scaled"]
    assert scaled and "played as" in scaled[0]["data"]["notes"]


# --- a person in a seat, through interrupts ---------------------------------------------------------


class North:
    """A person playing the north: talks, keeps a diary, first sends too many units."""

    def __init__(self, drafts: list[dict[str, int]]) -> None:
        self.drafts = list(drafts)
        self.seen: list[dict[str, Any]] = []

    def __call__(self, payload: dict[str, Any]) -> Any:
        self.seen.append(payload)
        task = payload["task"]
        if task == "message":
            return {"messages": [{"to": "south", "text": "Let us both leave the west empty."}]}
        if task == "diary":
            return {"summary": "South said nothing useful."}
        if task in ("allocate", "revise"):
            return self.drafts.pop(0) if self.drafts else {"west": 0, "centre": 5, "east": 5}
        raise AssertionError(f"unexpected ask {task}")


def test_a_person_over_budget_is_refused_with_reasons_and_revises(tmp_path):
    person = North([{"west": 6, "centre": 6, "east": 6}, {"west": 2, "centre": 3, "east": 5}])
    result = run(tmp_path, ["rounds=1"], seed=3, humans=["north"], human_io=person)
    assert result.finished and not result.values.get("error")
    asked = [p["task"] for p in person.seen]
    assert asked == ["message", "diary", "allocate", "revise"]
    revise = person.seen[-1]
    assert "over budget: 18 units allocated, the budget is 10" in revise["question"]
    assert "west 6, centre 6, east 6" in revise["question"]  # the refused allocation, quoted
    assert revise["schema"]["properties"].keys() == {"west", "centre", "east"}
    (res,) = of_kind(result, "result")
    assert res["data"]["allocations"]["north"] == {"west": 2, "centre": 3, "east": 5}
    (verdict,) = [e for e in of_kind(result, "verdict") if e["audience"] == ["north"]]
    assert verdict["data"]["status"] == "accepted" and verdict["data"]["revisions"] == 1
    assert "after 1 revision" in verdict["text"]


def test_a_person_still_over_budget_after_the_revisions_is_scaled_down(tmp_path):
    person = North([{"west": 10, "centre": 10, "east": 0}, {"west": -1, "centre": 5, "east": 15}])
    result = run(tmp_path, ["rounds=1"], seed=3, humans=["north"], human_io=person)
    assert [p["task"] for p in person.seen].count("revise") == 1
    (res,) = of_kind(result, "result")
    assert res["data"]["allocations"]["north"] == {"west": 0, "centre": 3, "east": 7}
    (verdict,) = [e for e in of_kind(result, "verdict") if e["audience"] == ["north"]]
    assert verdict["data"]["status"] == "scaled"
    assert "west: -1 is negative" in verdict["text"] and "over budget" in verdict["text"]


# --- the scenario and the command line ----------------------------------------------------------------


@pytest.mark.parametrize(
    "override, message",
    [
        ("blotto.fronts=[North Pass, east]", "front 'North Pass': use a short lower-case name"),
        ("blotto.fronts=[east]", "blotto.fronts"),
        ("blotto.fronts={east: 0, west: 1}", "worth 0"),
        ("blotto.budget=0", "blotto.budget"),
        ("blotto.fronts=[json, east]", "front 'json'"),
        ("players={solo: {persona: alone}}", "Blotto needs 2 to 6 sides"),
    ],
)
def test_bad_blotto_sections_get_clear_errors(override, message):
    with pytest.raises(ScenarioError, match="blotto.yaml") as err:
        load_scenario("blotto", [override])
    assert message in str(err.value)


def test_graph_shape_and_wrong_family():
    sc = load_scenario("blotto")
    assert isinstance(sc, BlottoScenario)
    nodes = set(build(sc).compile().get_graph().nodes)
    assert {"negotiate", "summarize", "order", "secretary_validate", "adjudicate"} <= nodes
    assert {"analyze", "agent_north", "agent_south", "agent_control"} <= nodes
    with pytest.raises(ScenarioError, match="blotto"):
        build("haiwire")


def test_wargraph_play_blotto_scripted_on_the_command_line(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(
        app,
        ["play", "blotto", "--model", "scripted", "--rounds", "1", "--out", str(out),
         "--db", str(tmp_path / "g.sqlite")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    record = json.loads((out / "record.json").read_text())
    assert record["done"] and [e for e in record["events"] if e["kind"] == "result"]
    listed = CliRunner().invoke(app, ["scenarios"])
    assert "blotto" in listed.output and "The Three Passes" in listed.output
