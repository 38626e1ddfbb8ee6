"""No text wargraph did not write reaches a llama.cpp grammar unescaped (issue 40, item 4): a
person's option or a record line holding double quotes or a backslash used to make
llama-cpp-python write a grammar llama.cpp could not parse, and the process died (SIGSEGV).
The real embedded model, in a child process so a crash is an exit code, not a dead suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

SHOW = 'The "Big Bang" Theory'
PATH = "C:\\games\\run"


def wargraph(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LANGSMITH_TRACING": "false", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "wargraph.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_ask_with_quoted_options_answers_one_of_them(tmp_path):
    played = wargraph(
        "play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1",
        "--db", str(tmp_path / "g.sqlite"), "--out", str(tmp_path / "game"), cwd=tmp_path,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    asked = wargraph(
        "ask", str(tmp_path / "game"), "Which show did the leaders mention?",
        "--option", SHOW, "--option", PATH, "--option", "none", cwd=tmp_path,
    )  # fmt: skip
    assert asked.returncode == 0, (asked.returncode, asked.stderr[-2000:])
    answer = json.loads(asked.stdout)
    # the answer is one of the options as the person wrote them (quotes and backslash kept)
    assert answer["choice"] in (SHOW, PATH, "none", "undetermined"), answer
