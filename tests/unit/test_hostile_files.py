"""Hostile files are bounded with clear errors (issue 40, item 7): `results.load` with an
outcome.json that is /dev/zero, a FIFO or a 200,000-deep JSON; a trace line that deep under
`wargraph view`; `--script SEAT=FILE` naming a 400 MB file or a YAML alias bomb. Each is refused
or skipped in well under a second, never read whole, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.script_shape import ScriptError
from wargraph.seats.script import load_script

runner = CliRunner()
DEEP = "[" * 200_000 + "]" * 200_000
BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
       for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)  # fmt: skip  # ten to the ninth x's from 3 kB


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    out = root / "runs" / "one"
    r = runner.invoke(
        app,
        ["play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1",
         "--db", str(root / "g.sqlite"), "--out", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return root, out


def _outcome_as(out: Path, kind: str) -> None:
    target = out / "outcome.json"
    if os.path.lexists(target):
        target.unlink()
    if kind == "zero":
        target.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_text(DEEP, encoding="utf-8")


@pytest.mark.parametrize("kind", ["zero", "fifo", "deep"])
def test_results_load_skips_an_outcome_it_cannot_read(played, kind):
    from wargraph.results import load

    root, out = played
    _outcome_as(out, kind)
    try:
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = load(root / "runs")
        assert time.monotonic() - started < 10
        assert len(r.games) == 1  # the game is still there, its outcome left out
        assert any("outcome" in str(w.message) for w in caught)
    finally:
        (out / "outcome.json").unlink()


def test_a_deep_trace_line_is_skipped_by_the_view(played, tmp_path):
    from wargraph.runs.trace import read_trace

    _, out = played
    trace = out / "trace.jsonl"
    kept = trace.read_text(encoding="utf-8")
    try:
        trace.write_text(kept + DEEP + "\n", encoding="utf-8")
        assert read_trace(trace) == read_trace_lines(kept)
        r = runner.invoke(app, ["view", str(out), "--out", str(tmp_path / "view.html")])
        assert r.exit_code == 0, r.output
        assert (tmp_path / "view.html").stat().st_size > 1000
    finally:
        trace.write_text(kept, encoding="utf-8")


def read_trace_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def test_a_huge_script_is_refused_unread(tmp_path):
    huge = tmp_path / "answers.yaml"
    with huge.open("wb") as fh:
        fh.truncate(400_000_000)  # sparse: 400 MB to read, nothing on disk
    started = time.monotonic()
    with pytest.raises(ScriptError, match="larger than"):
        load_script(huge, "--script north")
    assert time.monotonic() - started < 2


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    bomb = tmp_path / "answers.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(ScriptError, match="expands to more than"):
        load_script(bomb, "--script north")
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("name", ["fifo", "deep.json"])
def test_a_fifo_or_a_deep_json_script_is_one_line(tmp_path, name):
    path = tmp_path / name
    if name == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(DEEP, encoding="utf-8")
    r = runner.invoke(
        app,
        ["play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1",
         "--db", str(tmp_path / "g.sqlite"), "--script", f"azuristan={path}"],
        env={"COLUMNS": "400"},  # a long path on one line, however deep the test's folder
    )  # fmt: skip
    assert r.exit_code != 0 and "Traceback" not in r.output, r.output
    assert str(path) in r.output or name in r.output
