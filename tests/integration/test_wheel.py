"""The package a user installs: the built wheel carries every package and data file, builds
without setuptools warnings, and, installed in a clean virtual environment (its dependencies
from the package index or pip's cache), plays a scripted round of every family and serves
every graph."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {  # family -> a shipped scenario and what keeps one round short
    "crisis": ["azuristan_crimsonia"],
    "tabletop": ["haiwire"],
    "waragent": ["wwi"],
    "diplomacy": ["diplomacy", "--max-year", "1901", "--negotiation-rounds", "1"],
    "flow": ["summit"],
    "blotto": ["blotto"],
}
LINK = re.compile(r"(http://127\.0\.0\.1:\d+)/facilitator#token=(f\.[0-9a-f]+)")
ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": os.environ.get("HOME", "/tmp"),
    "LANGSMITH_TRACING": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("wheel")
    # from a copy of the sources: an in-tree build reuses ./build, where files of earlier builds
    # (or of modules since removed) would slip into the wheel
    src = out / "src"
    every_level = shutil.ignore_patterns(
        ".git", ".venv", "*.egg-info", "__pycache__", "*.sqlite*", ".langgraph_api",
        ".wargraph-server", "node_modules")  # fmt: skip

    def ignore(folder: str, names: list[str]) -> set[str]:
        # games' output folders at the top only: src/wargraph/runs is a package
        top = {"build", "dist", "runs", "site"} if Path(folder) == ROOT else set()
        return set(every_level(folder, names)) | (top & set(names))

    shutil.copytree(ROOT, src, ignore=ignore)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
         str(out), str(src)],
        capture_output=True, text=True, timeout=300, cwd=out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("wargraph-*.whl")
    return wheel, done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Path:
    """A clean virtual environment holding the wheel and its dependencies (one for all checks)."""
    env_dir = tmp_path_factory.mktemp("clean") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         str(built[0])],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return env_dir


def test_the_wheel_carries_every_package_and_data_file_without_warnings(built):
    wheel, log = built
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {"wargraph": ROOT / "src" / "wargraph"}  # every module and data file, by its place
    shipped = (".py", ".txt", ".yaml", ".yml", ".html", ".js", ".css")
    wanted = {
        f"{prefix}/{path.relative_to(folder).as_posix()}"
        for prefix, folder in sources.items()
        for path in folder.rglob("*")
        if path.suffix in shipped and "__pycache__" not in path.parts
    }
    missing = sorted(wanted - names)
    assert not missing, f"left out of the wheel: {missing[:20]}"
    assert "wargraph/graphs/waragent/game.py" in names and "wargraph/web/play.js" in names
    # the design's data folders and the type marker
    assert "wargraph/scenarios/diplomacy/diplomacy.yaml" in names
    assert "wargraph/prompts/waragent/v1/waragent_act_question.txt" in names
    assert "wargraph/py.typed" in names
    assert not re.search(r"(?i)warning", log), log[-3000:]


def _run(env_dir: Path, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(env_dir / "bin" / "wargraph"), *args],
        capture_output=True, text=True, cwd=cwd, env=ENV, timeout=timeout,
    )  # fmt: skip


def test_every_family_plays_a_scripted_round_from_the_installed_wheel(installed, tmp_path):
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import wargraph; print(wargraph.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert where.stdout.startswith(str(installed)), where.stdout + where.stderr
    for family, (scenario, *extra) in FAMILIES.items():
        out = tmp_path / family
        played = _run(
            installed, "play", scenario, "--model", "scripted", "--rounds", "1", *extra,
            "--out", str(out), "--db", str(tmp_path / "games.sqlite"), cwd=tmp_path,
        )  # fmt: skip
        assert played.returncode == 0, f"{family}: {played.stdout[-2000:]}{played.stderr[-2000:]}"
        assert "Game over" in played.stdout, family
        assert (out / "record.json").is_file(), family


def test_wargraph_serve_from_the_installed_wheel_loads_every_graph(installed, tmp_path):
    from wargraph.server.serve import free_port

    log = tmp_path / "serve.log"
    port = free_port()
    proc = subprocess.Popen(
        [str(installed / "bin" / "wargraph"), "serve", "--port", str(port), "--state-dir",
         str(tmp_path / "state")],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=tmp_path, env=ENV,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not (m := LINK.search(log.read_text(errors="replace"))):
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "no facilitator link: " + log.read_text()[-3000:]
            time.sleep(0.5)
        url, token = m.groups()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            found = client.post("/assistants/search", json={"limit": 50}).json()
            served = {a["graph_id"]: a["assistant_id"] for a in found}
            assert set(FAMILIES) <= set(served), served
            for family in FAMILIES:  # drawing a graph loads it
                drawn = client.get(f"/assistants/{served[family]}/graph", params={"xray": "true"})
                assert drawn.status_code == 200, (family, drawn.text[:500])
                assert "setup" in {n["id"] for n in drawn.json()["nodes"]}, family
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
