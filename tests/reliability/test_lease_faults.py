"""One writer per game when holders misbehave, on both stores, with real second processes:
a holder killed with SIGKILL (not yet reaped: a zombie) frees the game at once; a holder paused
with SIGSTOP for longer than the old 30 s lease keeps the game, and when it is cut off and the
game taken meanwhile, its next write is refused (fencing) and the other process's finished
game stays finished; a process in another pid namespace with the same hostname is refused;
clocks that are off by 45 s either way decide nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability._support import stopped_game
from wargraph.runs.runner import build_for, load_run, resume
from wargraph.store.saver import open_saver

CHILD = str(Path(__file__).with_name("_lease_child.py"))
# what the old heartbeat lease allowed a pause to last; the lease no longer has such a limit
# (WARGRAPH_LEASE_TTL set too, so the pause is past it for a build that still reads it)
OLD_TTL = 2.0


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "WARGRAPH_LEASE_TTL": str(OLD_TTL)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


def _child(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    return subprocess.Popen(
        [*prefix, sys.executable, CHILD, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _line(proc: subprocess.Popen, timeout: float = 60) -> str:
    """The child's next line (blocking read with a deadline through a helper thread)."""
    import threading

    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert got and got[0], f"no line from the child in {timeout} s: {proc.stderr.read()[-2000:]}"
    return got[0].strip()


def _until(proc: subprocess.Popen, prefix: str) -> str:
    while True:
        line = _line(proc)
        if line.startswith(prefix) or line.startswith(("done", "error")):
            return line


def _state(db: str, thread: str) -> dict:
    sc, _ = load_run(db, thread)
    with open_saver(db, create=False) as saver:
        saver.verify_thread(thread)
        graph = build_for(sc).compile(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": thread}}).values
    return json.loads(json.dumps(values, default=str))


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
    proc.wait(30)


def test_a_killed_holder_frees_the_game_at_once(store_db):
    """SIGKILL, and resume at once while the dead holder is still a zombie (not reaped: its
    pid exists), as a supervisor restarting a crashed game would."""
    holder = _child("play", store_db, "killed", "3")
    try:
        assert _until(holder, "step").startswith("step")
        _until(holder, "step")  # a checkpoint or two written
        os.kill(holder.pid, signal.SIGKILL)
        time.sleep(0.2)  # the kernel has ended it; it is not reaped (a zombie) until wait()
        started = time.monotonic()
        result = resume(db=store_db, thread_id="killed")
        assert result.finished
        assert time.monotonic() - started < 20, "the resume waited for the dead holder"
    finally:
        _end(holder)


def test_a_paused_holder_keeps_its_game_and_the_game_does_not_revert(store_db):
    """SIGSTOP past the old lease's life: the game is still held (a second writer would fork
    it); after SIGCONT the holder finishes, and the game is its finished game."""
    holder = _child("play", store_db, "paused", "2")
    try:
        assert _until(holder, "step").startswith("step")
        os.kill(holder.pid, signal.SIGSTOP)
        time.sleep(OLD_TTL * 1.5)
        taker = _child("resume", store_db, "paused")
        try:
            first = _line(taker)
        finally:
            _end(taker)
        assert first.startswith("error GameHeld") and "in use by `play`" in first, first
        os.kill(holder.pid, signal.SIGCONT)
        assert _until(holder, "done") == "done"
        holder.wait(60)
    finally:
        _end(holder)
    values = _state(store_db, "paused")
    assert values["done"] and values["round"] == 2


def _cut_off(db: str, thread: str) -> None:
    """Free a paused holder's lease from outside, as the system would when it is cut off: on
    PostgreSQL the server ends its session (TCP keepalive on a vanished host; here
    pg_terminate_backend), on SQLite its lock file is removed (a cleaned folder)."""
    if not db.startswith("postgresql"):
        shutil.rmtree(f"{db}.leases")
        return
    from wargraph.store.lease import advisory_key, store_id
    from wargraph.store.setup import own_sql

    with own_sql(db) as sql:
        key = advisory_key(store_id(sql), thread) & 0xFFFFFFFFFFFFFFFF
        rows, _ = sql.run(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted"
            " AND classid::bigint = ? AND objid::bigint = ?",
            (key >> 32, key & 0xFFFFFFFF),
        )
        assert len(rows) == 1, rows
        sql.run("SELECT pg_terminate_backend(?)", (rows[0][0],))


def test_a_cut_off_holder_cannot_write_over_the_game_another_finished(store_db):
    """Fencing: the paused holder's lease is freed, another process takes the game and
    finishes it; the old holder, resumed, has its next write refused and stops with a clear
    error, and the game stays finished (it never reverts to round 1)."""
    holder = _child("play", store_db, "fenced", "2")
    try:
        assert _until(holder, "step").startswith("step")
        os.kill(holder.pid, signal.SIGSTOP)
        _cut_off(store_db, "fenced")
        assert resume(db=store_db, thread_id="fenced").finished
        finished = _state(store_db, "fenced")
        assert finished["done"]
        os.kill(holder.pid, signal.SIGCONT)
        last = _until(holder, "done")
        holder.wait(60)
    finally:
        _end(holder)
    assert last.startswith("error LeaseLost") and "lost its lease" in last, last
    assert holder.returncode == 3
    assert _state(store_db, "fenced") == finished


def _unshare_or_skip() -> tuple[str, ...]:
    prefix = ("unshare", "--pid", "--fork", "--mount-proc")
    if shutil.which("unshare") is None:
        pytest.skip("no `unshare` on this machine")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"a new pid namespace is not allowed here: {probe.stderr.strip()[:200]}")
    return prefix


def test_a_holder_in_another_pid_namespace_is_refused(store_db):
    """Two containers with one hostname: pids say nothing across pid namespaces."""
    prefix = _unshare_or_skip()
    from wargraph.store.lease import lease

    with lease(store_db, "spaces", command="play"):
        other = _child("take", store_db, "spaces", prefix=prefix)
        try:
            line = _line(other)
        finally:
            other.stdin.close()
            _end(other)
    assert line.startswith("refused") and "in use by `play`" in line, line


@pytest.mark.parametrize("offset", [45.0, -45.0], ids=["ahead", "behind"])
def test_a_clock_off_by_45_s_decides_nothing(store_db, offset):
    """A taker whose clocks are 45 s off is refused a live lease, and takes it at once when
    it is free."""
    from wargraph.store.lease import lease

    with lease(store_db, "clock", command="play"):
        time.sleep(0.1)
        other = _child("take", store_db, "clock", str(offset))
        try:
            line = _line(other)
        finally:
            other.stdin.close()
            _end(other)
    assert line.startswith("refused"), line
    other = _child("take", store_db, "clock", str(offset))
    try:
        assert _line(other) == "held"
    finally:
        other.stdin.close()
        _end(other)


def test_a_resume_from_a_clock_behind_is_refused_before_it_writes(store_db):
    """Checkpoint ids come from the clock and a thread's latest is the highest id: a resume
    whose clock is 45 s behind would write checkpoints under the old ones (answers vanish).
    It is refused with one line and writes nothing; with the clock right the game resumes."""
    stopped_game(store_db, "late", seed=3)
    before = _state(store_db, "late")
    behind = _child("resume", store_db, "late", "-45")
    try:
        line = _until(behind, "done")
        behind.wait(60)
    finally:
        _end(behind)
    assert line.startswith("error StoreError") and "clock is behind" in line, line
    assert _state(store_db, "late") == before
    assert resume(db=store_db, thread_id="late").finished
