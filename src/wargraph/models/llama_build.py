"""Whether this machine can run the installed llama.cpp build, checked before the first model
load: a clear error instead of a crash of the whole process.

A llama.cpp built with `-march=native` on a CPU that reports Intel AMX uses AMX tiles for matrix
products. Some virtual machines report AMX without enabling it: the first model call then dies
with a segmentation fault (seen here: `ldtilecfg` in `ggml_backend_amx_mul_mat`). `make venv`
builds for AVX2 instead; `models.load_llama` loads an AMX build without its AMX weight buffers;
and such a build is checked, once per build and machine, by one tiny generation in a child
process loaded that way (the result is remembered in the user's cache folder).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
ADVICE = (
    "the installed llama-cpp-python was built to use Intel AMX, which this machine's CPU reports "
    "but does not run (a test generation crashed, even without the AMX weight buffers). "
    "Rebuild it for AVX2: "
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --force-reinstall --no-deps --no-cache-dir '
    "--no-binary llama-cpp-python llama-cpp-python  (or `make venv` after removing .venv)"
)

_PROBE = (  # loaded as wargraph loads it (without the extra AMX buffers), prompt of 2+ tokens
    "import sys\nfrom wargraph.models.chat import load_llama\n"
    "m = load_llama(sys.argv[1], n_ctx=64, n_threads=2, verbose=False)\n"
    "m.create_completion('Hello there, how are you', max_tokens=1)\n"
)


class BuildUnusable(RuntimeError):
    """The llama.cpp build cannot run on this machine; the message says how to rebuild."""


def uses_amx() -> bool:
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    return any(f"AMX{kind} = 1" in text for kind in ("", "_INT8", "_BF16", "_TILE"))


def _marker(model_path: str) -> Path:
    import llama_cpp

    lib = Path(llama_cpp.__file__).parent / "lib"
    stamp = [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in sorted(lib.glob("*"))]
    key = hashlib.sha256("|".join([*stamp, model_path, os.uname().machine]).encode()).hexdigest()
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return home / "wargraph" / f"llama-build-ok-{key[:16]}"


def probe(model_path: str, timeout: float = 120.0) -> int:
    """Exit status of one tiny generation in a child process (negative: killed by a signal)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, model_path],
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 0  # slow is not broken: the real call will tell
    return done.returncode


def check_build(model_path: str) -> None:
    """Raise BuildUnusable if this build crashes on this machine; a no-op for builds without AMX
    and, after one passing probe, for this build on this machine."""
    if not uses_amx():
        return
    marker = _marker(model_path)
    if marker.exists():
        return
    status = probe(model_path)
    if status < 0:
        raise BuildUnusable(ADVICE)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # a read-only home only costs the probe next time
