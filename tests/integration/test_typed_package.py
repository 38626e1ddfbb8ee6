"""wargraph ships its types (`py.typed`): a plug-in author's mypy, run outside this checkout
without its configuration, checks the whole installed package clean (`mypy -p wargraph`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import wargraph

pytestmark = pytest.mark.slow


def test_py_typed_is_shipped_beside_the_package():
    assert (Path(wargraph.__file__).parent / "py.typed").is_file()


def test_mypy_on_the_installed_package_from_outside_the_checkout(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "-p", "wargraph", "--cache-dir", str(tmp_path / "cache")],
        cwd=tmp_path,  # no pyproject.toml here: mypy's defaults, no pydantic plugin
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
