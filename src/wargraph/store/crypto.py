"""What is written into a store, and how it is proven unchanged: blobs compressed, encrypted with
AES-GCM bound to what they belong to (stores of earlier versions: EAX or unbound blobs), the
store's key and its check value, and the HMAC over a game's run metadata."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import json
import os
import secrets
import zlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

# The stored form of a DeltaChannel's whole value (what the savers themselves test for); the
# channel is beta, so its absence is a clear failure at import, not a silent wrong seal.
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from wargraph.store.errors import KEY_ENV, DamagedCheckpoint, Db, StoreError, describe
from wargraph.store.sql import Sql, reason_of

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


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
RUN_WRITES: contextvars.ContextVar[RunWrites] = contextvars.ContextVar(
    "wargraph_run_writes", default=((), False)
)

LEGACY, STRICT, BOUND = 0, 1, 2  # a store's guard: what every blob must carry to load


@contextlib.contextmanager
def bound_to(*what: str) -> Iterator[None]:
    token = _BIND.set(tuple(what))
    try:
        yield
    finally:
        _BIND.reset(token)


@contextlib.contextmanager
def seeing_bindings(seen: Bindings) -> Iterator[Bindings]:
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
        self._eax: CipherProtocol | None = None

    @property
    def eax(self) -> CipherProtocol:
        """AES-EAX for blobs of stores from before AES-GCM, made when one is read: importing
        pycryptodome cost every command that opens a store ~0.1 s of CPU."""
        if self._eax is None:
            self._eax = EncryptedSerializer.from_pycryptodome_aes(key=self.key).cipher
        return self._eax

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


class AuthenticatedSerde(EncryptedSerializer):
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
            raise DamagedCheckpoint(self._damaged(reason_of(exc))) from None

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
                with seeing_bindings([]) as seen:
                    plain = self.cipher.decrypt(ciphername, bytes(body))
            except Exception as exc:  # MAC check failed, unknown cipher ...
                raise DamagedCheckpoint(self._damaged(reason_of(exc))) from None
            if any(tuple(b) != tuple(was) for b in seen):
                raise DamagedCheckpoint(self._damaged("a blob of another checkpoint or game"))
        with bound_to(*now):
            name, ciphertext = self.cipher.encrypt(plain)
        return f"{inner}+{name}", ciphertext

    def _damaged(self, why: str) -> str:
        return (
            f"{self.where}: a checkpoint is damaged ({why}); it was not loaded. Restore the store "
            "from a backup, or fork the game from an earlier checkpoint with `wargraph replay`"
        )


def store_key(sql: Sql, fresh: bool) -> tuple[bytes, int]:
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


def run_mac(key: bytes, thread_id: str, text: str) -> str:
    return hmac.new(key, f"{thread_id}\n{text}".encode(), hashlib.sha256).hexdigest()


SEAL2 = "v2:"  # seals that also cover the thread, namespace and parent link


def seal_run(
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


def checkpoint_at(config: RunnableConfig | None) -> tuple[str, str, str]:
    """(thread id, namespace, checkpoint id) of a config (at `put`, the id is the parent's)."""
    conf = (config or {}).get("configurable", {})
    return (
        str(conf.get("thread_id") or ""),
        str(conf.get("checkpoint_ns") or ""),
        str(conf.get("checkpoint_id") or ""),
    )
