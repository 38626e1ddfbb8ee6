"""The checkpoint store a `--db` value names: a SQLite file, or a PostgreSQL URL
(`postgresql://user@host:port/db`). One place opens it, for the CLI, the runner, replays,
experiments and the server, sync or async.

What every store gives, on both backends:
- LangGraph's own saver (`SqliteSaver` / `PostgresSaver`), its tables set up on first use;
  PostgreSQL through a connection pool per URL and process.
- Compressed checkpoints: a blob of some size is zlib-compressed before it is encrypted (game
  records and prompts are text, about 3-8x smaller); blobs from before load as they are.
- Authenticated checkpoints: blobs are written with AES-GCM (`EncryptedSerializer`; EAX blobs
  of older stores still load), so a
  damaged byte fails to load with `DamagedCheckpoint` instead of loading as another game. The
  key lives in the store (`wargraph_meta`) so every process that reaches the store can read it;
  it detects damage, not a reader of the store (set WARGRAPH_STORE_KEY to keep it elsewhere).
- A game's run metadata (scenario and settings) inside its first checkpoint's metadata, so the
  two are written by one statement and cannot be apart; it carries its own HMAC.
- `lease(db, thread)`: one writer per game (see `wargraph.lease`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# The stored form of a DeltaChannel's whole value (what the savers themselves test for); the
# channel is beta, so its absence is a clear failure at import, not a silent wrong seal.
from langgraph.checkpoint.serde.types import _DeltaSnapshot

RUN_MARK = "run-v1"  # metadata key "wargraph" of a game's first checkpoint
KEY_ENV = "WARGRAPH_STORE_KEY"
Db = str | Path


class StoreError(RuntimeError):
    """A store that cannot be opened or used: one clear line for the user."""


class DamagedCheckpoint(StoreError):
    pass


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
    "CREATE TABLE IF NOT EXISTS wargraph_leases (thread_id TEXT PRIMARY KEY, holder TEXT NOT NULL,"
    " host TEXT NOT NULL, pid INTEGER NOT NULL, command TEXT NOT NULL,"
    " acquired DOUBLE PRECISION NOT NULL, heartbeat DOUBLE PRECISION NOT NULL)",
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


class _AesCipher(CipherProtocol):
    """AES-GCM (the `cryptography` package, ~1 us a blob) for new blobs; AES-EAX blobs of
    earlier stores (pycryptodome, ~0.5 ms a blob: most of a game's checkpoint CPU) still load."""

    NAME = "aesgcm"

    def __init__(self, key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self.key = key
        self.gcm = AESGCM(key)
        self.eax = EncryptedSerializer.from_pycryptodome_aes(key=key).cipher

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(12)  # random 96-bit nonces: safe far beyond a store's blob count
        return self.NAME, nonce + self.gcm.encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == self.NAME:
            return self.gcm.decrypt(ciphertext[:12], ciphertext[12:], None)
        if ciphername == "aes":
            return self.eax.decrypt(ciphername, ciphertext)
        raise ValueError(f"unknown cipher {ciphername!r}")


class _AuthenticatedSerde(EncryptedSerializer):
    """Authenticated blobs (AES-GCM; AES-EAX in older stores); a blob that fails its tag (or, in
    a store created authenticated, a blob with no tag at all) is a DamagedCheckpoint, never
    data."""

    def __init__(self, key: bytes, *, strict: bool, where: str) -> None:
        super().__init__(_AesCipher(key), _Compressed(JsonPlusSerializer()))
        self.strict, self.where = strict, where

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

    def _damaged(self, why: str) -> str:
        return (
            f"{self.where}: a checkpoint is damaged ({why}); it was not loaded. Restore the store "
            "from a backup, or fork the game from an earlier checkpoint with `wargraph replay`"
        )


def _store_key(sql: Sql, fresh: bool) -> tuple[bytes, bool]:
    """The store's key (created with the store) and whether every blob must carry a tag
    (stores created before authentication keep loading their old, untagged checkpoints)."""
    env = os.environ.get(KEY_ENV)
    sql.run(
        "INSERT INTO wargraph_meta (name, value) VALUES ('strict', ?) ON CONFLICT (name) DO NOTHING",
        ("1" if fresh else "0",),
    )
    if env:
        key = hashlib.sha256(env.encode()).digest()
    else:
        sql.run(
            "INSERT INTO wargraph_meta (name, value) VALUES ('key', ?) ON CONFLICT (name) DO NOTHING",
            (secrets.token_hex(32),),
        )
        rows, _ = sql.run("SELECT value FROM wargraph_meta WHERE name = 'key'")
        try:
            key = bytes.fromhex(rows[0][0])
            if len(key) != 32:
                raise ValueError
        except (ValueError, IndexError, TypeError):
            raise StoreError(
                f"{describe(sql.db)}: the store's checkpoint key (table wargraph_meta) is damaged"
            ) from None
    rows, _ = sql.run("SELECT value FROM wargraph_meta WHERE name = 'strict'")
    return key, bool(rows) and rows[0][0] == "1"


# --- run metadata in the first checkpoint ----------------------------------------------------


def _run_mac(key: bytes, thread_id: str, text: str) -> str:
    return hmac.new(key, f"{thread_id}\n{text}".encode(), hashlib.sha256).hexdigest()


def _seal(key: bytes, checkpoint: dict, checkpoint_id: str | None = None) -> str:
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
    text = json.dumps(body, sort_keys=True, default=str)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:32]


class _Wargraph:
    """What wargraph adds to LangGraph's saver classes (mixed in before them)."""

    wargraph: StoreInfo

    def register_run(self, thread_id: str, run: dict[str, Any]) -> None:
        """Write `run` with the thread's next root checkpoint (its first, for a new game)."""
        with self.wargraph.lock:
            self.wargraph.pending[thread_id] = run

    def _with_run(self, config: dict, metadata: dict) -> dict:
        conf = config.get("configurable", {})
        if conf.get("checkpoint_ns", ""):
            return metadata
        with self.wargraph.lock:
            run = self.wargraph.pending.pop(conf.get("thread_id"), None)
        if run is None:
            return metadata
        text = json.dumps(run, sort_keys=True, default=str)
        mac = _run_mac(self.wargraph.key, str(conf.get("thread_id")), text)
        return {**metadata, "wargraph": RUN_MARK, "wargraph_run": text, "wargraph_mac": mac}

    def _sealed(self, config: dict, checkpoint: dict, metadata: dict) -> dict:
        meta = self._with_run(config, metadata)
        return {**meta, "wargraph_seal": _seal(self.wargraph.key, checkpoint)}

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        meta = self._sealed(config, checkpoint, metadata)
        return super().put(config, checkpoint, meta, new_versions)  # type: ignore[misc]

    async def aput(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        meta = self._sealed(config, checkpoint, metadata)
        return await super().aput(config, checkpoint, meta, new_versions)  # type: ignore[misc]

    def get_tuple(self, config):  # type: ignore[no-untyped-def]
        return self._checked(super().get_tuple(config))  # type: ignore[misc]

    async def aget_tuple(self, config):  # type: ignore[no-untyped-def]
        return self._checked(await super().aget_tuple(config))  # type: ignore[misc]

    def list(self, config, **kw):  # type: ignore[no-untyped-def]
        for tup in super().list(config, **kw):  # type: ignore[misc]
            yield self._checked(tup)

    async def alist(self, config, **kw):  # type: ignore[no-untyped-def]
        async for tup in super().alist(config, **kw):  # type: ignore[misc]
            yield self._checked(tup)

    def _checked(self, tup: Any) -> Any:
        """A checkpoint is loaded only as it was written: its id, which channels hold values
        and the values stored outside the authenticated blobs (PostgreSQL keeps numbers and
        strings inline) must match the seal written with it."""
        if tup is None:
            return None
        conf = tup.config["configurable"]
        seal = tup.metadata.get("wargraph_seal") if isinstance(tup.metadata, dict) else None
        if seal is None and not self.serde.strict:  # type: ignore[attr-defined]
            return tup  # written before seals, in a store from before them
        if seal is None or not hmac.compare_digest(
            str(seal), _seal(self.wargraph.key, tup.checkpoint, conf.get("checkpoint_id"))
        ):
            raise DamagedCheckpoint(
                f"{describe(self.wargraph.db)}: thread {conf.get('thread_id')!r}: checkpoint "
                f"{conf.get('checkpoint_id')} is damaged (it does not match its seal); it was "
                "not loaded. Restore the store from a backup, or fork the game from an earlier "
                "checkpoint with `wargraph replay`"
            )
        return tup

    def verify_thread(self, thread_id: str) -> int:
        """Read every root checkpoint of a thread against its seal (before a resume: a damaged
        id could otherwise hide the latest checkpoint behind an earlier, intact one)."""
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        return sum(1 for _ in self.list(config))  # type: ignore[attr-defined]

    # -- reading run metadata ---------------------------------------------------------------

    def run_of(self, thread_id: str) -> dict[str, Any] | None:
        """The run metadata a game was started with, or None (no first checkpoint)."""
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for tup in self.list(config, filter={"wargraph": RUN_MARK}, limit=1):  # type: ignore[attr-defined]
            return self._run_from(thread_id, tup.metadata)
        return self.wargraph.legacy_run(thread_id)

    def _run_from(self, thread_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        text = str(metadata.get("wargraph_run", ""))
        mac = _run_mac(self.wargraph.key, thread_id, text)
        if not hmac.compare_digest(mac, str(metadata.get("wargraph_mac", ""))):
            raise DamagedCheckpoint(
                f"{describe(self.wargraph.db)}: thread {thread_id!r}: the game's stored scenario "
                "and settings are damaged; they were not loaded"
            )
        return json.loads(text)

    def thread_ids(self) -> list[str]:
        """Every thread that holds a game (started with its run metadata), oldest first."""
        found: dict[str, float] = {}
        for tup in self.list(None, filter={"wargraph": RUN_MARK}):  # type: ignore[attr-defined]
            found[tup.config["configurable"]["thread_id"]] = 0
        for tid in self.wargraph.legacy_threads():
            found.setdefault(tid, 0)
        return list(found)


@dataclass
class StoreInfo:
    db: Db
    sql: Sql
    key: bytes
    lock: threading.Lock
    pending: dict[str, dict[str, Any]]

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


class _OneTransaction:
    """PostgresSaver sends a write's statements (blobs, then the checkpoint) in an autocommit
    pipeline; here they run in one transaction, so a writer killed half-way leaves all or
    nothing, as on SQLite."""

    @contextlib.contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        if not pipeline:
            with super()._cursor() as cur:  # type: ignore[misc]
                yield cur
            return
        from psycopg.rows import dict_row

        with (
            self.lock,  # type: ignore[attr-defined]
            self.conn.connection() as conn,  # type: ignore[attr-defined]
            conn.transaction(),
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            yield cur


def _saver_classes() -> dict[str, type]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    classes: dict[str, type] = {"sqlite": type("WargraphSqliteSaver", (_Wargraph, SqliteSaver), {})}
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    classes["postgres"] = type(
        "WargraphPostgresSaver", (_Wargraph, _OneTransaction, PostgresSaver), {}
    )
    classes["async-postgres"] = type(
        "WargraphAsyncPostgresSaver", (_Wargraph, AsyncPostgresSaver), {}
    )
    classes["async-sqlite"] = type("WargraphAsyncSqliteSaver", (_Wargraph, AsyncSqliteSaver), {})
    return classes


_CLASSES: dict[str, type] = {}


def saver_class(kind: str) -> type:
    if not _CLASSES:
        _CLASSES.update(_saver_classes())
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


def _prepare_sqlite(db: Db, conn: sqlite3.Connection) -> tuple[Sql, bytes, bool]:
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


def _prepare_postgres(url: str, pool: Any) -> tuple[Sql, bytes, bool]:
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
def open_saver(db: Db, *, create: bool = True) -> Iterator[Any]:
    """The checkpointer `db` names (a SQLite path or a PostgreSQL URL), set up and ready.

    `create=False` refuses a SQLite file that does not exist yet (resume, replay, listing)."""
    if is_url(db):
        pool = _pool(str(db))
        sql, key, strict = _prepare_postgres(str(db), pool)
        saver = saver_class("postgres")(
            pool, serde=_AuthenticatedSerde(key, strict=strict, where=describe(db))
        )
        saver.wargraph = _info(db, sql, key)
        try:
            yield saver
        except _pg_error() as exc:
            raise StoreError(f"{describe(db)}: {_reason(exc)}") from None
        return
    conn = connect_sqlite(db, create=create)
    try:
        sql, key, strict = _prepare_sqlite(db, conn)
        saver = saver_class("sqlite")(
            conn, serde=_AuthenticatedSerde(key, strict=strict, where=str(db))
        )
        saver.setup()
        saver.wargraph = _info(db, sql, key)
        try:
            yield saver
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db}: {_reason(exc)}") from None
    finally:
        conn.close()


@contextlib.asynccontextmanager
async def open_async_saver(db: Db) -> AsyncIterator[Any]:
    """The same store for async code (the server): AsyncPostgresSaver or AsyncSqliteSaver."""
    import asyncio

    if is_url(db):
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        # tables, key and reachability checked by the sync path once, in a thread
        sql, key, strict = await asyncio.to_thread(
            lambda: _prepare_postgres(str(db), _pool(str(db)))
        )
        async with AsyncConnectionPool(
            str(db),
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        ) as pool:
            serde = _AuthenticatedSerde(key, strict=strict, where=describe(db))
            saver = saver_class("async-postgres")(pool, serde=serde)
            saver.wargraph = _info(db, sql, key)
            yield saver
        return
    import aiosqlite

    conn = await asyncio.to_thread(connect_sqlite, db)
    try:
        sql, key, strict = await asyncio.to_thread(_prepare_sqlite, db, conn)
    finally:
        conn.close()
    async with aiosqlite.connect(str(db), timeout=60) as aconn:
        serde = _AuthenticatedSerde(key, strict=strict, where=str(db))
        saver = saver_class("async-sqlite")(aconn, serde=serde)
        await saver.setup()
        saver.wargraph = _info(db, Sql(db, await asyncio.to_thread(connect_sqlite, db)), key)
        try:
            yield saver
        finally:
            saver.wargraph.sql.conn.close()


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
        sql = Sql(db, conn)
        for ddl in OWN_TABLES:
            sql.run(ddl)
        yield sql
    finally:
        conn.close()


def lease(db: Db, key: str, **kw: Any) -> contextlib.AbstractContextManager[Any]:
    """One writer per game (`with lease(db, thread_id): ...`); see `wargraph.lease`."""
    from wargraph.lease import lease as hold

    return hold(db, key, **kw)
