"""`wargraph import` of an AI_Diplomacy game file (tests/fixtures/ai_diplomacy_game.json, written
in that format by tests/fixtures/make_ai_diplomacy_game.py with the `diplomacy` engine): the
record keeps the board, orders, results, messages, diaries' relationships and models; view,
eval diplomacy and replay --phase work on it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from wargraph.cli import app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ai_diplomacy_game.json"


def run(*args: str):
    out = CliRunner().invoke(app, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def test_an_ai_diplomacy_game_imports_views_evals_and_replays(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    game = json.loads(FIXTURE.read_text())
    said = run("import", str(FIXTURE), "--db", "g.sqlite", "--out", "rec")
    assert "Imported 4 phases (S1901M to S1902M)" in said
    record = json.loads((tmp_path / "rec" / "record.json").read_text())
    thread = record["thread_id"]
    assert thread == "aidip-ai-diplomacy-fixture"
    # the board of every phase is the file's own
    saved = record["world"]["diplomacy"]
    assert [p["name"] for p in saved["phases"]] == [p["name"] for p in game["phases"]]
    for mine, theirs in zip(saved["phases"][:-1], game["phases"][:-1], strict=True):
        assert mine["state"]["units"] == theirs["state"]["units"]
        assert mine["orders"] == theirs["orders"]
    # messages: private to the two powers, GLOBAL to everyone, in the file's order
    messages = [e for e in record["events"] if e["kind"] == "message"]
    sent = [m for p in game["phases"] for m in p["messages"]]
    assert [m["text"] for m in messages] == [m["message"] for m in sent]
    public = next(m for m in messages if m["author"] == "RUSSIA")
    assert public["audience"] == ["*"]
    assert messages[0]["audience"] == ["AUSTRIA", "ITALY"]
    # relationships per phase, from each power's agent state
    diaries = [e for e in record["events"] if e["kind"] == "diary"]
    f1901 = next(d for d in diaries if d["author"] == "ITALY" and d["data"]["phase"] == "F1901M")
    assert f1901["data"]["relationships"]["AUSTRIA"] == "Ally"
    assert f1901["data"]["intent"] == "Italy plans to hold its centres in F1901M."
    assert record["imported"]["models"]["ENGLAND"] == "anthropic/claude-3.5-haiku"
    # order results from the engine's results (keyed by unit)
    narration = next(
        e for e in record["events"] if e["kind"] == "narration" and e["data"]["phase"] == "F1901M"
    )
    results = {(r["power"], r["order"]): r["result"] for r in narration["data"]["records"]}
    assert results[("ITALY", "A VEN - TRI")] == "success"
    assert results[("FRANCE", "A PAR - BUR")] == "bounced"

    # eval: reciprocity and aggression with no judge, per published model
    said = run("eval", "diplomacy", "rec", "--out", "ev")
    assert "relationship reciprocity:" in said
    summary = json.loads((tmp_path / "ev" / "diplomacy_eval.json").read_text())
    (measures,) = summary["games"]
    # F1901M: ITALY-AUSTRIA rate Ally / Enemy -> ITALY over-estimates, AUSTRIA under-estimates
    assert measures["reciprocity"]["by_power"]["ITALY"]["over"] >= 1
    assert measures["reciprocity"]["by_power"]["AUSTRIA"]["under"] >= 1
    # ITALY's A VEN - TRI moves onto Austria's centre: aggression toward AUSTRIA
    assert measures["aggression_detail"]["ITALY"]["toward"] == {"AUSTRIA": 1}
    assert set(summary["per_model"]["by_model"]) == {
        "openai/gpt-4o-mini",
        "anthropic/claude-3.5-haiku",
    }

    # view: from the record and from the store
    run("view", "rec")
    assert (tmp_path / "rec" / "view.html").stat().st_size > 1000
    run("view", "--db", "g.sqlite", "--thread", thread, "--out", "stored.html")

    # replay --phase: fork the published game at F1901M and play it on with scripted seats
    said = run(
        "replay",
        "--db",
        "g.sqlite",
        "--thread",
        thread,
        "--phase",
        "F1901M",
        "--runs",
        "2",
        "--model",
        "scripted",
        "--out",
        "rp",
    )
    replayed = json.loads((tmp_path / "rp" / "replay.json").read_text())
    assert len(replayed["runs"]) == 2
    first = replayed["runs"][0]["outcome"]
    assert first["phases"][0] == "F1901M" and first["orders"]["F1901M"]["FRANCE"]
    # the fork started from the published board: Austria still holds Trieste then
    start = json.loads((tmp_path / "rp" / "run_1" / "record.json").read_text())
    phases = start["world"]["diplomacy"]["phases"]
    assert phases[1]["name"] == "F1901M"
    assert phases[1]["state"]["units"] == game["phases"][1]["state"]["units"]


def test_bad_game_files_are_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases = {
        "not.json": "{",
        "list.json": "[]",
        "noboard.json": json.dumps({"phases": [{"name": "S1901M"}]}),
        "map.json": json.dumps({"map": "ancmed", "phases": []}),
        "name.json": json.dumps({"phases": [{"name": "spring", "state": {"units": {}}}]}),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        out = CliRunner().invoke(app, ["import", name])
        assert out.exit_code == 2, (name, out.output)
        assert out.output.startswith("error:") and "Traceback" not in out.output, out.output
    out = CliRunner().invoke(app, ["import", "missing.json"])
    assert out.exit_code == 2
    run("import", str(FIXTURE), "--db", "g.sqlite", "--out", "a")
    again = CliRunner().invoke(app, ["import", str(FIXTURE), "--db", "g.sqlite", "--out", "b"])
    assert again.exit_code == 2 and "already holds a game" in again.output
