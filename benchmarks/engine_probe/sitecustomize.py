"""The engine probe: where a Diplomacy game's CPU goes, phase by phase, from inside its process.

Put this folder first on a Python process's PYTHONPATH and name a file in
WARGRAPH_ENGINE_PROBE: every call of the `diplomacy` engine's `Game.process()` (the
adjudication that ends each phase) then appends one JSON line to that file: the phase it ended,
the process's CPU seconds (every thread, user + system) and its wall clock after it. Any program
playing on the engine is measured alike (wargraph and AI_Diplomacy both call `process()` once a
phase), and the CPU between two adjudications is that phase's, with the start-up (imports, the
model clients) and the end (records, maps) left out: a game's start-up varied by seconds from
one run to the next, more than eight phases' work (benchmarks/like_for_like.py).

Standard library only, and nothing happens without WARGRAPH_ENGINE_PROBE: it also runs in a
program whose own `diplomacy` package lives in its tree (AI_Diplomacy's does)."""

from __future__ import annotations

import os

_OUT = os.environ.get("WARGRAPH_ENGINE_PROBE")


def _probed(module):
    """Wrap the freshly loaded engine module's Game.process with the probe."""
    import json
    import time

    game = getattr(module, "Game", None)
    if game is None or getattr(game.process, "probed", False):
        return
    real = game.process

    def process(self, *args, **kwargs):
        phase = self.get_current_phase()
        result = real(self, *args, **kwargs)
        line = {"phase": phase, "cpu_s": time.process_time(), "wall_s": time.perf_counter()}
        with open(_OUT, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        return result

    process.probed = True
    game.process = process


if _OUT:
    import importlib.abc
    import importlib.util
    import sys

    class _EngineFinder(importlib.abc.MetaPathFinder):
        """Finds `diplomacy.engine.game` as the other finders do, and probes it once loaded."""

        def find_spec(self, name, path, target=None):
            if name != "diplomacy.engine.game":
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                _probed(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _EngineFinder())
