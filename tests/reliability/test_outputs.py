"""Outputs that always match their game: one folder and one trace per game, `--out` checked
before the first model call, the record written last, the thread id in every start and
error, and `resume` writing where the game wrote before."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import GameError, list_runs, play

SCENARIO = "azuristan_crimsonia"
FAULT = {"event": "fault", "role": "azuristan", "error": "earlier game (test)"}


def _play(db, out, thread, **kw):
    return play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="scripted", seed=5),
        db=db,
        thread_id=thread,
        out_dir=out,
        **kw,
    )


def test_a_folder_holding_another_game_is_refused(tmp_path):
    db, out = tmp_path / "g.sqlite", tmp_path / "out"
    _play(db, out, "first")
    record = (out / "record.json").read_text()
    with pytest.raises(GameError, match="holds game 'first'"):
        _play(db, out, "second")
    assert (out / "record.json").read_text() == record
    assert "second" not in list_runs(db)  # refused before anything was played


def test_an_earlier_games_trace_is_never_counted(tmp_path):
    """A used folder from before (a trace with faults, no owner) is refused, not inherited."""
    db, out = tmp_path / "g.sqlite", tmp_path / "latest"
    out.mkdir()
    (out / "trace.jsonl").write_text(json.dumps(FAULT) + "\n")
    with pytest.raises(GameError, match="holds another game's files"):
        _play(db, out, "fresh")
    # the same thread played again (killed before its first checkpoint) starts a new trace
    _play(db, tmp_path / "own", "again")
    (tmp_path / "own" / "trace.jsonl").write_text(json.dumps(FAULT) + "\n")
    from wargraph.store.saver import open_saver

    with open_saver(db) as saver:  # forget the game, keep its folder (as a kill would)
        saver.delete_thread("again")
    result = _play(db, tmp_path / "own", "again")
    assert result.record["usage"]["per_role"].get("azuristan", {}).get("faults", 0) == 0


def test_the_record_is_written_last(tmp_path, monkeypatch):
    """transcript.md is in place before record.json replaces the old one: a kill between the
    two never leaves a new record beside an older transcript."""
    db, out = tmp_path / "g.sqlite", tmp_path / "out"
    order: list[str] = []
    real = Path.replace

    def spy(self, target):
        order.append(Path(target).name)
        return real(self, target)

    monkeypatch.setattr(Path, "replace", spy)
    _play(db, out, "ordered")
    written = [n for n in order if n in ("record.json", "transcript.md")]
    assert written == ["transcript.md", "record.json"], order
    assert not list(out.glob("*.tmp"))


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    """A disk that fills while the record is written: a clear error, no `.tmp` left."""
    from wargraph.runs.records import write_record

    out = tmp_path / "out"
    out.mkdir()

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(GameError, match="the disk is full"):
        write_record({"events": [], "scenario": {}, "thread_id": "t"}, out)
    assert list(out.iterdir()) == []


@contextlib.contextmanager
def _tmpfs(where: Path, *options: str):
    """A small real filesystem (tmpfs) mounted for the test; skipped where mounting is not
    allowed (not root)."""
    where.mkdir()
    opts = ",".join(("size=64k", *options))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def _cli_play(tmp_path, out: str, thread: str):
    db = tmp_path / "g.sqlite"
    args = ["play", SCENARIO, "--model", "scripted", "--rounds", "1", "--db", str(db)]
    r = CliRunner().invoke(app, [*args, "--thread", thread, "--out", out], env={"COLUMNS": "300"})
    return r, db


@pytest.mark.parametrize("case", ["file", "read-only", "full", "root"])
def test_a_bad_out_fails_before_the_game_with_the_thread_named(tmp_path, case):
    if case == "file":
        out = tmp_path / "a-file"
        out.write_text("x")
        expected = "is a file"
    elif case == "root":
        out, expected = Path("/"), "filesystem root"
    else:
        mount = tmp_path / "mnt"
        with _tmpfs(mount, "ro" if case == "read-only" else "mode=755") as m:
            if case == "full":
                with contextlib.suppress(OSError):
                    (m / "filler").write_bytes(b"x" * 200_000)
            r, db = _cli_play(tmp_path, str(m / "out"), f"t-{case}")
        expected = "not writable" if case == "read-only" else "disk is full"
    if case in ("file", "root"):
        r, db = _cli_play(tmp_path, str(out), f"t-{case}")
    assert r.exit_code == 2, r.output
    assert expected in r.output and f"t-{case}" in r.output.split("error:")[1], r.output
    assert "unexpected" not in r.output
    assert r.output.startswith(f"thread: t-{case}"), r.output
    assert f"t-{case}" not in list_runs(db), "the game was played before the folder was checked"


def test_resume_writes_where_the_game_wrote_before(tmp_path, monkeypatch):
    db, out = tmp_path / "g.sqlite", tmp_path / "game"

    class Stop(Exception):
        pass

    seen: list[str] = []

    def stop_later(node, values):
        seen.append(node)
        if len(seen) == 3:
            raise Stop

    with pytest.raises(Stop):
        _play(db, out, "split", progress=stop_later)
    monkeypatch.chdir(tmp_path)  # the old default folder would be ./runs/latest
    r = CliRunner().invoke(app, ["resume", "--thread", "split", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("thread: split")
    assert json.loads((out / "record.json").read_text())["done"] is True
    assert not (tmp_path / "runs").exists()


def test_a_trace_cut_short_is_said_in_the_record(tmp_path):
    """A trace that stops being writable mid-game (here: its path becomes a folder) leaves the
    usage counts short: the record says so instead of looking complete."""
    from wargraph.runs.trace import _lock as trace_writes

    out = tmp_path / "out"

    def break_trace(node, values):
        trace = out / "trace.jsonl"
        # under the trace's own lock: a seat still answering in another thread would otherwise
        # write the file again between the two steps (FileExistsError)
        with trace_writes:
            if trace.is_file():
                trace.unlink()
                trace.mkdir()

    result = _play(tmp_path / "g.sqlite", out, "cut", progress=break_trace)
    assert "the trace could not be written in full" in result.record.get("trace_error", "")
    assert json.loads((out / "record.json").read_text())["trace_error"]
