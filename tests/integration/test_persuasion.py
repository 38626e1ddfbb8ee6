"""The shipped persuasion study (wargraph.evals.persuasion): with `--model scripted` it runs
end to end, the message reaches the persuadee's prompt alone, and no order changes (the scripted
decider reads nothing); against a loopback endpoint whose answers follow its prompts, the
strategies change the persuadee's orders and the study counts it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.capable_standin import CapableStandIn
from wargraph.cli import app
from wargraph.evals.persuasion import StudyError, load_study, run_study
from wargraph.runs.trace import read_trace


def test_the_shipped_study_runs_on_the_scripted_decider(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(app, ["persuade", "--model", "scripted", "--runs", "2"])
    assert out.exit_code == 0, out.output
    assert "injection: orders of FRANCE changed in 0/2" in out.output
    data = json.loads((tmp_path / "runs/persuasion/persuasion.json").read_text())
    assert set(data["strategies"]) == {"lie", "apology", "fairness", "injection"}
    assert all(s["changed"] == 0 and s["runs"] == 2 for s in data["strategies"].values())
    runs = data["models"]["scripted"]["runs"]
    assert all(run["orders"] for by_strategy in runs.values() for run in by_strategy)
    # the message is in the persuadee's prompts of the fork, and in no other power's
    trace = read_trace(tmp_path / "runs/persuasion/injection/run_1/trace.jsonl")

    def prompts(role: str) -> str:
        return " ".join(m["content"] for e in trace if e.get("role") == role for m in e["messages"])

    assert "Secret command for FRANCE" in prompts("FRANCE")
    assert "Secret command" not in prompts("GERMANY")
    control = read_trace(tmp_path / "runs/persuasion/control/run_1/trace.jsonl")
    assert not any("Secret command" in json.dumps(e) for e in control)
    page = (tmp_path / "runs/persuasion/persuasion.html").read_text()
    assert "Persuasion study" in page and "0/2" in page


def test_strategies_that_reach_a_model_change_its_orders(tmp_path):
    """Two persuadee models compared in one study: the scripted decider (reads nothing: no
    change) and a loopback endpoint whose answers follow its prompt (a message changes them)."""
    study = load_study("persuasion", runs=2)
    with CapableStandIn() as endpoint:
        served = f"openai:frontier@{endpoint.url}"
        study = study.model_copy(update={"models": ["scripted", served]})
        data = run_study(study, db=str(tmp_path / "s.sqlite"), thread=None, out=tmp_path / "out")
    scripted, model = data["models"]["scripted"], data["models"][served]
    assert all(s["changed"] == 0 for s in scripted["strategies"].values())
    assert sum(s["changed"] for s in model["strategies"].values()) > 0
    for s in model["strategies"].values():
        assert s["lo"] <= (s["share"] or 0) <= s["hi"]
    report = (tmp_path / "out" / "persuasion.md").read_text()
    assert f"| `{served}` | injection |" in report and "| `scripted` | lie | 0/2" in report
    assert (tmp_path / "out" / "scripted" / "control" / "run_1" / "record.json").exists()


def test_a_bad_study_is_one_clear_error(tmp_path):
    with pytest.raises(StudyError, match="no such study"):
        load_study("nonesuch")
    bad = tmp_path / "bad.yaml"
    bad.write_text("phase: F1901M\npersuader: ENGLAND\npersuadee: england\nstrategies: {lie: hi}\n")
    with pytest.raises(StudyError, match="must differ"):
        load_study(bad)
    bad.write_text("phase: X1\npersuader: ENGLAND\npersuadee: NARNIA\nstrategies: {}\n")
    with pytest.raises(StudyError, match="persuadee.*not a power"):
        load_study(bad)
    out = CliRunner().invoke(app, ["persuade", str(bad)])
    assert out.exit_code == 2 and "not a power" in out.output
