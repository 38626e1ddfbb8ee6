"""A tournament played as Ray tasks (a local instance in a network namespace of its own, so
Ray binds loopback only) gives the same games, scores and leaderboard as in this process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wargraph.evals.tournament import load_tournament, run_tournament

BLOTTO = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "wargraph"
    / "scenarios"
    / "tournaments"
    / "blotto_bots.yaml"
)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ray_tournament_equals_in_process(tmp_path):
    pytest.importorskip("ray", reason="the Ray test needs wargraph[scale]")
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("the Ray test needs root, unshare and ip to keep Ray on loopback")
    serial = run_tournament(load_tournament(BLOTTO), tmp_path / "serial", show_progress=False)
    wargraph = str(Path(sys.executable).parent / "wargraph")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
        + [wargraph, "tournament", str(BLOTTO), "--ray", "local", "--out", str(tmp_path / "ray")],
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ray = json.loads((tmp_path / "ray" / "summary.json").read_text(encoding="utf-8"))
    mine = json.loads((tmp_path / "serial" / "summary.json").read_text(encoding="utf-8"))
    assert len(ray["games"]) == len(serial.games) == 12
    strip = ("written",)
    assert {k: v for k, v in ray.items() if k not in strip} == {
        k: v for k, v in mine.items() if k not in strip
    }
