"""Every name `wargraph` exports is importable from it (the lazy table points at the module that
defines it), and the old import paths still import, with a warning naming the new one."""

from __future__ import annotations

import importlib
import warnings

import wargraph
from wargraph import _moved


def test_every_public_name_resolves():
    for name in wargraph.__all__:
        assert getattr(wargraph, name) is not None, name


def test_old_import_paths_import_the_moved_modules_with_a_warning():
    for old in ("wargraph.scenario", "wargraph.graphs.crisis", "wargraph.worlds.diplomacy.engine"):
        assert old in _moved.MOVED
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert module is importlib.import_module(_moved.MOVED[old])
        assert module.__spec__ is not None and module.__spec__.name == _moved.MOVED[old]
        assert any(_moved.MOVED[old] in str(w.message) for w in seen), old
