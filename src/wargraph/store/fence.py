"""Fencing: a game's checkpoint writes are accepted only from the current holder of its lease.

Each taking of a lease increments the thread's generation in `wargraph_lease`; the holder keeps
the number it got here (per store and thread, for this process). Every checkpoint write of that
thread checks, in the write's own transaction, that the stored generation is still its own: a
holder that was paused (SIGSTOP, a sleeping laptop, a debugger) while its lease was freed and
taken by another process has its next write refused with `LeaseLost` and stops, and the other
process's checkpoints stay as they were. Writes of a thread this process holds no lease on
(tests that write directly) are not fenced. The server holds a game's lease for each run and
each state edit through the LangGraph API (`wargraph.server.stored`), and the store's deletions
hold it too (`wargraph.store.pruning`); async writes run the same sync write in a worker thread, so
they are fenced alike.

The check and a taking exclude each other: on SQLite through the database's write lock (the
check opens the write's transaction with an UPDATE); on PostgreSQL through a transaction-scoped
advisory lock on the thread's fence key, shared by writes and exclusive for the increment (a row
lock per write, FOR SHARE, doubled a game's time), so a write in flight commits before the
increment, and a write after it reads the new generation.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import secrets
import threading
from pathlib import Path
from typing import Any

TABLE = (
    "CREATE TABLE IF NOT EXISTS wargraph_lease (thread_id TEXT PRIMARY KEY,"
    " generation BIGINT NOT NULL, command TEXT, host TEXT, pid BIGINT, since TEXT)"
)

# the thread a saver's `put`/`put_writes` is writing right now (set around the call)
WRITING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "wargraph_writing", default=None
)

_held: dict[tuple[str, str], tuple[int, int]] = {}
_lost: set[tuple[str, str]] = set()
_lock = threading.Lock()


def store_of(db: str | Path) -> str:
    """One name per store in this process (a relative path, an absolute one and a symlink are
    one file)."""
    text = str(db)
    if text.startswith(("postgresql://", "postgres://")):
        return text
    return _real_path(text, os.getcwd() if not os.path.isabs(text) else "")


_resolved: dict[tuple[str, str], str] = {}


def _real_path(text: str, cwd: str) -> str:
    """The file a store's name resolves to, once per name and working folder: every write of a
    game asks (its fence check), and resolving the path is a system call per folder of it. A
    name that does not resolve to an existing file yet is resolved again each time."""
    key = (text, cwd)
    found = _resolved.get(key)
    if found is None:
        found = os.path.realpath(os.path.join(cwd, text) if cwd else text)
        if os.path.exists(found) and len(_resolved) < 1024:
            _resolved[key] = found
    return found


def advisory_key(store: str, name: str, kind: str = "lease") -> int:
    """A signed 64-bit PostgreSQL advisory lock key for a thread of one store (stores may share
    a database: each has its own id); `kind` keeps a thread's lease and fence keys apart."""
    digest = hashlib.sha256(f"wargraph-{kind}\0{store}\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def store_id(sql: Any) -> str:
    """The store's own random id (in wargraph_meta), made on first use."""
    sql.run(
        "INSERT INTO wargraph_meta (name, value) VALUES ('store_id', ?)"
        " ON CONFLICT (name) DO NOTHING",
        (secrets.token_hex(16),),
    )
    rows, _ = sql.run("SELECT value FROM wargraph_meta WHERE name = 'store_id'")
    return str(rows[0][0])


def hold(db: str | Path, thread_id: str, generation: int, key: int = 0) -> None:
    """This process now holds the thread's lease as `generation` (`key`: PostgreSQL's fence
    lock key of the thread)."""
    with _lock:
        _held[(store_of(db), thread_id)] = (generation, key)
        _lost.discard((store_of(db), thread_id))


def drop(db: str | Path, thread_id: str) -> None:
    with _lock:
        _held.pop((store_of(db), thread_id), None)
        _lost.discard((store_of(db), thread_id))


def held(db: str | Path, thread_id: str | None) -> tuple[int, int] | None:
    """(generation, fence key) this process holds for the thread, or None (no lease here:
    unfenced)."""
    if thread_id is None:
        return None
    with _lock:
        return _held.get((store_of(db), thread_id))


def refuse(db: str | Path, thread_id: str, mine: int, found: int | None) -> str:
    """Record the loss (the holder's next `check()` stops it) and say what happened."""
    with _lock:
        _lost.add((store_of(db), thread_id))
    return lost_message(thread_id, mine, found)


def lost(db: str | Path, thread_id: str) -> bool:
    with _lock:
        return (store_of(db), thread_id) in _lost


def lost_message(thread_id: str, mine: int, found: int | None) -> str:
    now = "no holder" if found is None else f"generation {found}"
    return (
        f"game {thread_id!r}: this process lost its lease (it holds generation {mine}, the store "
        f"has {now}: another process took the game while this one was paused or cut off); "
        "its write was refused and it stops. The game is as the other process left it"
    )
