"""Incomplete counts are flagged (issue 40, item 9): a tournament whose endpoint lists its
model but fails every chat call used to rate that entrant ("2 games rated, model calls 0")
without a word; now the command, summary.json and the report warn that its rating says nothing
about the model. A real loopback endpoint that answers `GET /models` and refuses every chat."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.unit.test_preflight import ModelsServer, _tournament
from wargraph.cli import app


def test_an_entrant_whose_every_call_failed_is_flagged(tmp_path):
    server = ModelsServer(200, ["qwen"])  # lists qwen; a chat request gets 501
    try:
        cup = _tournament(tmp_path, f"openai:qwen@{server.url}")
        data = __import__("yaml").safe_load(cup.read_text(encoding="utf-8"))
        data["context"] = {"retries": 0}  # one failed call per question is enough to show it
        cup.write_text(json.dumps(data), encoding="utf-8")
        out = tmp_path / "out"
        res = CliRunner().invoke(app, ["tournament", str(cup), "--out", str(out)])
    finally:
        server.stop()
    assert "Traceback" not in res.output, res.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["games_rated"] >= 1 and summary["model_calls"] == 0
    assert [w for w in summary["warnings"] if w.startswith("entrant remote")], summary["warnings"]
    assert "entrant remote" in " ".join(res.output.split())
    assert "**Warning:** entrant remote" in (out / "report.md").read_text(encoding="utf-8")
