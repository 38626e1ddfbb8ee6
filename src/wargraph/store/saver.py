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
import contextvars
import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from langgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# The stored form of a DeltaChannel's whole value (what the savers themselves test for); the
# channel is beta, so its absence is a clear failure at import, not a silent wrong seal.
from langgraph.checkpoint.serde.types import _DeltaSnapshot

import wargraph.store.fence as fence

if TYPE_CHECKING:
    import psycopg
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
    from psycopg.rows import DictRow

    _SaverBase = BaseCheckpointSaver[str]
else:
    # The mixins below are checked against the LangGraph savers `_saver_class` puts them
    # before; at run time they are plain classes (those savers are imported on first use).
    _SaverBase = _SqliteBase = _PostgresBase = object

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


# --- SQL for wargraph's own tables (both backends) -----------------------------------------


class Sql:
    """Our own small tables, in the same database as the checkpoints. Statements are written
    with `?` placeholders and run on either backend; each call is its own transaction."""

    def __init__(self, db: Db, conn: Any) -> None:
        self.db, self.conn = db, conn
        self.postgres = is_url(db)
        self.lock = threading.Lock()

    def run(self, sql: str, params: tuple = ()) -> tuple[list[tuple], int]:
        """Rows and rowcount; a backend failure becomes a StoreError naming the store."""
        try:
            if self.postgres:
                with self.conn.connection() as c, c.transaction():
                    cur = c.execute(sql.replace("?", "%s"), params)
                    rows = [tuple(r.values()) for r in cur.fetchall()] if cur.description else []
                    return rows, cur.rowcount
            with self.lock, self.conn:  # commits, or rolls back on an error
                cur = self.conn.execute(sql, params)
                return cur.fetchall(), cur.rowcount
        except (sqlite3.Error, _pg_error()) as exc:
            raise StoreError(f"{describe(self.db)}: {_reason(exc)}") from None


def _pg_error() -> type[Exception]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency
        return sqlite3.Error
    return psycopg.Error


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


OWN_TABLES = (
    "CREATE TABLE IF NOT EXISTS wargraph_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    fence.TABLE,  # (stores of earlier versions also keep an unused table wargraph_leases)
    # Which run stored each write of a run that names itself (langgraph-api's runs do, in their
    # metadata), noted in the write's own transaction: a run resumed from a checkpoint stores
    # its first writes under that checkpoint, which `delete_for_runs` keeps.
    "CREATE TABLE IF NOT EXISTS wargraph_run_writes (thread_id TEXT NOT NULL,"
    " checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL,"
    " idx BIGINT NOT NULL, run_id TEXT NOT NULL,"
    " PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))",
    "CREATE INDEX IF NOT EXISTS wargraph_run_writes_run ON wargraph_run_writes (run_id)",
)


# --- the serializer: compressed, authenticated, with a clear error ----------------------------

ZIPPED = ".z"  # suffix of a compressed blob's type ("msgpack.z"; a "+" would end the type)
ZIP_FROM = 256  # bytes: smaller blobs are stored as they are
ZIP_LEVEL = 6


class _Compressed(SerializerProtocol):
    """zlib around another serializer. Compression happens before encryption (ciphertext does
    not compress), so the authentication tag covers the compressed bytes."""

    def __init__(self, serde: SerializerProtocol) -> None:
        self.serde = serde

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        typ, data = self.serde.dumps_typed(obj)
        if len(data) >= ZIP_FROM:
            packed = zlib.compress(data, ZIP_LEVEL)
            if len(packed) < len(data):
                return typ + ZIPPED, packed
        return typ, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        typ, body = data
        if typ.endswith(ZIPPED):
            return self.serde.loads_typed((typ[: -len(ZIPPED)], zlib.decompress(body)))
        return self.serde.loads_typed(data)


Bindings = list[tuple[Any, ...]]  # of the blobs opened while a checkpoint is read

# What a blob being written belongs to (its AEAD associated data), and the bindings of the
# blobs opened while one checkpoint is read (checked against that checkpoint by `_checked`).
_BIND: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("wargraph_bind", default=())
_SEEN: contextvars.ContextVar[Bindings | None] = contextvars.ContextVar(
    "wargraph_seen", default=None
)

# The writes `put_writes` is storing for a run, as rows of wargraph_run_writes, and whether they
# replace earlier ones (special channels do, as in the savers): noted by the write's transaction.
RunWrites = tuple[tuple[tuple[str, str, str, str, int, str], ...], bool]
_RUN_WRITES: contextvars.ContextVar[RunWrites] = contextvars.ContextVar(
    "wargraph_run_writes", default=((), False)
)

LEGACY, STRICT, BOUND = 0, 1, 2  # a store's guard: what every blob must carry to load


@contextlib.contextmanager
def _binding(*what: str) -> Iterator[None]:
    token = _BIND.set(tuple(what))
    try:
        yield
    finally:
        _BIND.reset(token)


@contextlib.contextmanager
def _seeing(seen: Bindings) -> Iterator[Bindings]:
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


class _AesCipher(CipherProtocol):
    """AES-GCM (the `cryptography` package, ~1 us a blob) with the blob's binding (thread,
    namespace, channel and version, or checkpoint, or write) as associated data, stored in clear
    before the ciphertext and covered by its tag. Blobs of earlier versions still load: AES-GCM
    without associated data, and AES-EAX (pycryptodome, ~0.5 ms a blob), unless the store
    `guard` is BOUND (created since blobs are bound: an unbound blob there is a swapped one)."""

    NAME = "aesgcm2"

    def __init__(self, key: bytes, guard: int = STRICT) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self.key, self.guard = key, guard
        self.gcm = AESGCM(key)
        self.eax = EncryptedSerializer.from_pycryptodome_aes(key=key).cipher

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(12)  # random 96-bit nonces: safe far beyond a store's blob count
        bound = json.dumps(list(_BIND.get())).encode()
        head = nonce + len(bound).to_bytes(2, "big") + bound
        return self.NAME, head + self.gcm.encrypt(nonce, plaintext, bound)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == self.NAME:
            size = int.from_bytes(ciphertext[12:14], "big")
            bound = ciphertext[14 : 14 + size]
            plain = self.gcm.decrypt(ciphertext[:12], ciphertext[14 + size :], bound)
            seen = _SEEN.get()
            if seen is not None:
                seen.append(tuple(json.loads(bound)))
            return plain
        if self.guard >= BOUND:
            raise ValueError("a blob not bound to its checkpoint, in a store that binds them")
        if ciphername == "aesgcm":
            return self.gcm.decrypt(ciphertext[:12], ciphertext[12:], None)
        if ciphername == "aes":
            return self.eax.decrypt(ciphername, ciphertext)
        raise ValueError(f"unknown cipher {ciphername!r}")


class _AuthenticatedSerde(EncryptedSerializer):
    """Authenticated blobs (AES-GCM; AES-EAX in older stores); a blob that fails its tag (or, in
    a store created authenticated, a blob with no tag at all) is a DamagedCheckpoint, never
    data. `strict` is the store's guard (LEGACY, STRICT or BOUND)."""

    def __init__(self, key: bytes, *, strict: int, where: str) -> None:
        super().__init__(_AesCipher(key, int(strict)), _Compressed(JsonPlusSerializer()))
        self.strict, self.where = int(strict), where

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        typ = data[0]
        if "+" not in typ and (self.strict or typ.endswith(ZIPPED)):
            # compressed blobs are only ever written encrypted: never inflate unchecked bytes
            raise DamagedCheckpoint(self._damaged("a blob without its authentication tag"))
        try:
            return super().loads_typed(data)
        except DamagedCheckpoint:
            raise
        except Exception as exc:  # MAC check failed, bad padding, unknown type ...
            raise DamagedCheckpoint(self._damaged(_reason(exc))) from None

    def rebound(
        self, data: tuple[str | None, bytes | None], was: tuple[str, ...], now: tuple[str, ...]
    ) -> tuple[str | None, bytes | None]:
        """A stored blob bound to `now` instead of `was` (a game copied to another thread): its
        tag checked and its plaintext encrypted again under the new binding, its bytes (and
        compression) unchanged. A blob that fails its tag, or is bound to something other than
        `was`, is a DamagedCheckpoint; an untagged blob of a store from before tags gets one.
        A row with no blob (PostgreSQL's "empty" channel) stays as it is."""
        typ, body = data
        if typ is None or body is None or typ == "empty":
            return typ, body
        if "+" not in typ:
            if self.strict or typ.endswith(ZIPPED):
                raise DamagedCheckpoint(self._damaged("a blob without its authentication tag"))
            inner, plain = typ, bytes(body)
        else:
            inner, ciphername = typ.split("+", 1)
            try:
                with _seeing([]) as seen:
                    plain = self.cipher.decrypt(ciphername, bytes(body))
            except Exception as exc:  # MAC check failed, unknown cipher ...
                raise DamagedCheckpoint(self._damaged(_reason(exc))) from None
            if any(tuple(b) != tuple(was) for b in seen):
                raise DamagedCheckpoint(self._damaged("a blob of another checkpoint or game"))
        with _binding(*now):
            name, ciphertext = self.cipher.encrypt(plain)
        return f"{inner}+{name}", ciphertext

    def _damaged(self, why: str) -> str:
        return (
            f"{self.where}: a checkpoint is damaged ({why}); it was not loaded. Restore the store "
            "from a backup, or fork the game from an earlier checkpoint with `wargraph replay`"
        )


def _store_key(sql: Sql, fresh: bool) -> tuple[bytes, int]:
    """The store's key (created with the store, or WARGRAPH_STORE_KEY) and whether every blob
    must carry a tag (stores created before authentication keep loading their old, untagged
    checkpoints). A key that is not the store's is refused here, before anything is written."""
    env = os.environ.get(KEY_ENV)
    meta = dict(sql.run("SELECT name, value FROM wargraph_meta")[0])
    if env:
        key = hashlib.sha256(env.encode()).digest()
    elif "key" in meta:
        key = _stored_key(sql, meta["key"])
    elif "key_check" in meta:  # created with WARGRAPH_STORE_KEY: no key inside to fall back on
        raise StoreError(
            f"{describe(sql.db)}: this store's key is kept outside it; set {KEY_ENV} to the key "
            "it was created with"
        )
    else:
        sql.run(
            "INSERT INTO wargraph_meta (name, value) VALUES ('key', ?) ON CONFLICT (name) DO NOTHING",
            (secrets.token_hex(32),),
        )
        rows, _ = sql.run("SELECT value FROM wargraph_meta WHERE name = 'key'")
        key = _stored_key(sql, rows[0][0] if rows else "")
    check = _key_check(key)
    if "key_check" not in meta:
        if not fresh and not _key_opens_store(sql, key):
            raise StoreError(_wrong_key(sql.db))
        sql.run(
            "INSERT INTO wargraph_meta (name, value) VALUES ('key_check', ?)"
            " ON CONFLICT (name) DO NOTHING",
            (check,),
        )
        meta["key_check"] = sql.run("SELECT value FROM wargraph_meta WHERE name = 'key_check'")[0][
            0
        ][0]
    if not hmac.compare_digest(str(meta["key_check"]), check):
        raise StoreError(_wrong_key(sql.db))
    for name, value in (("strict", "1" if fresh else "0"), ("bound", "1" if fresh else "0")):
        if name not in meta:  # both fixed when the store is created
            sql.run(
                "INSERT INTO wargraph_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (name, value),
            )
    rows, _ = sql.run("SELECT name, value FROM wargraph_meta WHERE name IN ('strict', 'bound')")
    flags = {name for name, value in rows if value == "1"}
    return key, (BOUND if "bound" in flags else STRICT) if "strict" in flags else LEGACY


def _stored_key(sql: Sql, text: str) -> bytes:
    try:
        key = bytes.fromhex(text)
        if len(key) != 32:
            raise ValueError
    except (ValueError, TypeError):
        raise StoreError(
            f"{describe(sql.db)}: the store's checkpoint key (table wargraph_meta) is damaged"
        ) from None
    return key


def _key_check(key: bytes) -> str:
    """A value stored with the store that says whether a key is its key (not the key)."""
    return hmac.new(key, b"wargraph store key check v1", hashlib.sha256).hexdigest()


def _wrong_key(db: Db) -> str:
    return (
        f"{describe(db)}: the key does not match this store ({KEY_ENV} differs from the key it "
        "was created with); nothing was read or written. The store is intact: use its key"
    )


def _key_opens_store(sql: Sql, key: bytes) -> bool:
    """A store from before key checks: the key is its key if it opens a few of its blobs (or
    it has no encrypted blob yet)."""
    if sql.postgres:
        query = "SELECT type, blob FROM checkpoint_blobs WHERE type LIKE '%+%' LIMIT 5"
    else:
        query = "SELECT type, checkpoint FROM checkpoints WHERE type LIKE '%+%' LIMIT 5"
    try:
        rows, _ = sql.run(query)
    except StoreError:  # no checkpoint tables yet
        return True
    cipher = _AesCipher(key)
    for typ, blob in rows:
        with contextlib.suppress(Exception):
            cipher.decrypt(str(typ).split("+", 1)[1], bytes(blob))
            return True
    return not rows


# --- run metadata in the first checkpoint ----------------------------------------------------


def _run_mac(key: bytes, thread_id: str, text: str) -> str:
    return hmac.new(key, f"{thread_id}\n{text}".encode(), hashlib.sha256).hexdigest()


SEAL2 = "v2:"  # seals that also cover the thread, namespace and parent link


def _seal(
    key: bytes,
    checkpoint: Mapping[str, Any],
    checkpoint_id: str | None = None,
    where: tuple[object, object, object] | None = None,
) -> str:
    """The checkpoint's seal. `where` = (thread id, namespace, parent id) makes a v2 seal; a
    v1 seal (without them) is what earlier versions wrote, and loads only in their stores."""
    values = checkpoint.get("channel_values") or {}
    inline = {k: v for k, v in values.items() if v is None or isinstance(v, str | int | float)}
    # A DeltaChannel's whole-value snapshot is sealed with the checkpoint that wrote it (its
    # blob is authenticated); PostgreSQL also hands it to later checkpoints at the same channel
    # version, so which checkpoints show it is not part of the seal.
    held = [k for k, v in values.items() if not isinstance(v, _DeltaSnapshot)]
    body = {
        "id": checkpoint_id or checkpoint.get("id"),
        "own_id": checkpoint.get("id"),
        "channels": sorted(held),
        "inline": inline,
        "versions": checkpoint.get("channel_versions"),
    }
    if where is not None:
        body["thread"], body["ns"], body["parent"] = (str(w) if w else "" for w in where)
    text = json.dumps(body, sort_keys=True, default=str)
    mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:32]
    return mac if where is None else SEAL2 + mac


def _where(config: RunnableConfig | None) -> tuple[str, str, str]:
    """(thread id, namespace, checkpoint id) of a config (at `put`, the id is the parent's)."""
    conf = (config or {}).get("configurable", {})
    return (
        str(conf.get("thread_id") or ""),
        str(conf.get("checkpoint_ns") or ""),
        str(conf.get("checkpoint_id") or ""),
    )


class Saver(_SaverBase):
    """What wargraph adds to LangGraph's saver classes (mixed in before them): the type of the
    saver `open_saver` and `open_async_saver` give (a `WargraphSqliteSaver` or a
    `WargraphPostgresSaver`, both LangGraph checkpointers)."""

    wargraph: StoreInfo
    serde: _AuthenticatedSerde  # what `open_saver` gives every saver

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
        mac = _run_mac(self.wargraph.key, str(conf.get("thread_id")), text)
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
        thread, _, current = _where(config)
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
        seal = _seal(self.wargraph.key, checkpoint, where=_where(config))
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
        thread, ns, _ = _where(config)
        try:
            with _writing(config), _binding("checkpoint", thread, ns, str(checkpoint["id"])):
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
        token = _RUN_WRITES.set(_run_writes(config, writes, task_id))
        try:
            with _writing(config), _binding("write", *_where(config), str(task_id)):
                return super().put_writes(config, writes, task_id, task_path)
        finally:
            _RUN_WRITES.reset(token)

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
        with _writing({"configurable": {"thread_id": thread_id}}):
            super().delete_thread(thread_id)
        self.wargraph.sql.run("DELETE FROM wargraph_run_writes WHERE thread_id = ?", (thread_id,))
        if self.wargraph._has_legacy():  # a store from before run metadata was in checkpoints
            self.wargraph.sql.run("DELETE FROM wargraph_runs WHERE thread_id = ?", (thread_id,))

    # -- reading: every checkpoint against its seal, every blob against its binding -----------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with _seeing([]) as seen:
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
                with _seeing([]) as seen:  # each row's blobs are opened as it is produced
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
        with _seeing([]) as seen:
            found = super().get_delta_channel_history(config=config, channels=channels)
        self._of_thread(config, seen)
        return found

    def _of_thread(self, config: RunnableConfig, seen: Bindings) -> None:
        """The writes and snapshots a DeltaChannel is rebuilt from are all of this thread."""
        thread, ns, _ = _where(config)
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
            expected = _seal(self.wargraph.key, tup.checkpoint, conf.get("checkpoint_id"), where)
        elif guard >= BOUND:  # a store that seals parents never holds a v1 seal
            expected = None
        else:
            expected = _seal(self.wargraph.key, tup.checkpoint, conf.get("checkpoint_id"))
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
            return self._run_from(thread_id, tup.metadata)
        return self.wargraph.legacy_run(thread_id)

    def _run_from(self, thread_id: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
        text = str(metadata.get("wargraph_run", ""))
        mac = _run_mac(self.wargraph.key, thread_id, text)
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
    thread, ns, cid = _where(tup.config)
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
            with _binding("blob", str(thread_id), str(checkpoint_ns), channel, str(version)):
                one = {channel: values[channel]} if channel in values else {}
                out += super()._dump_blobs(thread_id, checkpoint_ns, one, {channel: version})
        return out


# How long closing a store waits for calls still running in worker threads (SQLite waits at most
# its busy timeout, 60 s, for a lock)
DRAIN_S = 90.0


@dataclass
class StoreInfo:
    db: Db
    sql: Sql
    key: bytes
    lock: threading.Lock
    pending: dict[str, dict[str, Any]]
    # the server's: a thread's run settings, for games its clients start (`_served_run`)
    served: Callable[[str], dict[str, Any] | None] | None = None
    marked: set[str] = field(default_factory=set)  # threads whose run is known to be stored
    # calls running in worker threads (async methods): the connection outlives the last one
    idle: threading.Condition = field(default_factory=threading.Condition)
    calls: int = 0

    def in_thread(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` counted as a call in progress until it returns, in its own thread: a task
        cancelled while awaiting it leaves the call running, and closing the connection under
        a running call crashes the process."""
        with self.idle:
            self.calls += 1
        try:
            return fn()
        finally:
            with self.idle:
                self.calls -= 1
                self.idle.notify_all()

    def drained(self, timeout: float = DRAIN_S) -> bool:
        """Wait until no call runs in a worker thread; False if one still runs after `timeout`."""
        with self.idle:
            return self.idle.wait_for(lambda: self.calls == 0, timeout)

    def legacy_run(self, thread_id: str) -> dict[str, Any] | None:
        """Stores written before run metadata moved into the first checkpoint."""
        if not self._has_legacy():
            return None
        rows, _ = self.sql.run(
            "SELECT scenario, context FROM wargraph_runs WHERE thread_id = ?", (thread_id,)
        )
        if not rows:
            return None
        return {"scenario": json.loads(rows[0][0]), "context": json.loads(rows[0][1])}

    def legacy_threads(self) -> list[str]:
        if not self._has_legacy():
            return []
        rows, _ = self.sql.run("SELECT thread_id FROM wargraph_runs")
        return [r[0] for r in rows]

    def _has_legacy(self) -> bool:
        if self.sql.postgres:
            return False  # PostgreSQL stores are new: never had the old table
        rows, _ = self.sql.run(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'wargraph_runs'"
        )
        return bool(rows)


def _run_writes(
    config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str
) -> RunWrites:
    """The rows wargraph_run_writes gets for these writes of a run (none outside a run)."""
    run = (config.get("metadata") or {}).get("run_id")
    if not run:
        return (), False
    from langgraph.checkpoint.base import WRITES_IDX_MAP

    thread, ns, checkpoint = _where(config)
    rows = tuple(
        (thread, ns, checkpoint, str(task_id), WRITES_IDX_MAP.get(channel, i), str(run))
        for i, (channel, _) in enumerate(writes)
    )
    return rows, all(channel in WRITES_IDX_MAP for channel, _ in writes)


def _note_run_writes(cur: Any, postgres: bool) -> None:
    """Inside `put_writes`'s transaction: which run stores these writes."""
    rows, replace = _RUN_WRITES.get()
    if not rows:
        return
    keys = "thread_id, checkpoint_ns, checkpoint_id, task_id, idx"
    if postgres:
        then = "UPDATE SET run_id = excluded.run_id" if replace else "NOTHING"
        cur.executemany(
            f"INSERT INTO wargraph_run_writes ({keys}, run_id) VALUES (%s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT ({keys}) DO {then}",
            rows,
        )
    else:
        verb = "REPLACE" if replace else "IGNORE"
        cur.executemany(
            f"INSERT OR {verb} INTO wargraph_run_writes ({keys}, run_id) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )


def _fence(
    db: Db,
    cur: sqlite3.Cursor | psycopg.Cursor[DictRow],
    sql: str,
    first: str,
    by_key: bool = False,
) -> None:
    """Inside a write's own transaction: refuse it if this process holds the thread's lease
    under a generation the store no longer has (`wargraph.store.fence`). `first` excludes a taking
    of the lease until the write commits (its parameter: the thread, or the fence key if
    `by_key`); `sql` then reads the stored generation."""
    thread = fence.WRITING.get()
    held = fence.held(db, thread)
    if thread is None or held is None:
        return
    mine, key = held
    cur.execute(first, (key if by_key else thread,))
    row = cur.execute(sql, (thread,)).fetchone()
    found = None if row is None else int(row["generation"] if isinstance(row, dict) else row[0])
    if found != mine:
        raise LeaseLost(fence.refuse(db, thread, mine, found))


@contextlib.contextmanager
def _writing(config: RunnableConfig) -> Iterator[None]:
    token = fence.WRITING.set(str(config.get("configurable", {}).get("thread_id")))
    try:
        yield
    finally:
        fence.WRITING.reset(token)


class _FencedSqlite(_SqliteBase):
    """SqliteSaver writes each checkpoint in one transaction of its `cursor()`: the fencing
    check opens it (an UPDATE takes SQLite's write lock at once), the write follows."""

    wargraph: StoreInfo

    @contextlib.contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with super().cursor(transaction) as cur:
            if transaction:
                _fence(
                    self.wargraph.db,
                    cur,
                    "SELECT generation FROM wargraph_lease WHERE thread_id = ?",
                    # an UPDATE opens the transaction with SQLite's write lock taken
                    "UPDATE wargraph_lease SET generation = generation WHERE thread_id = ?",
                )
                _note_run_writes(cur, postgres=False)
            yield cur


class _OneTransaction(_PostgresBase):
    """PostgresSaver sends a write's statements (blobs, then the checkpoint) in an autocommit
    pipeline; here they run in one transaction, so a writer killed half-way leaves all or
    nothing, as on SQLite. The transaction starts with the fencing check."""

    wargraph: StoreInfo

    @contextlib.contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[DictRow]]:
        if not pipeline:
            with super()._cursor() as cur:
                yield cur
            return
        from langgraph.checkpoint.postgres._internal import get_connection
        from psycopg.rows import dict_row

        with (
            self.lock,
            get_connection(self.conn) as conn,  # (a pool's connection, as the saver's own)
            conn.transaction(),
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            _fence(
                self.wargraph.db,
                cur,
                "SELECT generation FROM wargraph_lease WHERE thread_id = %s",
                # shared with other writes, exclusive for a taking; its own statement, so the
                # read after it sees a taking that committed while it waited
                "SELECT pg_advisory_xact_lock_shared(%s)",
                by_key=True,
            )
            _note_run_writes(cur, postgres=True)
            yield cur


if TYPE_CHECKING:
    # The two classes `_saver_class` makes at run time (LangGraph's savers are imported on
    # first use), as mypy sees them.
    class WargraphSqliteSaver(Saver, _FencedSqlite):
        pass

    class WargraphPostgresSaver(Saver, _BoundBlobs, _OneTransaction):
        pass


def _saver_class(kind: str) -> type[Saver]:
    """One backend's class: a SQLite store never imports the PostgreSQL saver (psycopg and its
    pool are a good share of a command's start-up)."""
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        return type("WargraphSqliteSaver", (Saver, _FencedSqlite, SqliteSaver), {})
    if kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        return type(
            "WargraphPostgresSaver", (Saver, _BoundBlobs, _OneTransaction, PostgresSaver), {}
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


# --- SQLite ----------------------------------------------------------------------------------


def connect_sqlite(db: Db, *, create: bool = True) -> sqlite3.Connection:
    """Open the SQLite file, or fail with a message that says which file and why."""
    path = Path(db)
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{db}: cannot create its folder ({exc.strerror})") from None
    elif not path.exists():
        raise StoreError(f"{db}: no such checkpoint database")
    if path.is_dir():
        raise StoreError(f"{db}: is a folder, not a checkpoint database")
    try:
        # Games in threads share one file (experiments, servers): WAL lets readers and one writer
        # work at once, and the busy timeout makes a writer wait its turn instead of failing
        # with "database is locked".
        conn = sqlite3.connect(str(db), check_same_thread=False, timeout=60)
        conn.execute("PRAGMA user_version")  # fails here, clearly, if it is not a database
        _use_wal(conn, timeout=60)
        # WAL + NORMAL survives a killed process (only a power cut may lose the last commit)
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot use the checkpoint database ({exc})") from None
    return conn


def _use_wal(conn: sqlite3.Connection, *, timeout: float) -> None:
    """Switch the file to WAL (it stays WAL once set). SQLite refuses the switch at once with
    "database is locked", skipping the busy timeout, while another connection holds a write
    lock, as when games starting together open a new file at the same moment: wait for the
    turn here as the busy timeout would."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _sqlite_fresh(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
    ).fetchone()
    return not row[0]


def _prepare_sqlite(db: Db, conn: sqlite3.Connection) -> tuple[Sql, bytes, int]:
    sql = Sql(db, conn)
    fresh = _sqlite_fresh(conn)
    for ddl in OWN_TABLES:
        sql.run(ddl)
    key, strict = _store_key(sql, fresh)
    return sql, key, strict


# --- PostgreSQL ------------------------------------------------------------------------------

_pools: dict[tuple[int, str], Any] = {}
_pools_lock = threading.Lock()
POOL_SIZE = int(os.environ.get("WARGRAPH_PG_POOL", "10"))


def _pool(url: str) -> Any:
    """One pool per URL and process (a forked child opens its own), set up on first use."""
    with _pools_lock:
        pool = _pools.get((os.getpid(), url))
        if pool is None:
            pool = _open_pool(url)
            _pools[(os.getpid(), url)] = pool
    return pool


def _open_pool(url: str) -> Any:
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - dependencies of wargraph
        raise StoreError(f"PostgreSQL support is not installed ({exc})") from None
    try:
        conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreError(f"--db: not a valid PostgreSQL URL ({_reason(exc)})") from None
    # one plain connection first: its error is the server's own words, and the pool does not
    # log a retry per failed attempt
    timeout = int(float(os.environ.get("WARGRAPH_PG_TIMEOUT", "5")))
    try:
        psycopg.connect(url, connect_timeout=timeout).close()
    except psycopg.Error as exc:
        raise StoreError(
            f"{describe(url)}: cannot reach the PostgreSQL server ({_reason(exc)})"
        ) from None
    return ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_SIZE,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )


def close(db: Db) -> None:
    """Close this process's pool for a PostgreSQL store (tests that drop a schema; pools
    otherwise live as long as the process)."""
    with _pools_lock:
        pool = _pools.pop((os.getpid(), str(db)), None)
        _ready.discard((os.getpid(), str(db)))
    if pool is not None:
        pool.close()


_ready: set[tuple[int, str]] = set()


_setup_lock = threading.Lock()
SETUP_LOCK = 7412839  # advisory lock id for wargraph's set-up of a PostgreSQL database


def _prepare_postgres(url: str, pool: Any) -> tuple[Sql, bytes, int]:
    """LangGraph's tables and ours, once per process. Processes starting together take turns
    through an advisory lock, polled rather than waited on: the migrations build indexes
    CONCURRENTLY, which would wait for a session blocked on the lock (a deadlock)."""
    sql = Sql(url, pool)
    key_of = (os.getpid(), url)
    with _setup_lock:
        if key_of in _ready:
            return (sql, *_store_key(sql, False))
        with pool.connection() as conn:
            while not conn.execute(
                "SELECT pg_try_advisory_lock(%s) AS ok", (SETUP_LOCK,)
            ).fetchone()["ok"]:
                time.sleep(0.05)
            try:
                fresh = conn.execute("SELECT to_regclass('checkpoints') IS NULL AS f").fetchone()[
                    "f"
                ]
                saver_class("postgres")(conn).setup()
                for ddl in OWN_TABLES:
                    conn.execute(ddl)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        key, strict = _store_key(sql, bool(fresh))
        _ready.add(key_of)
    return sql, key, strict


# --- opening a saver -------------------------------------------------------------------------


def _info(db: Db, sql: Sql, key: bytes) -> StoreInfo:
    return StoreInfo(db=db, sql=sql, key=key, lock=threading.Lock(), pending={})


@contextlib.contextmanager
def open_saver(db: Db, *, create: bool = True) -> Iterator[Saver]:
    """The checkpointer `db` names (a SQLite path or a PostgreSQL URL), set up and ready.

    `create=False` refuses a SQLite file that does not exist yet (resume, replay, listing)."""
    if is_url(db):
        pool = _pool(str(db))
        sql, key, strict = _prepare_postgres(str(db), pool)
        on_server = saver_class("postgres")(
            pool, serde=_AuthenticatedSerde(key, strict=strict, where=describe(db))
        )
        on_server.wargraph = _info(db, sql, key)
        try:
            yield on_server
        except _pg_error() as exc:
            raise StoreError(f"{describe(db)}: {_reason(exc)}") from None
        return
    conn = connect_sqlite(db, create=create)
    info = None
    try:
        sql, key, strict = _prepare_sqlite(db, conn)
        in_file = saver_class("sqlite")(
            conn, serde=_AuthenticatedSerde(key, strict=strict, where=str(db))
        )
        in_file.setup()
        in_file.wargraph = info = _info(db, sql, key)
        try:
            yield in_file
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db}: {_reason(exc)}") from None
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


def own_sql(db: Db, *, create: bool = True) -> contextlib.AbstractContextManager[Sql]:
    """wargraph's own tables of a store, without a saver (leases, listings)."""
    return _own_sql(db, create)


@contextlib.contextmanager
def _own_sql(db: Db, create: bool) -> Iterator[Sql]:
    if is_url(db):
        pool = _pool(str(db))
        sql, _, _ = _prepare_postgres(str(db), pool)
        yield sql
        return
    conn = connect_sqlite(db, create=create)
    try:
        sql, _, _ = _prepare_sqlite(db, conn)  # a wrong key is refused here, before any write
        yield sql
    finally:
        conn.close()


def lease(db: Db, key: str, **kw: Any) -> contextlib.AbstractContextManager[Any]:
    """One writer per game (`with lease(db, thread_id): ...`); see `wargraph.store.lease`."""
    from wargraph.store.lease import lease as hold

    return hold(db, key, **kw)
