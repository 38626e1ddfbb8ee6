"""A llama.cpp build that crashes on this machine (AMX reported but not run) is refused with the
rebuild command before the first model call, instead of the process dying mid-game."""

from __future__ import annotations

import pytest

import wargraph.models.llama_build as llama_build
from wargraph.models.chat import ModelRefError, _LocalLlama


@pytest.fixture
def amx_build(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(llama_build, "uses_amx", lambda: True)
    monkeypatch.setattr(_LocalLlama, "_instances", {})
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return model


def test_a_build_whose_probe_crashes_is_refused_with_the_rebuild_command(amx_build, monkeypatch):
    # the child process dies by SIGSEGV, as the first AMX tile instruction does on such machines
    monkeypatch.setattr(llama_build, "_PROBE", "import os, signal\nos.kill(os.getpid(), 11)\n")
    with pytest.raises(ModelRefError) as err:
        _LocalLlama.get(str(amx_build))
    assert "GGML_NATIVE=OFF" in str(err.value) and "AMX" in str(err.value)
    assert not llama_build._marker(str(amx_build)).exists()


def test_a_build_whose_probe_runs_is_checked_once(amx_build, monkeypatch):
    calls = []
    monkeypatch.setattr(llama_build, "probe", lambda path: calls.append(path) or 0)
    llama_build.check_build(str(amx_build))
    llama_build.check_build(str(amx_build))
    assert calls == [str(amx_build)]  # remembered after the first passing probe


def test_builds_without_amx_are_not_probed(monkeypatch, tmp_path):
    monkeypatch.setattr(llama_build, "uses_amx", lambda: False)
    monkeypatch.setattr(llama_build, "probe", lambda path: pytest.fail("probed"))
    llama_build.check_build(str(tmp_path / "m.gguf"))


def test_the_venv_build_is_portable():
    # `make venv` builds llama.cpp for AVX2 (LLAMA_CMAKE_ARGS), so no AMX and no probe
    assert not llama_build.uses_amx(), "llama.cpp built natively; rebuild with `make venv`"
