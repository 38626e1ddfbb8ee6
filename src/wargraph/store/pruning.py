"""Deleting checkpoints from a wargraph store: a whole game (`delete_thread`), what some runs
wrote (`delete_for_runs`: langgraph-api deletes a run's checkpoints when a client deletes the
run, or rolls it back with `multitask_strategy="rollback"`), and a game's history
(`prune(strategy="keep_latest")`), on SQLite and PostgreSQL alike, through the saver
(`wargraph.store.saver`). What LangGraph's `BaseCheckpointSaver` asks, with wargraph's guarantees:

- **One writer per game.** Each game is changed under its lease (`wargraph.store.lease`), as a run
  writes it, in one transaction fenced by that lease's generation. A game another process holds
  (a CLI `resume`, a run of the server) is left as it is: `GameHeld` names its holder once the
  other games asked for are done (asking again is safe).
- **`delete_for_runs`: the game as it was before those runs.** It deletes the checkpoints the
  runs wrote (metadata `run_id`) and every write they stored, also those under the checkpoint a
  run resumed from (a person's answer, the steps done before a rollback), which the store notes
  with their run as they are written (`wargraph_run_writes`). Where a checkpoint that stays
  continues from what they wrote (a later run, or a state edit), deleting would cut the game's
  history, and its record with it (the record and the world are rebuilt from earlier
  checkpoints' writes): `HistoryInUse`, nothing of that game deleted; delete the later runs
  first. Deleting a game's first run deletes the game.
- **`keep_latest`: every checkpoint that stays reads as it did.** In each namespace it keeps
  the latest checkpoint and its ancestors back to the nearest one that stores every
  DeltaChannel it has whole (the rule LangGraph's docs give for DeltaChannel threads; its
  metadata's `counters_since_delta_snapshot` names the channels it does not store whole); the
  whole path when there is none. A wargraph game stores its record, world and scenario whole at
  different steps, so the whole path of its latest checkpoint usually stays: what goes is
  branches off it (state edits of earlier checkpoints, and what came after them), finished
  subgraph calls of checkpoints that go, and checkpoints before a point where everything was
  stored whole. Also kept: the game's first checkpoint (its scenario and settings, with the path
  of its trace file) and, for each root checkpoint kept, the seats' memories `wargraph replay`
  would copy when forking there (with the root checkpoint each ran under). Kept checkpoints are
  not rewritten: their seals hold.
- `strategy="delete"` deletes the games, as `delete_thread` does. The lease rows stay: a game's
  generation only grows, so a holder from before can never write again.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.store.backends import FencedSqlite, OneTransaction, fenced_writes
from wargraph.store.errors import RUN_MARK, SERVED, GameHeld, HistoryInUse, describe

if TYPE_CHECKING:  # the saver calls this module
    from wargraph.store.saver import Saver

KEEP_LATEST, DELETE = "keep_latest", "delete"
STRATEGIES = (KEEP_LATEST, DELETE)
SUPERSEDED_SENDS = 4  # checkpoints before this format read their pending sends from the parent


@dataclass(frozen=True)
class Row:
    """A checkpoint's place in its game, read without loading it."""

    ns: str
    id: str
    parent: str | None
    metadata: dict[str, Any]


def _metadata(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        found = json.loads(bytes(raw).decode() if isinstance(raw, bytes | memoryview) else raw)
    except (TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def rows_of(saver: Saver, thread_id: str) -> list[Row]:
    rows, _ = saver.wargraph.sql.run(
        "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints"
        " WHERE thread_id = ?",
        (thread_id,),
    )
    return [
        Row(str(ns), str(cid), parent and str(parent), _metadata(m)) for ns, cid, parent, m in rows
    ]


def threads_of_runs(saver: Saver, run_ids: Sequence[str]) -> list[str]:
    """The games holding checkpoints or writes of these runs."""
    marks = ", ".join("?" * len(run_ids))
    if saver.wargraph.sql.postgres:
        run_of = "metadata ->> 'run_id'"
    else:
        run_of = (
            "CASE WHEN json_valid(CAST(metadata AS TEXT)) THEN"
            " json_extract(CAST(metadata AS TEXT), '$.run_id') END"
        )
    rows, _ = saver.wargraph.sql.run(
        f"SELECT thread_id FROM checkpoints WHERE {run_of} IN ({marks})"
        f" UNION SELECT thread_id FROM wargraph_run_writes WHERE run_id IN ({marks})",
        (*run_ids, *run_ids),
    )
    return sorted({str(r[0]) for r in rows})


# --- each game under its lease ---------------------------------------------------------------


def each_held(saver: Saver, thread_ids: Sequence[str], change: Callable[[str], None]) -> None:
    """`change(thread)` for each game under its lease; the games another process holds are left
    as they are, and named (GameHeld) once the others are done."""
    from wargraph.store.lease import lease

    command = SERVED if saver.wargraph.served is not None else "wargraph"
    held: list[str] = []
    for thread in dict.fromkeys(str(t) for t in thread_ids):
        try:
            with lease(saver.wargraph.db, thread, command=command, create=False):
                change(thread)
        except GameHeld as err:
            held.append(str(err))
        finally:
            saver.wargraph.marked.discard(thread)  # its run is looked up again when next written
    if held:
        raise GameHeld("; ".join(held) + " (nothing of it was deleted)")


# --- deleting chosen checkpoints, with their writes (and blobs no one else uses) ---------------


def delete_checkpoints(
    saver: Saver, thread_id: str, doomed: dict[str, set[str]], runs: Sequence[str] = ()
) -> None:
    """Delete these checkpoints (namespace -> ids) of one game and their writes, and the writes
    these runs stored under the game's other checkpoints, in one transaction."""
    doomed = {ns: ids for ns, ids in doomed.items() if ids}
    if not doomed and not runs:
        return
    with fenced_writes({"configurable": {"thread_id": thread_id}}):  # fenced by the lease held now
        if isinstance(saver, OneTransaction):
            _delete_postgres(saver, thread_id, doomed, list(runs))
        elif isinstance(saver, FencedSqlite):
            _delete_sqlite(saver, thread_id, doomed, list(runs))
        else:  # pragma: no cover - every store's saver is one of the two
            raise TypeError(f"not a store's saver: {type(saver).__name__}")


def _delete_sqlite(
    saver: FencedSqlite, thread_id: str, doomed: dict[str, set[str]], runs: list[str]
) -> None:
    with saver.cursor() as cur:  # the fencing check opens the transaction
        try:
            if runs:
                marks = ", ".join("?" * len(runs))
                cur.execute(
                    "DELETE FROM writes WHERE thread_id = ? AND EXISTS (SELECT 1 FROM"
                    " wargraph_run_writes r WHERE r.thread_id = writes.thread_id AND"
                    " r.checkpoint_ns = writes.checkpoint_ns AND r.checkpoint_id ="
                    " writes.checkpoint_id AND r.task_id = writes.task_id AND r.idx = writes.idx"
                    f" AND r.run_id IN ({marks}))",
                    (thread_id, *runs),
                )
                cur.execute(
                    f"DELETE FROM wargraph_run_writes WHERE thread_id = ? AND run_id IN ({marks})",
                    (thread_id, *runs),
                )
            for ns, ids in doomed.items():
                keys = [(thread_id, ns, cid) for cid in sorted(ids)]
                for table in ("checkpoints", "writes", "wargraph_run_writes"):
                    cur.executemany(
                        f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ?"
                        " AND checkpoint_id = ?",
                        keys,
                    )
        except BaseException:
            cur.connection.rollback()  # the saver's cursor commits when it closes
            raise


def _delete_postgres(
    saver: OneTransaction, thread_id: str, doomed: dict[str, set[str]], runs: list[str]
) -> None:
    with saver._cursor(pipeline=True) as cur:  # one transaction, the fencing check first
        if runs:
            cur.execute(
                "DELETE FROM checkpoint_writes w USING wargraph_run_writes r"
                " WHERE w.thread_id = %s AND r.thread_id = w.thread_id"
                " AND r.checkpoint_ns = w.checkpoint_ns AND r.checkpoint_id = w.checkpoint_id"
                " AND r.task_id = w.task_id AND r.idx = w.idx AND r.run_id = ANY(%s)",
                (thread_id, runs),
            )
            cur.execute(
                "DELETE FROM wargraph_run_writes WHERE thread_id = %s AND run_id = ANY(%s)",
                (thread_id, runs),
            )
        for ns, ids in doomed.items():
            where = (thread_id, ns, sorted(ids))
            for table in ("checkpoint_writes", "wargraph_run_writes"):
                cur.execute(
                    f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = %s"
                    " AND checkpoint_id = ANY(%s)",
                    where,
                )
            freed = cur.execute(
                "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND"
                " checkpoint_id = ANY(%s) RETURNING checkpoint -> 'channel_versions' AS v",
                where,
            ).fetchall()
            # a channel's value at a version is one blob, shared by the checkpoints at it
            used = cur.execute(
                "SELECT checkpoint -> 'channel_versions' AS v FROM checkpoints"
                " WHERE thread_id = %s AND checkpoint_ns = %s",
                (thread_id, ns),
            ).fetchall()
            garbage = _versions(freed) - _versions(used)
            by_channel: dict[str, list[str]] = {}
            for channel, version in sorted(garbage):
                by_channel.setdefault(channel, []).append(version)
            for channel, versions in by_channel.items():
                cur.execute(
                    "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s"
                    " AND channel = %s AND version = ANY(%s)",
                    (thread_id, ns, channel, versions),
                )


def _versions(rows: list[Any]) -> set[tuple[str, str]]:
    return {(str(k), str(v)) for r in rows for k, v in (r["v"] or {}).items()}


# --- what the saver's methods do -------------------------------------------------------------


def _ids(what: str, values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise TypeError(f"{what} must be a sequence of ids, not a str")
    return [str(v) for v in values]


def delete_threads(saver: Saver, thread_ids: Sequence[str]) -> None:
    """Delete these games whole (checkpoints, writes, blobs), each under its lease."""
    each_held(saver, _ids("thread_ids", thread_ids), saver.delete_whole)


def _written_under(saver: Saver, thread_id: str, runs: list[str]) -> set[tuple[str, str]]:
    """The checkpoints (namespace, id) under which these runs stored writes."""
    marks = ", ".join("?" * len(runs))
    rows, _ = saver.wargraph.sql.run(
        "SELECT DISTINCT checkpoint_ns, checkpoint_id FROM wargraph_run_writes"
        f" WHERE thread_id = ? AND run_id IN ({marks})",
        (thread_id, *runs),
    )
    return {(str(ns), str(cid)) for ns, cid in rows}


def delete_for_runs(saver: Saver, run_ids: Sequence[str]) -> None:
    """Delete the checkpoints these runs wrote and every write they stored (also those under
    the checkpoint a run resumed from: a person's answer, the steps done before it was
    cancelled); refused for a game where a checkpoint that stays continues from what they
    wrote (HistoryInUse: nothing of the game deleted)."""
    runs = sorted(set(_ids("run_ids", run_ids)))
    if not runs:
        return

    def delete(thread: str) -> None:
        rows = rows_of(saver, thread)
        doomed = {(r.ns, r.id) for r in rows if str(r.metadata.get("run_id")) in runs}
        # what stays and continues from what goes: a checkpoint of theirs, or a checkpoint
        # under which they stored writes (its children are made of them)
        made_of = doomed | _written_under(saver, thread, runs)
        kept = [r for r in rows if (r.ns, r.id) not in doomed and (r.ns, r.parent) in made_of]
        if kept:
            later = sorted({str(r.metadata.get("run_id") or "a state edit") for r in kept})
            raise HistoryInUse(
                f"{describe(saver.wargraph.db)}: game {thread!r}: checkpoints of "
                f"{', '.join(later)} continue from what {', '.join(runs)} wrote; deleting it "
                "would cut the game's history and record, so nothing of the game was deleted. "
                "Delete the later runs first (latest first), or the whole thread"
            )
        by_ns: dict[str, set[str]] = {}
        for ns, cid in doomed:
            by_ns.setdefault(ns, set()).add(cid)
        delete_checkpoints(saver, thread, by_ns, runs)

    each_held(saver, threads_of_runs(saver, runs), delete)


def prune(saver: Saver, thread_ids: Sequence[str], strategy: str = KEEP_LATEST) -> None:
    """LangGraph's `prune`: `keep_latest` (a game's history; see the module) or `delete`."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown prune strategy {strategy!r}: expected one of {STRATEGIES}")
    threads = _ids("thread_ids", thread_ids)
    if strategy == DELETE:
        delete_threads(saver, threads)
        return
    each_held(saver, threads, lambda thread: _keep_latest(saver, thread))


def _keep_latest(saver: Saver, thread_id: str) -> None:
    game = _Game(saver, thread_id)
    delete_checkpoints(saver, thread_id, game.unkept())


class _Game:
    """One game's checkpoints, and which of them `keep_latest` keeps (see the module)."""

    def __init__(self, saver: Saver, thread_id: str) -> None:
        self.saver, self.thread_id = saver, thread_id
        self.by_ns: dict[str, dict[str, Row]] = {}
        for r in rows_of(saver, thread_id):
            self.by_ns.setdefault(r.ns, {})[r.id] = r
        self._whole: dict[tuple[str, str], bool] = {}

    def unkept(self) -> dict[str, set[str]]:
        if "" not in self.by_ns:
            return {}
        roots = self.by_ns[""]
        kept_roots = self.kept_path("", max(roots))
        # the game's scenario and settings (and its trace's path): with its first checkpoint
        kept_roots |= {i for i, r in roots.items() if r.metadata.get("wargraph") == RUN_MARK}
        memories = {ns for ns in self.by_ns if ns and ":" not in ns}
        kept_roots, chosen = self._with_memories(kept_roots, memories)
        unkept: dict[str, set[str]] = {"": set(roots) - kept_roots}
        for ns, rows in self.by_ns.items():
            if not ns:
                continue
            head = max(rows)
            root = _root_of(rows[head])
            if ns not in memories and root in roots and root not in kept_roots:
                unkept[ns] = set(rows)  # a finished call of a subgraph: gone with its root
                continue
            kept = self.kept_path(ns, head)
            for cid in chosen.get(ns, ()):
                kept |= self.kept_path(ns, cid)
            unkept[ns] = set(rows) - kept
        return unkept

    def _with_memories(
        self, kept_roots: set[str], memories: set[str]
    ) -> tuple[set[str], dict[str, set[str]]]:
        """A seat's memory lives in a namespace of its own (`agent_<role>`): `wargraph replay`
        forking at a root checkpoint copies the latest memory that ran under an earlier root
        checkpoint (`metadata.parents[""]`). Keep that memory for every kept root checkpoint,
        and the root checkpoint it ran under (with what that one is read from), until nothing
        more is needed."""
        roots = self.by_ns[""]
        step = {i: _step(r) for i, r in roots.items()}
        while True:
            chosen: dict[str, set[str]] = {}
            more: set[str] = set()
            for ns in memories:
                # (root step, own step, id, root) of each memory checkpoint, by root step; and the
                # latest memory (by its own step) among the first i of them
                ran = sorted(
                    (step[p], _step(r), r.id, p)
                    for r in self.by_ns[ns].values()
                    if (p := _root_of(r)) is not None and p in step
                )
                latest: list[tuple[int, str, str]] = []
                for _, own, cid, parent in ran:
                    best = (own, cid, parent)
                    latest.append(max(latest[-1], best) if latest else best)
                for root in kept_roots:
                    i = bisect.bisect_left(ran, (step[root],))
                    if i:  # some memory ran under an earlier root checkpoint
                        _, cid, parent = latest[i - 1]
                        chosen.setdefault(ns, set()).add(cid)
                        if parent not in kept_roots:
                            more |= self.kept_path("", parent)
            if not more - kept_roots:
                return kept_roots, chosen
            kept_roots |= more

    def kept_path(self, ns: str, checkpoint_id: str) -> set[str]:
        """A checkpoint and its ancestors back to the nearest one that stores whole every
        DeltaChannel it has (all of them, at once): each checkpoint kept then reads its state as
        it did (the upstream rule; its metadata's `counters_since_delta_snapshot` names the
        channels not stored whole). The whole path when there is no such checkpoint."""
        rows = self.by_ns[ns]
        kept: set[str] = set()
        cid: str | None = checkpoint_id
        while cid is not None and cid in rows and cid not in kept:
            kept.add(cid)
            whole, v = self._is_whole(ns, cid)
            parent = rows[cid].parent
            if whole:
                if v < SUPERSEDED_SENDS and parent in rows:
                    kept.add(parent)  # pending sends of older checkpoints: in their parent
                break
            cid = parent
        return kept

    def _is_whole(self, ns: str, checkpoint_id: str) -> tuple[bool, int]:
        conf = {"thread_id": self.thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
        tup = self.saver.get_tuple({"configurable": conf})  # checked against its seal
        if tup is None:
            return False, 0
        values = tup.checkpoint.get("channel_values") or {}
        versions = tup.checkpoint.get("channel_versions") or {}
        counters = (tup.metadata or {}).get("counters_since_delta_snapshot") or {}
        whole = not ({c for c in counters if c in versions} - set(values))
        return whole, int(tup.checkpoint.get("v") or 0)


def _root_of(row: Row) -> str | None:
    parents = row.metadata.get("parents")
    root = parents.get("") if isinstance(parents, dict) else None
    return str(root) if root else None


def _step(row: Row) -> int:
    try:
        return int(row.metadata.get("step", -1))
    except (TypeError, ValueError):
        return -1


__all__ = ["DELETE", "KEEP_LATEST", "STRATEGIES", "delete_for_runs", "delete_threads", "prune"]
