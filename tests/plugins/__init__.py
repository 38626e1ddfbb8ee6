"""Plug-in families for tests: `bargain` (imported in-tree), and helpers to install a throwaway
plug-in package for real (pip, no network) or to stand in for the entry points."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path


def pyproject(dist: str, entry_points: dict[str, str], package: str, data: str = "") -> str:
    """A plug-in package's pyproject.toml declaring `entry_points` in the families' group."""
    eps = "\n".join(f'{name} = "{target}"' for name, target in entry_points.items())
    text = f"""\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "0.0.1"

        [project.entry-points."wargraph.families"]
        {eps}

        [tool.setuptools]
        packages = ["{package}"]
    """
    text = textwrap.dedent(text)
    if data:
        text += f'\n[tool.setuptools.package-data]\n{package} = ["{data}"]\n'
    return text


def _pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@contextlib.contextmanager
def installed_apart(src: Path, files: dict[str, str], target: Path) -> Iterator[dict[str, str]]:
    """The package made of `files` installed into `target` alone, not this venv: the block gets
    an environment whose PYTHONPATH finds it, for the processes it starts. Plug-ins that hang or
    exit at import stay invisible to every other test running meanwhile."""
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text).lstrip())
    done = _pip("install", "--no-deps", "--no-build-isolation", "--target", str(target), str(src))
    assert done.returncode == 0, done.stderr
    path = os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH", "")) if p)
    yield {**os.environ, "PYTHONPATH": path}
