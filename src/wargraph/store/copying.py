"""Copying a game to a new thread: LangGraph's `copy_thread` (langgraph-api's `acopy_thread`,
for POST /threads/<id>/copy), on SQLite and PostgreSQL alike, through the saver
(`wargraph.store.saver`). The copy is a game of its own, not a view of its source:

- **Everything the game is read from.** Every checkpoint of every namespace (the game, the
  seats' memories, subgraph calls), every pending write and, on PostgreSQL, every channel value
  a checkpoint uses: the whole history, so the copy's state, record and world (rebuilt from
  earlier checkpoints' writes, DeltaChannels from their last whole value) read as the source's,
  at the same checkpoint ids, and `replay` forks it as it would the source.
- **Sealed and bound for its own thread.** Each blob is decrypted, checked against its tag and
  binding, and encrypted again bound to the new thread (its bytes unchanged); each checkpoint
  gets a seal over the new thread. Each source checkpoint is read against its seal first: a
  damaged game is refused (`DamagedCheckpoint`), nothing copied.
- **Its own scenario and settings.** The run metadata (scenario, settings, origin) is checked
  against the source's MAC and stored for the new thread, with `copy_of` naming the source and
  no trace path: the source's trace file (and output folder) stay the source's, one folder per
  game; resume the copy with `--out` to give it one. `wargraph games` lists the copy, `view`,
  `resume` and `replay` read it.
- **Independent.** Its checkpoints carry no run id of the source (deleting a run of the source
  through the API leaves the copy as it is; the store's notes of which run wrote what are not
  copied), and the copy has its own lease: it and its source are played, pruned and deleted
  apart.
- **One writer per game.** The copy is read under the source's lease and written under the new
  thread's, in one transaction fenced by that lease: a source another process holds (a run of
  the server, a CLI `resume`) is refused with `GameHeld` naming the holder (the server answers
  409), nothing copied; a thread that already holds checkpoints is not copied over.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wargraph.store.backends import FencedSqlite, OneTransaction, fenced_writes
from wargraph.store.crypto import run_mac, seal_run
from wargraph.store.errors import RUN_MARK, SERVED, GameHeld, StoreError, describe

if TYPE_CHECKING:  # the saver calls this module
    from wargraph.store.saver import Saver

Key = tuple[str, str]  # (namespace, checkpoint id)


def copy_thread(saver: Saver, source_thread_id: str, target_thread_id: str) -> None:
    """Copy the game in `source_thread_id` to `target_thread_id`, a thread with no checkpoints:
    under the source's lease (read) and the target's (written); see the module."""
    from wargraph.store.lease import lease

    source, target = (
        _id("source_thread_id", source_thread_id),
        _id("target_thread_id", target_thread_id),
    )
    if source == target:
        raise ValueError(f"a thread is copied to another thread, not to itself ({source!r})")
    db = saver.wargraph.db
    command = SERVED if saver.wargraph.served is not None else "wargraph"
    try:
        with (
            lease(db, source, command=command, create=False),
            lease(db, target, command=command, create=False),
        ):
            _copy(saver, source, target)
    except GameHeld as err:
        raise GameHeld(f"{err} (nothing was copied)") from None
    finally:
        saver.wargraph.marked.discard(target)  # its run is looked up again when next written


def _id(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a thread id (a non-empty str), not {value!r}")
    return value


def _copy(saver: Saver, source: str, target: str) -> None:
    if _holds_rows(saver, target):
        raise StoreError(
            f"{describe(saver.wargraph.db)}: thread {target!r} already holds checkpoints; a game "
            "is copied to a new thread (nothing was copied)"
        )
    copy = _Copy(saver, source, target)
    if not copy.seals:
        return  # a thread with no checkpoint (created, never run): nothing to copy
    with fenced_writes({"configurable": {"thread_id": target}}):  # fenced by the target's lease
        if isinstance(saver, OneTransaction):
            _copy_postgres(saver, copy)
        elif isinstance(saver, FencedSqlite):
            _copy_sqlite(saver, copy)
        else:  # pragma: no cover - every store's saver is one of the two
            raise TypeError(f"not a store's saver: {type(saver).__name__}")


def _holds_rows(saver: Saver, thread_id: str) -> bool:
    sql = saver.wargraph.sql
    tables = ["checkpoints", "checkpoint_writes", "checkpoint_blobs"]
    if not sql.postgres:
        tables = ["checkpoints", "writes"]
    return any(
        sql.run(f"SELECT 1 FROM {table} WHERE thread_id = ? LIMIT 1", (thread_id,))[0]
        for table in tables
    )


class _Copy:
    """What the copy's rows get that the source's do not: a seal per checkpoint (each source
    checkpoint read against its own seal first) and the run metadata for the new thread."""

    def __init__(self, saver: Saver, source: str, target: str) -> None:
        self.saver, self.source, self.target = saver, source, target
        key = saver.wargraph.key
        self.seals: dict[Key, str] = {}
        has_run = False
        for tup in saver.list({"configurable": {"thread_id": source}}):  # every namespace
            conf = tup.config["configurable"]
            ns, cid = str(conf.get("checkpoint_ns") or ""), str(conf["checkpoint_id"])
            parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            self.seals[(ns, cid)] = seal_run(key, tup.checkpoint, cid, (target, ns, parent))
            has_run = has_run or (tup.metadata or {}).get("wargraph") == RUN_MARK
        # a game of a store from before run metadata moved into checkpoints: the copy gets it
        # with its first root checkpoint
        roots = [cid for ns, cid in self.seals if ns == ""]
        self.legacy = saver.wargraph.legacy_run(source) if roots and not has_run else None
        self.first = min(roots) if roots else None

    def metadata(self, ns: str, cid: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """A source checkpoint's metadata as the copy's: its seal, its run, no run id."""
        seal = self.seals.get((ns, cid))
        if seal is None:  # written while the source's lease was held: not by a writer of it
            raise StoreError(
                f"{describe(self.saver.wargraph.db)}: thread {self.source!r} changed while it "
                "was copied (a write without its lease); nothing was copied, copy it again"
            )
        out = {k: v for k, v in metadata.items() if k != "run_id"}
        if "thread_id" in out:
            out["thread_id"] = self.target
        out["wargraph_seal"] = seal
        run = None
        if out.get("wargraph") == RUN_MARK:
            run = self.saver.run_from(self.source, metadata)  # checked against its MAC
        elif self.legacy is not None and ns == "" and cid == self.first:
            run = self.legacy
        if run is not None:
            context = {**(run.get("context") or {}), "trace_path": None}
            text = json.dumps(
                {**run, "context": context, "copy_of": self.source}, sort_keys=True, default=str
            )
            out["wargraph"], out["wargraph_run"] = RUN_MARK, text
            out["wargraph_mac"] = run_mac(self.saver.wargraph.key, self.target, text)
        return out

    def checkpoint_binding(self, ns: str, cid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return ("checkpoint", self.source, ns, cid), ("checkpoint", self.target, ns, cid)

    def write_binding(
        self, ns: str, cid: str, task_id: str
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return ("write", self.source, ns, cid, task_id), ("write", self.target, ns, cid, task_id)


def _json(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    found = json.loads(bytes(raw).decode() if isinstance(raw, bytes | memoryview) else raw)
    return found if isinstance(found, dict) else {}


def _copy_sqlite(saver: FencedSqlite, copy: _Copy) -> None:
    serde = copy.saver.serde
    with saver.cursor() as cur:  # the fencing check opens the transaction
        try:
            checkpoints = cur.execute(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,"
                " metadata FROM checkpoints WHERE thread_id = ?",
                (copy.source,),
            ).fetchall()
            rows = []
            for ns, cid, parent, typ, blob, meta in checkpoints:
                typ, blob = serde.rebound((typ, blob), *copy.checkpoint_binding(ns, cid))
                text = json.dumps(copy.metadata(ns, cid, _json(meta)), ensure_ascii=False)
                rows.append((copy.target, ns, cid, parent, typ, blob, text.encode()))
            cur.executemany(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,"
                " parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            writes = cur.execute(
                "SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type,"
                " value FROM writes WHERE thread_id = ?",
                (copy.source,),
            ).fetchall()
            cur.executemany(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,"
                " idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (copy.target, ns, cid, task, path, idx, channel)
                    + serde.rebound((typ, value), *copy.write_binding(ns, cid, task))
                    for ns, cid, task, path, idx, channel, typ, value in writes
                ],
            )
        except BaseException:
            cur.connection.rollback()  # the saver's cursor commits when it closes
            raise


def _copy_postgres(saver: OneTransaction, copy: _Copy) -> None:
    from psycopg.types.json import Jsonb

    serde = copy.saver.serde
    source, target = copy.source, copy.target
    with saver._cursor(pipeline=True) as cur:  # one transaction, the fencing check first
        checkpoints = cur.execute(
            "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = %s",
            (source,),
        ).fetchall()
        cur.executemany(
            # the checkpoint itself (ids, versions, inline values) as it is, server-side
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,"
            " parent_checkpoint_id, type, checkpoint, metadata) SELECT %s, checkpoint_ns,"
            " checkpoint_id, parent_checkpoint_id, type, checkpoint, %s FROM checkpoints"
            " WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
            [
                (
                    target,
                    Jsonb(copy.metadata(r["checkpoint_ns"], r["checkpoint_id"], r["metadata"])),
                    source,
                    r["checkpoint_ns"],
                    r["checkpoint_id"],
                )
                for r in checkpoints
            ],
        )
        # a channel's value at a version is one blob, shared by the checkpoints at it: those
        # some checkpoint uses (an unused one is garbage a deletion left)
        blobs = cur.execute(
            "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs b"
            " WHERE thread_id = %s AND EXISTS (SELECT 1 FROM checkpoints c WHERE"
            " c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND"
            " c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
            (source,),
        ).fetchall()
        cur.executemany(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            [
                (target, r["checkpoint_ns"], r["channel"], r["version"])
                + serde.rebound(
                    (r["type"], r["blob"]),
                    ("blob", source, r["checkpoint_ns"], r["channel"], r["version"]),
                    ("blob", target, r["checkpoint_ns"], r["channel"], r["version"]),
                )
                for r in blobs
            ],
        )
        writes = cur.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob"
            " FROM checkpoint_writes WHERE thread_id = %s",
            (source,),
        ).fetchall()
        cur.executemany(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id,"
            " task_path, idx, channel, type, blob) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    target,
                    r["checkpoint_ns"],
                    r["checkpoint_id"],
                    r["task_id"],
                    r["task_path"],
                    r["idx"],
                    r["channel"],
                )
                + serde.rebound(
                    (r["type"], r["blob"]),
                    *copy.write_binding(r["checkpoint_ns"], r["checkpoint_id"], r["task_id"]),
                )
                for r in writes
            ],
        )


__all__ = ["copy_thread"]
