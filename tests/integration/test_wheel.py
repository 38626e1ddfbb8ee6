"""The one import namespace survives packaging: a built wheel loads a scenario and a prompt."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(300)


def test_built_wheel_carries_scenarios_and_prompts(tmp_path):
    root = __file__.rsplit("/tests/", 1)[0]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            root,
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("wargraph-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "wargraph/scenarios/azuristan_crimsonia.yaml" in names
    assert "wargraph/prompts/v1/player_system.txt" in names
    assert "wargraph/graphs/crisis.py" in names and "wargraph/nodes/order.py" in names
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    code = (
        "import wargraph.scenario as s, wargraph.prompts as p;"
        "sc = s.load_scenario('azuristan_crimsonia');"
        "print(s.__file__); print(p.load_prompt('player_system')[:20]); print(sc.title)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith(str(target))
    shipped = (ROOT / "prompts" / "v1" / "player_system.txt").read_text(encoding="utf-8")
    assert out[1] == shipped[:20]  # the prompt file came with the wheel
    assert "Zafaristan" in out[2]
