"""Scripted games of every family keep their records, transcripts, prompts and drawings: a
restructuring of the kernel changes none of them. After an intended rule or prompt change,
`python -m tests.golden --write` records the new fingerprints (the commit says why)."""

from __future__ import annotations

import json

import pytest

from tests.golden import FINGERPRINTS, GAMES, files, fingerprint


@pytest.mark.parametrize(("name", "scenario", "overrides"), GAMES, ids=[g[0] for g in GAMES])
def test_scripted_game_is_unchanged(name, scenario, overrides, tmp_path):
    expected = json.loads(FINGERPRINTS.read_text())[name]
    found = fingerprint(files(name, scenario, overrides, tmp_path / name))
    changed = sorted(k for k in expected if found.get(k) != expected[k])
    assert not changed, (
        f"{name}: {', '.join(changed)} changed; `python -m tests.golden --dump DIR` on both "
        "commits shows how"
    )
