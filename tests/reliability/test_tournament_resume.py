"""A tournament killed with SIGKILL mid-run resumes without playing any game twice: the games
finished before the kill are skipped (their files untouched), the game cut off continues from
its checkpoint, and every scheduled game ends with exactly one outcome."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from wargraph.evals.experiment import Hooks
from wargraph.evals.tournament import load_tournament, run_tournament

SHIPPED = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "wargraph"
    / "scenarios"
    / "tournaments"
    / "diplomacy_bots.yaml"
)


def outcomes(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in out.glob("games/*/*/outcome.json")}


def start_tournament(tmp_path: Path, concurrency: int) -> tuple[Path, Path, subprocess.Popen]:
    """`wargraph tournament` of 6 games of bots (to 1903) in a session of its own."""
    data = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    data.update(rotations=2, concurrency=concurrency)
    data["set"]["diplomacy.max_year"] = 1903
    file = tmp_path / "t.yaml"
    file.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "out"
    wargraph = str(Path(sys.executable).parent / "wargraph")
    proc = subprocess.Popen(
        [wargraph, "tournament", str(file), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return file, out, proc


@pytest.mark.slow
def test_killed_tournament_resumes_without_replaying(tmp_path):
    file, out, proc = start_tournament(tmp_path, concurrency=1)  # one game at a time
    try:
        deadline = time.monotonic() + 300
        while len(outcomes(out)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(0.3)  # into the next game
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    before = outcomes(out)
    assert 2 <= len(before) < 6, "the kill must land mid-tournament"

    t = load_tournament(file)
    seen: list[str] = []
    result = run_tournament(
        t, out, show_progress=False, hooks=Hooks(game_done=lambda o, how: seen.append(how))
    )
    after = outcomes(out)
    assert len(after) == 6
    assert result.counts["skipped"] == len(before)
    assert result.counts["played"] + result.counts["resumed"] == 6 - len(before) == len(seen)
    for name, blob in before.items():
        assert after[name] == blob  # finished before the kill: not played or rewritten
    hows = [json.loads(b)["how"] for b in after.values()]
    assert set(hows) <= {"played", "resumed"}
    assert len(result.standing.rows) == 6
    print("killed after", len(before), "games; second run:", dict(result.counts))


def children_of(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(p) for p in text.split()}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="worker processes are forked on Linux only")
def test_worker_processes_die_with_a_killed_driver_and_the_run_resumes(tmp_path):
    """Games of bots run in worker processes: SIGKILL to the driver alone (not its group)
    ends its workers too, so no process of the killed run goes on holding a game."""
    file, out, proc = start_tournament(tmp_path, concurrency=2)  # two worker processes
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 300
        while len(outcomes(out)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers |= children_of(proc.pid)
            time.sleep(0.05)
        workers |= children_of(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    assert len(workers) >= 2, "the games were expected in worker processes"
    deadline = time.monotonic() + 10
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in workers), "a worker outlived its driver"
    before = outcomes(out)
    assert 2 <= len(before) < 6, "the kill must land mid-tournament"
    result = run_tournament(load_tournament(file), out, show_progress=False)
    after = outcomes(out)
    assert len(after) == 6 and result.counts["skipped"] == len(before)
    for name, blob in before.items():
        assert after[name] == blob
    assert len(result.standing.rows) == 6
