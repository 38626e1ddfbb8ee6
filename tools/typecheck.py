"""Type-check the wargraph namespace with mypy: `python tools/typecheck.py [mypy options]`.

setup.py maps top-level folders into one import namespace (`nodes/` installs as
`wargraph.nodes`, `graphs/` as `wargraph.graphs` ...), and the editable install resolves that
mapping with an import hook that mypy does not run. Plain `mypy wargraph nodes` would name
`nodes/order.py` `nodes.order` and then fail to find `wargraph.nodes.seats`. So this script
gives mypy every file with the module name it has when installed (read from setup.py's ROOTS)
and otherwise behaves as the `mypy` command: settings come from `[tool.mypy]` in
pyproject.toml, extra arguments are mypy options, the cache lives in .mypy_cache, and the exit
status is 0 clean, 1 errors, 2 crash or bad options."""

from __future__ import annotations

import ast
import os
import sys
import time
from pathlib import Path

from mypy import util
from mypy.fscache import FileSystemCache
from mypy.main import process_options, run_build
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent


def roots(setup: Path = ROOT / "setup.py") -> dict[str, str]:
    """setup.py's ROOTS (import name -> folder), read without running setup()."""
    for node in ast.parse(setup.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "ROOTS" for t in node.targets
        ):
            return dict(ast.literal_eval(node.value))
    raise SystemExit(f"typecheck: no ROOTS mapping in {setup}")


def sources(mapping: dict[str, str]) -> list[BuildSource]:
    """Every .py file under each mapped folder, named as installed."""
    found: list[BuildSource] = []
    for name, folder in mapping.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            if "__pycache__" in rel.parts:
                continue
            parts = [p for p in rel.parts if p != "__init__"]
            module = ".".join([name, *parts])
            found.append(BuildSource(str(path.relative_to(ROOT)), module, base_dir=str(ROOT)))
    return found


def main(argv: list[str]) -> int:
    t0 = time.time()
    fscache = FileSystemCache()
    _, options = process_options(argv, require_targets=False, fscache=fscache)
    todo = sources(roots())
    _, messages, blockers = run_build(todo, options, fscache, t0, sys.stdout, sys.stderr)
    fmt = util.FancyFormatter(sys.stdout, sys.stderr, options.hide_error_codes)
    errors, _, files = util.count_stats(messages)
    if errors or blockers:
        print(fmt.format_error(errors, files, len(todo), blockers=blockers))
        return 2 if blockers else 1
    print(fmt.format_success(len(todo)))
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)  # relative paths in messages, and pyproject.toml found from anywhere
    sys.exit(main(sys.argv[1:]))
