"""Ctrl-C says what was saved and the exact command that goes on (Typer alone exits 130 in
silence); a `--set` value holding ': ' that fails gets a hint to quote it."""

from __future__ import annotations

import builtins
import contextlib
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wargraph.cli import app

runner = CliRunner()


def _interrupt(*_args, **_kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_at_a_persons_prompt_says_saved_and_how_to_resume(tmp_path, monkeypatch):
    db = str(tmp_path / "g.sqlite")
    args = ["play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1"]
    args += ["--human", "azuristan", "--db", db, "--out", str(tmp_path / "g"), "--thread", "t1"]
    monkeypatch.setattr(builtins, "input", _interrupt)
    r = runner.invoke(app, args)
    assert r.exit_code == 130
    assert f"saved in {db}" in r.output
    assert f"go on with: wargraph resume --thread t1 --db {db}" in " ".join(r.output.split())
    monkeypatch.setattr(builtins, "input", lambda prompt="": "We hold the border and talk.")
    r = runner.invoke(app, ["resume", "--thread", "t1", "--db", db])  # the command it named
    assert r.exit_code == 0 and "Game over" in r.output, r.output


def test_ctrl_c_while_the_control_prepares_names_the_same_command(tmp_path, monkeypatch):
    import wargraph.runs.prepare

    monkeypatch.setattr(wargraph.runs.prepare, "prepare", _interrupt)
    out = tmp_path / "x.yaml"
    r = runner.invoke(app, ["prepare", "A crisis.", "-o", str(out), "--model", "scripted"])
    assert r.exit_code == 130 and "nothing was written" in r.output and "go on with" in r.output
    assert not out.exists()


WARGRAPH = str(Path(sys.executable).with_name("wargraph"))  # the venv's, on PATH or not


@pytest.mark.skipif(not Path(WARGRAPH).exists(), reason="no wargraph command beside python")
@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_a_real_ctrl_c_in_a_terminal(tmp_path, inherited):
    """SIGINT to the terminal's process group, as the keyboard sends it, at a person's prompt;
    also when wargraph started with SIGINT ignored by its parent (Python then leaves Ctrl-C
    ignored: the game hung at the prompt when a test process's Ray driver had left it so)."""
    db = tmp_path / "g.sqlite"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command as a person types it
        os.chdir(tmp_path)
        # a hang is killed with SIGABRT, which makes the child print every thread's stack
        os.environ["PYTHONFAULTHANDLER"] = "1"
        os.environ["COLUMNS"] = "200"  # the question on one line, whatever the terminal says
        signal.signal(signal.SIGINT, signal.SIG_DFL if inherited == "default" else signal.SIG_IGN)
        os.execv(
            WARGRAPH,
            ["wargraph", "play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1",
             "--human", "azuristan", "--db", str(db), "--thread", "t2"],
        )  # fmt: skip

    def read(seconds: float, until: bytes | None = None) -> bytes:
        got, deadline = b"", time.time() + seconds
        while time.time() < deadline and not (until and until in got):
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
        return got

    # the person's prompt: the question's last words, then "> " on a line of its own
    out = read(90, until=b"what for.")
    out += read(10, until=b"> ")
    time.sleep(0.5)
    os.killpg(pid, signal.SIGINT)
    try:
        out += read(60, until=b"--thread t2 --db")
    finally:
        done, status, waited = 0, 0, time.time() + 30
        while not done and time.time() < waited:  # it exits once it has said so
            done, status = os.waitpid(pid, os.WNOHANG)
            time.sleep(0.1)
        if not done:  # still running after the interrupt: its stacks, then no stray process
            os.kill(pid, signal.SIGABRT)
            out += read(5)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    text = " ".join(out.decode(errors="replace").split())
    assert "wargraph resume --thread t2 --db" in text, text[-3000:]
    assert os.waitstatus_to_exitcode(status) == 130


def test_a_set_value_with_colon_space_gets_a_hint_to_quote_it():
    r = runner.invoke(
        app, ["validate", "azuristan_crimsonia", "--set", "players.azuristan.persona=Note: calm"]
    )
    assert r.exit_code == 2
    flat = " ".join(r.output.split())
    assert "valid string" in flat and "quote the value" in flat
    assert 'players.azuristan.persona="Note: calm"' in flat
    r = runner.invoke(
        app, ["validate", "azuristan_crimsonia", "--set", 'players.azuristan.persona="Note: calm"']
    )
    assert r.exit_code == 0, r.output
