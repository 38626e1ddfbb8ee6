"""One-text-field answers on the embedded model: asked as plain text, stored without any JSON
wrapper, and a model that cannot load stops the game, which resumes once the file is there."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from wargraph.kernel.context import GameContext
from wargraph.models.chat import embedded_model_path
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.timeout(600)]

# JSON dressing a small model puts around prose: an opening brace or bracket, a quoted key with
# its colon, a code fence, a closing brace (written here, not imported: the test checks the code)
WRAPPER = re.compile(r'^\s*[\[{]|```|"(plan|narrative|summary|answer|text|digest)"\s*:|[}\]]\s*$')
PROSE_KINDS = ("plan", "narration")


def test_an_embedded_crisis_stores_no_json_wrapper_text(tmp_path):
    """Two moves of the crisis (plans and narrations): every stored answer is prose, and each of
    those asks went to the model as plain text (no grammar)."""
    result = play(
        "azuristan_crimsonia",
        overrides=["rounds=2", "questions=[]"],
        context=GameContext(model="embedded", max_tokens=120),
        db=None,
        out_dir=tmp_path / "out",
    )
    assert result.finished
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    answers = [e for e in record["events"] if e["kind"] in PROSE_KINDS]
    assert len(answers) == 6  # two plans and a narration per move
    wrapped = [e["text"] for e in answers if WRAPPER.search(e["text"])]
    assert wrapped == [], wrapped
    assert sum(e["data"]["source"] == "model" for e in answers) >= 4, [
        (e["data"]["source"], e["text"][:80]) for e in answers
    ]
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["event"] == "call"]
    assert calls and {c["mode"] for c in calls} == {"text"}
    # the model went on from the answer's first words: plans state the side's plan, narrations
    # tell the move (instead of imitating the quoted context)
    for e in answers:
        if e["data"]["source"] == "model":
            start = (
                f"{e['author'].title()} will" if e["kind"] == "plan" else f"In move {e['round']},"
            )
            assert e["text"].startswith(start), e["text"][:80]


def test_a_missing_model_file_is_refused_and_the_game_plays_once_it_is_there(tmp_path):
    # one player and the umpire, short answers: two small calls once the model is there
    scenario = tmp_path / "drill.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "title": "Fault drill",
                "setting": "Two neighbours argue over a river.",
                "rounds": 1,
                "players": {"upriver": {"persona": "A cautious leader.", "max_tokens": 24}},
                "control": {"max_tokens": 24},
                "questions": [],
            }
        )
    )
    model = tmp_path / "model.gguf"
    base = [sys.executable, "-m", "wargraph.cli"]
    where = ["--db", str(tmp_path / "g.sqlite"), "--out", str(tmp_path / "out")]
    env = {**os.environ, "LANGSMITH_TRACING": "false"}
    first = subprocess.run(
        [*base, "play", str(scenario), "--model", f"gguf:{model}", "--thread", "later", *where],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    # the preflight finds the missing file before the game exists (issue 29): no game, exit 2
    assert first.returncode == 2, first.stdout + first.stderr
    assert "no such GGUF file" in " ".join(first.stderr.split())
    assert "Game over" not in first.stdout and not (tmp_path / "g.sqlite").exists()
    model.symlink_to(embedded_model_path())
    second = subprocess.run(
        [*base, "play", str(scenario), "--model", f"gguf:{model}", "--thread", "later", *where],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Game over" in second.stdout
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    assert record["done"] and [e for e in record["events"] if e["kind"] == "narration"]
