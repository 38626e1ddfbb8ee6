"""The checkpoint store a `--db` value names: a SQLite file, or a PostgreSQL URL
(`postgresql://user@host:port/db`). One place opens it, for the CLI, the runner, replays,
experiments and the server, sync or async.

What every store gives, on both backends:
- LangGraph's own saver (`SqliteSaver` / `PostgresSaver`), its tables set up on first use;
  PostgreSQL through a connection pool per URL and process.
- Compressed checkpoints: a blob of some size is zlib-compressed before it is encrypted (game
  records and prompts are text, about 3-8x smaller); blobs from before load as they are.
- Authenticated checkpoints: blobs are written with AES-GCM (`EncryptedSerializer`), each with
  what it belongs to as associated data (thread, namespace, and checkpoint, write, or channel
  and version); each checkpoint carries a seal (HMAC) over its thread, namespace, id, parent,
  channels and inline values. A damaged byte, a moved row, a re-pointed parent or a swapped
  blob fails to load with `DamagedCheckpoint` instead of loading as another game. Stores of
  earlier versions keep loading what they hold (EAX or unbound blobs, v1 seals). The key
  lives in the store (`wargraph_meta`) so every process that reaches the store can read it; it
  detects damage, not a reader of the store (set WARGRAPH_STORE_KEY to keep it elsewhere). A
  check value of the key is kept too: a wrong key is refused before anything is written.
- Writes of a game whose lease this process holds are fenced (`wargraph.store.fence`), and a write
  from a host whose clock is behind the game's last checkpoint is refused.
- Sync and async: `aput`, `aget_tuple`, ... run `put`, `get_tuple`, ... in a worker thread, so
  `ainvoke` (the server) gets the same seals, bindings, transactions and fencing as `invoke`.
- A game's run metadata (scenario and settings) inside its first checkpoint's metadata, so the
  two are written by one statement and cannot be apart; it carries its own HMAC. A game a
  client of the server starts gets it with its first step instead (`_served_run`).
- `lease(db, thread)`: one writer per game (see `wargraph.store.lease`).
- Deleting (`delete_thread`, `delete_for_runs`, `prune`, and their async forms langgraph-api
  calls): under each game's lease, never cutting a game's history (`wargraph.store.pruning`). The
  writes of a run that names itself (langgraph-api's) are noted with their run id.
- Copying (`copy_thread`, `acopy_thread`: langgraph-api's POST /threads/<id>/copy): a game of
  its own in the new thread, under both games' leases (`wargraph.store.copying`).
- `Saver` is the type of what `open_saver` / `open_async_saver` give.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import hmac
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload

# The stored form of a DeltaChannel's whole value (what the savers themselves test for); the
# channel is beta, so its absence is a clear failure at import, not a silent wrong seal.
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from wargraph.store.backends import (
    FencedSqlite,
    OneTransaction,
    StoreInfo,
    fenced_writes,
    run_writes_of,
)
from wargraph.store.connect import connect_sqlite, pool_for
from wargraph.store.crypto import (
    BOUND,
    RUN_WRITES,
    SEAL2,
    AuthenticatedSerde,
    Bindings,
    bound_to,
    checkpoint_at,
    run_mac,
    seal_run,
    seeing_bindings,
)
from wargraph.store.errors import (
    RUN_MARK,
    SERVED,
    DamagedCheckpoint,
    Db,
    StoreError,
    describe,
    is_url,
)
from wargraph.store.setup import prepare_postgres, prepare_sqlite
from wargraph.store.sql import Sql, pg_error, reason_of

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        DeltaChannelHistory,
    )
    from langgraph.checkpoint.postgres import PostgresSaver as _PostgresBase
    from langgraph.checkpoint.sqlite import SqliteSaver as _SqliteBase

    _SaverBase = BaseCheckpointSaver[str]
else:
    # The mixins below are checked against the LangGraph savers `_saver_class` puts them
    # before; at run time they are plain classes (those savers are imported on first use).
    _SaverBase = _SqliteBase = _PostgresBase = object


class Saver(_SaverBase):
    """What wargraph adds to LangGraph's saver classes (mixed in before them): the type of the
    saver `open_saver` and `open_async_saver` give (a `WargraphSqliteSaver` or a
    `WargraphPostgresSaver`, both LangGraph checkpointers)."""

    wargraph: StoreInfo
    serde: AuthenticatedSerde  # what `open_saver` gives every saver

    def register_run(self, thread_id: str, run: dict[str, Any]) -> None:
        """Write `run` with the thread's next root checkpoint (its first, for a new game)."""
        with self.wargraph.lock:
            self.wargraph.pending[thread_id] = run

    def _with_run(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> Mapping[str, Any]:
        conf = config.get("configurable", {})
        if conf.get("checkpoint_ns", ""):
            return metadata
        with self.wargraph.lock:
            run = self.wargraph.pending.pop(str(conf.get("thread_id")), None)
        if run is None and self.wargraph.served is not None:
            run = self._served_run(config, checkpoint)
        if run is None:
            return metadata
        text = json.dumps(run, sort_keys=True, default=str)
        mac = run_mac(self.wargraph.key, str(conf.get("thread_id")), text)
        return {**metadata, "wargraph": RUN_MARK, "wargraph_run": text, "wargraph_mac": mac}

    def _served_run(self, config: RunnableConfig, checkpoint: Checkpoint) -> dict[str, Any] | None:
        """A game a client of the server started (not a wargraph command): nobody registers its
        run, and its scenario is known once `setup` has loaded it. Its run is written with the
        first root checkpoint holding the scenario `setup` stored, with the settings the
        server noted for the thread's run (`StoreInfo.served`): once per game, never over a run
        already stored (a game the CLI started and the server continues keeps its own)."""
        spec = (checkpoint.get("channel_values") or {}).get("spec")
        if isinstance(spec, _DeltaSnapshot):  # how a DeltaChannel hands its whole value
            spec = spec.value
        thread = str(config.get("configurable", {}).get("thread_id"))
        if not isinstance(spec, dict) or thread in self.wargraph.marked:
            return None
        root: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        stored = next(iter(self.list(root, filter={"wargraph": RUN_MARK}, limit=1)), None)
        self.wargraph.marked.add(thread)
        if stored is not None or self.wargraph.served is None:
            return None
        from wargraph.kernel.context import GameContext

        settings = self.wargraph.served(thread) or {}
        known = {k: v for k, v in settings.items() if k in GameContext.__dataclass_fields__}
        context = dataclasses.asdict(GameContext(**known))
        return {"scenario": spec, "context": context, "origin": SERVED}

    def _in_time(self, config: RunnableConfig, new_id: str | None = None) -> None:
        """LangGraph makes checkpoint ids from the clock (monotonic within a process) and reads
        a thread's latest by id: a host whose clock is behind the game's last checkpoint would
        write checkpoints that hide under it (answers vanish). Refuse before any write."""
        thread, _, current = checkpoint_at(config)
        if not current:
            return
        from langgraph.checkpoint.base.id import uuid6

        if str(new_id or uuid6(clock_seq=0)) <= current:
            raise StoreError(
                f"{describe(self.wargraph.db)}: thread {thread!r}: this host's clock is behind "
                f"the game's last checkpoint (written by another process or host); checkpoints "
                "are ordered by time, so nothing was written. Set the clock right and resume"
            )

    def _sealed(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> CheckpointMetadata:
        self._in_time(config, str(checkpoint["id"]))
        meta = self._with_run(config, checkpoint, metadata)
        seal = seal_run(self.wargraph.key, checkpoint, where=checkpoint_at(config))
        # metadata keys beyond LangGraph's own are stored as they are (its TypedDict lists its own)
        return cast("CheckpointMetadata", {**meta, "wargraph_seal": seal})

    # -- writing: sealed, bound, fenced -------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        meta = self._sealed(config, checkpoint, metadata)
        thread, ns, _ = checkpoint_at(config)
        try:
            with fenced_writes(config), bound_to("checkpoint", thread, ns, str(checkpoint["id"])):
                return super().put(config, checkpoint, meta, new_versions)
        except BaseException:
            if "wargraph_run" in meta:  # not written: the game's next checkpoint carries it
                self.wargraph.marked.discard(thread)
            raise

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._in_time(config)
        token = RUN_WRITES.set(run_writes_of(config, writes, task_id))
        try:
            with fenced_writes(config), bound_to("write", *checkpoint_at(config), str(task_id)):
                return super().put_writes(config, writes, task_id, task_path)
        finally:
            RUN_WRITES.reset(token)

    # -- async: the same methods in a worker thread -------------------------------------------
    # One implementation of what a write and a read check (seal, bindings, one transaction,
    # fence), for `invoke` and `ainvoke` alike: LangGraph's async savers would be a second one
    # to keep in step. The database calls release the GIL in the thread, and a saver serializes
    # its calls behind one lock either way (LangGraph's async savers too).

    async def _off_loop(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.to_thread(self.wargraph.in_thread, fn)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._off_loop(lambda: self.put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._off_loop(lambda: self.put_writes(config, writes, task_id, task_path))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._off_loop(lambda: self.get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def read() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for tup in await self._off_loop(read):
            yield tup

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self._off_loop(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        await self._off_loop(lambda: self.delete_thread(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._off_loop(lambda: self.delete_for_runs(run_ids))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._off_loop(lambda: self.prune(thread_ids, strategy=strategy))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._off_loop(lambda: self.copy_thread(source_thread_id, target_thread_id))

    # -- copying: a game of its own, under both games' leases (`wargraph.store.copying`) -----------

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a game to a new thread, a game of its own (sealed, bound and with its run for
        the new thread), under the leases of both; the source is only read."""
        import wargraph.store.copying as copying

        copying.copy_thread(self, source_thread_id, target_thread_id)

    # -- deleting: under each game's lease, never cutting a game's history (`wargraph.store.pruning`)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a game whole (its checkpoints, writes and blobs), under its lease."""
        import wargraph.store.pruning as pruning

        pruning.delete_threads(self, [thread_id])

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints these runs wrote, and their writes, under each game's lease;
        refused (HistoryInUse) for a game that continued from them."""
        import wargraph.store.pruning as pruning

        pruning.delete_for_runs(self, run_ids)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: each game's history, keeping its latest state whole, its scenario and
        settings; `delete`: the games. Under each game's lease."""
        import wargraph.store.pruning as pruning

        pruning.prune(self, thread_ids, strategy)

    def delete_whole(self, thread_id: str) -> None:
        """LangGraph's own `delete_thread`, fenced by the lease this process holds on it."""
        with fenced_writes({"configurable": {"thread_id": thread_id}}):
            super().delete_thread(thread_id)
        self.wargraph.sql.run("DELETE FROM wargraph_run_writes WHERE thread_id = ?", (thread_id,))
        if self.wargraph._has_legacy():  # a store from before run metadata was in checkpoints
            self.wargraph.sql.run("DELETE FROM wargraph_runs WHERE thread_id = ?", (thread_id,))

    # -- reading: every checkpoint against its seal, every blob against its binding -----------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with seeing_bindings([]) as seen:
            tup = super().get_tuple(config)
        return None if tup is None else self._checked(tup, seen)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        rows = super().list(config, filter=filter, before=before, limit=limit)
        try:
            while True:
                with seeing_bindings([]) as seen:  # each row's blobs are opened as it is produced
                    tup = next(rows, None)
                if tup is None:
                    return
                yield self._checked(tup, seen)
        finally:
            if isinstance(rows, Generator):  # the savers' are: closed now, while the store is
                rows.close()  # open (a caller may stop early)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        with seeing_bindings([]) as seen:
            found = super().get_delta_channel_history(config=config, channels=channels)
        self._of_thread(config, seen)
        return found

    def _of_thread(self, config: RunnableConfig, seen: Bindings) -> None:
        """The writes and snapshots a DeltaChannel is rebuilt from are all of this thread."""
        thread, ns, _ = checkpoint_at(config)
        for bound in seen:
            if tuple(bound[1:3]) != (thread, ns):
                self._refuse(config, "a blob of another game or namespace")

    def _refuse(self, config: RunnableConfig, why: str) -> None:
        conf = config["configurable"]
        raise DamagedCheckpoint(
            f"{describe(self.wargraph.db)}: thread {conf.get('thread_id')!r}: checkpoint "
            f"{conf.get('checkpoint_id')} is damaged ({why}); it was not loaded. Restore the "
            "store from a backup, or fork the game from an earlier checkpoint with "
            "`wargraph replay`"
        )

    def _checked(self, tup: CheckpointTuple, seen: Bindings | None = None) -> CheckpointTuple:
        """A checkpoint is loaded only as it was written: its thread, namespace, id and parent,
        which channels hold values and the values stored outside the authenticated blobs
        (PostgreSQL keeps numbers and strings inline) must match the seal written with it, and
        each blob opened for it must be bound to it (its channel at its version, its writes)."""
        conf = tup.config["configurable"]
        seal = tup.metadata.get("wargraph_seal") if isinstance(tup.metadata, dict) else None
        guard = self.serde.strict
        if seal is None and not guard:
            return tup  # written before seals, in a store from before them
        parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        if str(seal or "").startswith(SEAL2):
            where = (conf.get("thread_id"), conf.get("checkpoint_ns"), parent)
            expected = seal_run(self.wargraph.key, tup.checkpoint, conf.get("checkpoint_id"), where)
        elif guard >= BOUND:  # a store that seals parents never holds a v1 seal
            expected = None
        else:
            expected = seal_run(self.wargraph.key, tup.checkpoint, conf.get("checkpoint_id"))
        if seal is None or expected is None or not hmac.compare_digest(str(seal), expected):
            self._refuse(tup.config, "it does not match its seal")
        for bound in seen or ():
            if not _belongs(bound, tup):
                self._refuse(tup.config, "a blob of another checkpoint or game")
        return tup

    def verify_thread(self, thread_id: str) -> int:
        """Read every root checkpoint of a thread against its seal (before a resume: a damaged
        id could otherwise hide the latest checkpoint behind an earlier, intact one)."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        return sum(1 for _ in self.list(config))

    # -- reading run metadata ---------------------------------------------------------------

    def run_of(self, thread_id: str) -> dict[str, Any] | None:
        """The run metadata a game was started with, or None (no first checkpoint)."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for tup in self.list(config, filter={"wargraph": RUN_MARK}, limit=1):
            return self.run_from(thread_id, tup.metadata)
        return self.wargraph.legacy_run(thread_id)

    def run_from(self, thread_id: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
        text = str(metadata.get("wargraph_run", ""))
        mac = run_mac(self.wargraph.key, thread_id, text)
        if not hmac.compare_digest(mac, str(metadata.get("wargraph_mac", ""))):
            raise DamagedCheckpoint(
                f"{describe(self.wargraph.db)}: thread {thread_id!r}: the game's stored scenario "
                "and settings are damaged; they were not loaded"
            )
        return json.loads(text)

    def thread_ids(self) -> builtins.list[str]:  # (`list` here is the method above)
        """Every thread that holds a game (started with its run metadata), oldest first. Read
        from the rows' plain metadata without loading any checkpoint, so one damaged game
        does not hide the others (each is checked when it is read)."""
        if self.wargraph.sql.postgres:
            query = (
                "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = ''"
                " AND metadata ->> 'wargraph' = ? GROUP BY thread_id ORDER BY min(checkpoint_id)"
            )
        else:
            query = (
                "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' AND CASE WHEN"
                " json_valid(CAST(metadata AS TEXT)) THEN json_extract(CAST(metadata AS TEXT),"
                " '$.wargraph') END = ? GROUP BY thread_id ORDER BY min(checkpoint_id)"
            )
        rows, _ = self.wargraph.sql.run(query, (RUN_MARK,))
        found = dict.fromkeys(str(r[0]) for r in rows)
        for tid in self.wargraph.legacy_threads():
            found.setdefault(tid)
        return list(found)


def _belongs(bound: tuple[Any, ...], tup: CheckpointTuple) -> bool:
    """Whether a blob's binding (its associated data) is that of the checkpoint `tup`."""
    thread, ns, cid = checkpoint_at(tup.config)
    kind, *rest = tuple(bound) or ("",)
    if kind == "checkpoint":  # SQLite: the checkpoint's own blob
        return tuple(rest) == (thread, ns, cid)
    if kind == "write":  # its pending writes
        return tuple(rest[:3]) == (thread, ns, cid)
    if kind == "blob" and len(rest) == 4:  # PostgreSQL: a channel's value at a version
        versions = tup.checkpoint.get("channel_versions") or {}
        return tuple(rest[:2]) == (thread, ns) and str(versions.get(rest[2])) == rest[3]
    return False


class _BoundBlobs(_PostgresBase):
    """PostgreSQL keeps each channel's value in its own blob, shared by the checkpoints at that
    version: each is bound to its thread, namespace, channel and version."""

    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        out: list[tuple[str, str, str, str, str, bytes | None]] = []
        for channel, version in versions.items():
            with bound_to("blob", str(thread_id), str(checkpoint_ns), channel, str(version)):
                one = {channel: values[channel]} if channel in values else {}
                out += super()._dump_blobs(thread_id, checkpoint_ns, one, {channel: version})
        return out


if TYPE_CHECKING:
    # The two classes `_saver_class` makes at run time (LangGraph's savers are imported on
    # first use), as mypy sees them.
    class WargraphSqliteSaver(Saver, FencedSqlite):
        pass

    class WargraphPostgresSaver(Saver, _BoundBlobs, OneTransaction):
        pass


def _saver_class(kind: str) -> type[Saver]:
    """One backend's class: a SQLite store never imports the PostgreSQL saver (psycopg and its
    pool are a good share of a command's start-up)."""
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        return type("WargraphSqliteSaver", (Saver, FencedSqlite, SqliteSaver), {})
    if kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        return type(
            "WargraphPostgresSaver", (Saver, _BoundBlobs, OneTransaction, PostgresSaver), {}
        )
    raise KeyError(kind)


_CLASSES: dict[str, type[Saver]] = {}
_classes_guard = threading.Lock()  # one class per backend, whichever thread asks first


@overload
def saver_class(kind: Literal["sqlite"]) -> type[WargraphSqliteSaver]: ...
@overload
def saver_class(kind: Literal["postgres"]) -> type[WargraphPostgresSaver]: ...
@overload
def saver_class(kind: str) -> type[Saver]: ...
def saver_class(kind: str) -> type[Saver]:
    """The store's saver class for a backend ("sqlite" or "postgres"), made on first use."""
    with _classes_guard:
        if kind not in _CLASSES:
            _CLASSES[kind] = _saver_class(kind)
        return _CLASSES[kind]


# --- setting a store up ----------------------------------------------------------------------


# --- opening a saver -------------------------------------------------------------------------


def _info(db: Db, sql: Sql, key: bytes) -> StoreInfo:
    return StoreInfo(db=db, sql=sql, key=key, lock=threading.Lock(), pending={})


@contextlib.contextmanager
def open_saver(db: Db, *, create: bool = True) -> Iterator[Saver]:
    """The checkpointer `db` names (a SQLite path or a PostgreSQL URL), set up and ready.

    `create=False` refuses a SQLite file that does not exist yet (resume, replay, listing)."""
    if is_url(db):
        pool = pool_for(str(db))
        sql, key, strict = prepare_postgres(str(db), pool)
        on_server = saver_class("postgres")(
            pool, serde=AuthenticatedSerde(key, strict=strict, where=describe(db))
        )
        on_server.wargraph = _info(db, sql, key)
        try:
            yield on_server
        except pg_error() as exc:
            raise StoreError(f"{describe(db)}: {reason_of(exc)}") from None
        return
    conn = connect_sqlite(db, create=create)
    info = None
    try:
        sql, key, strict = prepare_sqlite(db, conn)
        in_file = saver_class("sqlite")(
            conn, serde=AuthenticatedSerde(key, strict=strict, where=str(db))
        )
        in_file.setup()
        in_file.wargraph = info = _info(db, sql, key)
        try:
            yield in_file
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db}: {reason_of(exc)}") from None
    finally:
        # an async call cancelled by the game's end may still run in its thread: closing the
        # connection under it would crash the process, so wait, or else leave it open
        if info is None or info.drained():
            conn.close()


@contextlib.asynccontextmanager
async def in_thread(manager: contextlib.AbstractContextManager[Any]) -> AsyncIterator[Any]:
    """A sync context manager (a saver, a lease) entered and left in a worker thread, for async
    code: opening and closing touch the disk or the network, which an event loop must not."""
    entering = asyncio.ensure_future(asyncio.to_thread(manager.__enter__))
    try:
        value = await asyncio.shield(entering)
    except asyncio.CancelledError:
        # the thread goes on entering (a lease taken, a store opened): leave once it has
        entering.add_done_callback(_leave_once_entered(manager))
        raise
    try:
        yield value
    except BaseException as exc:
        if not await asyncio.to_thread(manager.__exit__, type(exc), exc, exc.__traceback__):
            raise
    else:
        await asyncio.to_thread(manager.__exit__, None, None, None)


def _leave_once_entered(manager: contextlib.AbstractContextManager[Any]) -> Callable[[Any], None]:
    def leave(entered: asyncio.Future) -> None:
        if not entered.cancelled() and entered.exception() is None:
            # left in the background: nothing waits for it (its caller was cancelled)
            _ = asyncio.get_running_loop().run_in_executor(None, manager.__exit__, None, None, None)

    return leave


@contextlib.asynccontextmanager
async def open_async_saver(
    db: Db,
    *,
    create: bool = True,
    served: Callable[[str], dict[str, Any] | None] | None = None,
) -> AsyncIterator[Saver]:
    """The same store for async code (`ainvoke`, the server): the saver `open_saver` gives,
    whose async methods run its sync ones in a worker thread. `served` (the server's): a
    thread's run settings; a game started through this saver without a registered run gets
    its run with its first step, with these settings (`Saver._served_run`)."""
    async with in_thread(open_saver(db, create=create)) as saver:
        saver.wargraph.served = served
        yield saver


def lease(db: Db, key: str, **kw: Any) -> contextlib.AbstractContextManager[Any]:
    """One writer per game (`with lease(db, thread_id): ...`); see `wargraph.store.lease`."""
    from wargraph.store.lease import lease as hold

    return hold(db, key, **kw)
