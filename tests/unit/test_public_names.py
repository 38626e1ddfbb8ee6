"""Every name `wargraph` exports is importable from it (the lazy table points at the module that
defines it)."""

from __future__ import annotations

import wargraph


def test_every_public_name_resolves():
    for name in wargraph.__all__:
        assert getattr(wargraph, name) is not None, name
