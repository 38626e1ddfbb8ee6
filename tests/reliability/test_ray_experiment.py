"""Experiments across processes: games as Ray tasks on a shared PostgreSQL store.

A worker killed with SIGKILL mid-game loses nothing: Ray runs the task again on a new worker,
which continues the game from the checkpoints the dead one committed, and every record equals
the serial run's. Two drivers on one experiment never play a game twice (the runner's lease
per game in the store), and two runs on one output folder are refused (a lock on the folder).

PostgreSQL is reached through WARGRAPH_TEST_PG_URL (default: the local server's Unix socket,
which also works from inside the network namespace the Ray test runs in); each test gets a
database of its own, dropped afterwards. Where it is unreachable the tests skip with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from wargraph.evals.experiment import (
    ExperimentError,
    Hooks,
    load_experiment,
    plan_games,
    run_experiment,
)

PG_URL = os.environ.get(
    "WARGRAPH_TEST_PG_URL", "postgresql:///test?host=/var/run/postgresql&user=postgres"
)
DRIVER = Path(__file__).with_name("_ray_driver.py")


def _admin():
    psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need wargraph[scale]")
    try:
        return psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        pytest.skip(f"PostgreSQL unreachable at {PG_URL}: {str(err).strip()[:200]}")


@pytest.fixture
def pg_db():
    """A fresh database on the test server, as a URL; dropped after the test."""
    name = f"wg_ray_{uuid.uuid4().hex[:10]}"
    admin = _admin()
    admin.execute(f"CREATE DATABASE {name}")
    parts = urlsplit(PG_URL)
    yield f"{parts.scheme}://{parts.netloc}/{name}?{parts.query}"
    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.close()


def experiment_file(tmp_path: Path, *, rounds: int = 2, runs: int = 4) -> Path:
    """A scripted experiment: 2 conditions x `runs` runs, fixed seeds."""
    spec = {
        "name": "ray_faults",
        "scenario": "azuristan_crimsonia",
        "set": {"rounds": rounds},
        "model": "scripted",
        "runs": runs,
        "seed": 5,
        "concurrency": 2,
        "langsmith": False,
        "grid": {
            "pairing": {
                "doves": {"players.azuristan.persona": "dove", "players.crimsonia.persona": "dove"},
                "hawks": {"players.azuristan.persona": "hawk", "players.crimsonia.persona": "hawk"},
            }
        },
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def records(out: Path) -> dict[str, dict]:
    """Each game's record, less the store it names (`db`: Ray's runs use PostgreSQL)."""
    found = {
        str(p.parent.relative_to(out)): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(out.glob("games/*/*/record.json"))
    }
    for record in found.values():
        record.pop("db", None)
    return found


def serial_run(path: Path, out: Path) -> tuple[dict[str, dict], Counter]:
    """The reference: the same experiment in this process, on SQLite, counting steps."""
    steps: Counter = Counter()
    res = run_experiment(
        load_experiment(path),
        out,
        hooks=Hooks(node=lambda plan, node: steps.update([plan.thread_id])),
        show_progress=False,
        report=False,
    )
    assert res.counts["played"] == len(res.outcomes) and res.counts["crashed"] == 0
    return records(out), steps


def _namespace_prefix() -> list[str]:
    """Run Ray in a network namespace of its own, with loopback up: it binds nothing else."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("the Ray test needs root, unshare and ip to keep Ray on loopback")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_killed_worker_resumes_on_another_and_records_equal_serial(tmp_path, pg_db):
    pytest.importorskip("ray", reason="the Ray test needs wargraph[scale]")
    path = experiment_file(tmp_path)
    expected, steps = serial_run(path, tmp_path / "serial")
    assert len(expected) == 8
    # one of the first games Ray starts, so the others go on while it is retried
    victim = plan_games(load_experiment(path))[1].thread_id
    stop_at = steps[victim] // 2
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "ray"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    cmd = [sys.executable, str(DRIVER), str(path), str(out), pg_db, str(marks), victim]
    log = (tmp_path / "driver.log").open("w")
    driver = subprocess.Popen(
        [*_namespace_prefix(), *cmd, str(stop_at), "2"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        pid_file = marks / "victim.pid"
        deadline = time.monotonic() + 240
        while not pid_file.exists():
            assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the chosen game never reached its stop"
            time.sleep(0.2)
        killed = int(pid_file.read_text())
        print(f"stop reached after {time.monotonic() - deadline + 240:.1f} s")
        os.kill(killed, signal.SIGKILL)  # the worker process, mid-game
        t_kill = time.monotonic()
        assert driver.wait(timeout=240) == 0, (tmp_path / "driver.log").read_text()[-3000:]
        print(f"driver ended {time.monotonic() - t_kill:.1f} s after the kill")
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
        log.close()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"].get("crashed", 0) == 0, summary
    assert summary["how"][victim] == "resumed", summary
    assert summary["workers"][victim] != killed, "the game must finish on another worker"
    # the dead attempt's steps plus the new one's make one game: it went on from its checkpoint
    attempts = {
        p.name.split(".")[-2]: p.read_text().split() for p in marks.glob(f"{victim}.*.nodes")
    }
    assert str(killed) in attempts and len(attempts) == 2, attempts
    first = attempts.pop(str(killed))
    (second,) = attempts.values()
    assert len(first) == stop_at
    assert len(second) < steps[victim] <= len(first) + len(second), (first, second)
    got = records(out)
    assert got.keys() == expected.keys()
    for folder, record in expected.items():
        ids = [e["id"] for e in got[folder]["events"]]
        assert len(ids) == len(set(ids)), f"{folder}: an event was doubled"
        assert got[folder] == record, folder
        names = [
            sorted(str(f.relative_to(d / folder)) for f in (d / folder).rglob("*"))
            for d in (out, tmp_path / "serial")
        ]
        assert names[0] == names[1], folder  # the same set of files as without Ray


def test_two_drivers_on_one_store_never_play_a_game_twice(tmp_path, pg_db):
    """Two drivers with their own folders start the same experiment on one PostgreSQL store at
    the same moment: every graph step of every game runs once in total, and both end with
    every game finished and the same records as a serial run."""
    pytest.importorskip("langgraph.checkpoint.postgres")
    path = experiment_file(tmp_path, rounds=2, runs=2)
    expected, steps = serial_run(path, tmp_path / "serial")
    counted: dict[str, Counter] = {"a": Counter(), "b": Counter()}
    go = threading.Barrier(2)
    results: dict[str, object] = {}

    def driver(name: str) -> None:
        go.wait()
        results[name] = run_experiment(
            load_experiment(path),
            tmp_path / name,
            db=pg_db,
            hooks=Hooks(node=lambda plan, node: counted[name].update([plan.thread_id])),
            show_progress=False,
            report=False,
        )

    threads = [threading.Thread(target=driver, args=(n,)) for n in counted]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert set(results) == {"a", "b"}
    assert counted["a"] + counted["b"] == steps, "a game step ran twice (or never)"
    for name in counted:
        assert results[name].counts["crashed"] == 0, results[name].counts
        got = records(tmp_path / name)
        assert {k: v["events"] for k, v in got.items()} == {
            k: v["events"] for k, v in expected.items()
        }


def test_a_second_run_on_one_folder_is_refused_and_changes_nothing(tmp_path):
    """While a run holds its folder, a second run of the experiment there is refused with one
    line naming the holder, before it writes anything; the folder is free again afterwards."""
    path = experiment_file(tmp_path, rounds=1, runs=1)
    out = tmp_path / "out"
    held: set[str] = set()
    inside = threading.Event()  # both games are waiting in their first step: nothing writes
    release = threading.Event()
    refused: list[str] = []

    def hold(plan, node):
        held.add(plan.thread_id)
        if len(held) == 2:
            inside.set()
        release.wait(60)

    first = threading.Thread(
        target=run_experiment,
        args=(load_experiment(path), out),
        kwargs={"hooks": Hooks(node=hold), "show_progress": False, "report": False},
    )
    first.start()
    try:
        assert inside.wait(60)
        before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
        with pytest.raises(ExperimentError) as err:
            run_experiment(load_experiment(path), out, show_progress=False, report=False)
        refused.append(str(err.value))
        after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    finally:
        release.set()
        first.join(60)
    assert "another run of this experiment is using this folder" in refused[0]
    assert f"pid {os.getpid()}" in refused[0] and "\n" not in refused[0]
    assert {p: t for p, t in after.items() if p.name != ".lock"} == {
        p: t for p, t in before.items() if p.name != ".lock"
    }
    again = run_experiment(load_experiment(path), out, show_progress=False, report=False)
    assert again.counts["skipped"] == 2 and again.new_games == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--ray", "10.9.8.7:6379"], "workers on other machines need a shared store"),
        (["--db", "postgresql://nobody@127.0.0.1:1/x"], "cannot reach the PostgreSQL server"),
        (["--db", "postgresql://a b"], "not a valid PostgreSQL URL"),
        (["--ray", "local", "--cpus-per-game", "0"], "give a number in (0, 64]"),
    ],
)
def test_bad_store_or_cluster_is_one_clear_line_before_any_game(tmp_path, args, expected):
    from typer.testing import CliRunner

    from wargraph.cli import app

    path = experiment_file(tmp_path, rounds=1, runs=1)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["experiment", str(path), "--out", str(out), *args])
    assert res.exit_code == 2, res.output
    assert expected in res.output and "Traceback" not in res.output
    assert not list(out.glob("games/*")), "nothing may be played"
