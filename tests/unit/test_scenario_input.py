"""Scenario input that cannot hurt: regular files only (never a hang on a pipe or an endless read
of a device), bounded file and expanded size (YAML alias bombs), and a shipped name that a
local file or folder cannot silently shadow."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from packaging.version import Version
from typer.testing import CliRunner

import wargraph.kernel.scenario as scenario_module
from wargraph.cli import app, main
from wargraph.kernel.scenario import ScenarioError, ScenarioNote, load_scenario, shipped_scenarios

runner = CliRunner()


def load_within(path: str, seconds: float = 10) -> BaseException | None:
    """Load in a thread so a hang fails the test instead of stopping the suite."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            load_scenario(path)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"loading {path} did not return within {seconds} s"
    return outcome[0]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "game.yaml"
    os.mkfifo(fifo)
    try:
        exc = load_within(str(fifo))
    finally:
        with contextlib.suppress(OSError):  # release a reader blocked in open() (old code)
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(exc, ScenarioError) and "not a regular file" in str(exc)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_without_reading_it(device):
    exc = load_within(device)
    assert isinstance(exc, ScenarioError), exc
    assert str(exc) == f"{device}: not a regular file (a device, pipe or socket)"


def test_a_folder_is_a_clear_error(tmp_path):
    exc = load_within(str(tmp_path))
    assert isinstance(exc, ScenarioError) and str(exc) == f"{tmp_path}: is a folder, not a file"
    r = runner.invoke(app, ["validate", str(tmp_path)], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "is a folder" in r.output and isinstance(r.exception, SystemExit)


def test_a_file_over_the_size_cap_is_refused(tmp_path):
    cap = scenario_module.MAX_FILE_BYTES
    big = tmp_path / "big.yaml"
    text = Path(shipped_scenarios()["summit"]).read_text()
    big.write_text(text + "#" * (cap - len(text.encode()) + 1))
    with pytest.raises(ScenarioError, match=f"larger than {cap:,} bytes"):
        load_scenario(str(big))
    big.write_text(text + "#" * (cap - len(text.encode()) - 1))
    assert load_scenario(str(big)).title  # just under the cap still loads


def alias_bomb() -> str:
    """A valid scenario of ~7 kB whose aliases expand to ~40 MB of goals."""
    long = "x" * 4000
    goals = ", ".join(["*s"] * 100)
    players = "\n".join(f"  p{i}: {{goals: *g}}" for i in range(1, 100))
    return f"title: t\nsetting: &s {long}\nplayers:\n  p0: {{goals: &g [{goals}]}}\n{players}\n"


def test_an_alias_bomb_is_refused_before_it_is_stored(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert path.stat().st_size < 10_000
    exc = load_within(str(path))
    assert isinstance(exc, ScenarioError), exc
    assert "expands to more than" in str(exc) and str(path) in str(exc)


def merges_each_key_once() -> bool:
    """PyYAML >= 6.0.4 keeps one entry per merged key (earlier versions copied every entry)."""
    return Version(yaml.__version__) >= Version("6.0.4")


def test_merge_keys_are_bounded_and_still_work(tmp_path):
    chain = ["title: t", "setting: s", "players:", "  a: {persona: calm}"]
    chain += ["questions:", "  - &m0 {text: q}"]
    chain += [f"  - &m{i} {{<<: [*m{i - 1}, *m{i - 1}], text: q}}" for i in range(1, 40)]
    bomb = tmp_path / "merge.yaml"
    bomb.write_text("\n".join(chain) + "\n")
    exc = load_within(str(bomb))
    if merges_each_key_once():
        # PyYAML 6.0.4 merges a key once, however often it is reached: the chain stays small
        assert exc is None, exc
        questions = load_scenario(str(bomb)).questions
        assert [q.text for q in questions] == ["q"] * 40
    else:
        # older PyYAML repeats merged entries (2**40 here): wargraph's own count refuses it
        assert isinstance(exc, ScenarioError) and "expands to more than" in str(exc), exc
    ok = tmp_path / "ok.yaml"
    ok.write_text(
        "title: t\nsetting: s\nplayers:\n  a: &base {persona: calm, goals: [peace]}\n"
        "  b: {<<: *base, persona: hawk}\n"
    )
    b = load_scenario(str(ok)).players["b"]
    assert (b.persona, b.goals) == ("hawk", ["peace"])


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_a_local_folder_or_file_cannot_shadow_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "summit").mkdir()
    other = yaml.safe_load(Path(shipped_scenarios()["azuristan_crimsonia"]).read_text())
    (tmp_path / "summit.yaml").write_text(yaml.safe_dump(other))
    with pytest.warns(ScenarioNote, match="the shipped scenario is used, not the local 'summit'"):
        assert load_scenario("summit").title == "The Lake Vostra water summit"
    assert load_scenario("./summit.yaml").title == other["title"]
    # as a user sees it: one note line on stderr, then the shipped scenario is validated
    wargraph = Path(sys.executable).parent / "wargraph"
    env = {**os.environ, "COLUMNS": "300"}
    done = subprocess.run(
        [wargraph, "validate", "summit"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "note: summit: the shipped scenario is used, not the local 'summit'" in done.stderr
    assert "write ./summit" in done.stderr and "water summit" in done.stdout
    done = subprocess.run(
        [wargraph, "validate", "summit.yaml"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and "note:" not in done.stderr
    assert other["title"] in done.stdout


def run_main(args: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """The console entry point as a user meets it (the catch-all for failures included)."""
    monkeypatch.setattr("sys.argv", ["wargraph", *args])
    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit) as stop:
        main()
    out = capsys.readouterr()
    return int(stop.value.code or 0), out.out + out.err


def test_refused_paths_say_what_to_do_instead_of_unexpected(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x")
    Path("folder").mkdir()
    cases = [
        (["validate", "folder"], "folder: is a folder, not a file"),
        (["ask", "/dev/zero", "why?", "--model", "scripted"], "/dev/zero: not a regular file"),
        (["prepare", "x", "-o", "folder", "--model", "scripted"], "ending in .yaml"),
        (["prepare", "x", "-o", "summit", "--model", "scripted"], "ending in .yaml"),
        (
            ["prepare", "x", "-o", "afile/x.yaml", "--model", "scripted"],
            "afile: file exists (a file stands where a folder is needed; choose another path)",
        ),
        (
            ["prepare", "x", "-o", "nowhere/x.yaml", "--model", "scripted"],
            None,  # creates the folder: no error at all
        ),
        (["serve", "--port", "99999"], "65535"),
    ]
    for args, expected in cases:
        code, output = run_main(args, monkeypatch, capsys)
        assert "unexpected" not in output and "Traceback" not in output, (args, output)
        if expected is None:
            assert code == 0, (args, output)
        else:
            assert code == 2 and expected in output, (args, output)


def test_a_scenario_file_edited_between_loads_is_read_again(tmp_path):
    # files are parsed once while unchanged (a cache by modification time and size)
    from wargraph.kernel.scenario import load_scenario, read_data

    path = tmp_path / "s.yaml"
    data, _ = read_data("azuristan_crimsonia")
    data["title"] = "First"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert load_scenario(str(path)).title == "First"
    first, _ = read_data(str(path))
    first["title"] = "changed by a caller"  # callers get their own copy
    assert load_scenario(str(path)).title == "First"
    data["title"] = "Second, longer"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert load_scenario(str(path)).title == "Second, longer"
