"""The experiment's checkpoint store, checked before any game is played.

`wargraph.store.saver` opens a store (a SQLite file, or a `postgresql://` URL shared by machines) and
the runner holds each game's lease in it while playing (`wargraph.store.lease`); this only makes a
store that cannot be used fail at once, with one line, instead of once per game."""

from __future__ import annotations

from pathlib import Path

from wargraph.store.errors import is_url
from wargraph.store.setup import own_sql


def check_store(db: str | Path) -> None:
    """A PostgreSQL store is reached and set up (SQLite files are created on first use)."""
    if is_url(db):
        with own_sql(db):
            pass
