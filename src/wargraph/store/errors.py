"""What goes wrong with a store, named (`StoreError` and its kinds), and how a `--db` value is
read and shown (`is_url`, `describe`); the marks a game's run metadata carries."""

from __future__ import annotations

from pathlib import Path

RUN_MARK = "run-v1"  # metadata key "wargraph" of a game's first checkpoint
SERVED = "serve"  # the origin of a game a client of the server started (a run's "origin")
KEY_ENV = "WARGRAPH_STORE_KEY"
Db = str | Path


class StoreError(RuntimeError):
    """A store that cannot be opened or used: one clear line for the user."""


class DamagedCheckpoint(StoreError):
    pass


class GameHeld(StoreError):
    """Another process holds the game's lease."""


class LeaseLost(GameHeld):
    """This process's lease was freed and taken by another: its writes are refused."""


class HistoryInUse(StoreError):
    """A deletion that would cut a game's history (a checkpoint that stays continues from one
    it would delete): refused, nothing of the game deleted."""


def is_url(db: Db) -> bool:
    return str(db).startswith(("postgresql://", "postgres://"))


def describe(db: Db) -> str:
    """The store for messages: a path, or a URL without its password."""
    if not is_url(db):
        return str(db)
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(str(db))
    except Exception:  # malformed: say so without echoing what may hold a password
        return "postgresql://(malformed URL)"
    host = info.get("host", "localhost")
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname', '')}"
