"""An opt-in cache of model answers, so a study run again makes no model call it has paid for.

A model call's answer is kept under a key made of everything that decides it: the model
reference (with its server), the messages sent, and the call's settings (the answer's schema,
sampling, length cap, seed: LangChain's own description of the model and call, `_get_llm_string`,
plus wargraph's model reference). Two calls that differ in any of these never share an answer,
so a cache never crosses models or settings.

The cache is LangChain's interface (`langchain_core.caches.BaseCache`: lookup, update, clear),
kept in a table of a store: by default the games' own store (its SQLite file, or its PostgreSQL
database), or any SQLite file or `postgresql://` URL. wargraph's seats look answers up
themselves (`wargraph.seats.deciders.LLMDecider`) rather than through a chat model's `cache=`,
so that the trace can say which answers came from the cache and cost figures never count one as
a fresh call; the same object also works as any LangChain chat model's `cache=`.

Answers are stored as plain JSON (text, token use, finish reason), never as serialized objects:
a shared database's rows are data, not code to load."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, Generation

from wargraph.store.errors import StoreError, is_url

TABLE = (
    "CREATE TABLE IF NOT EXISTS wargraph_model_cache (key TEXT PRIMARY KEY,"
    " model TEXT NOT NULL, answer TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)"
)
IN_STORE = "store"
"""`cache: store` (or `true`, or `--cache`): the answers are kept in the games' own store."""


class ModelCache(BaseCache):
    """Model answers in one store's table `wargraph_model_cache` (SQLite file or PostgreSQL)."""

    def __init__(self, where: str | Path) -> None:
        from wargraph.store.sql import Sql

        self.where = str(where)
        try:
            if is_url(self.where):
                from wargraph.store.connect import pool_for

                self._sql = Sql(self.where, pool_for(self.where))
            else:
                from wargraph.store.connect import connect_sqlite

                if Path(self.where).is_dir():
                    raise StoreError(f"{self.where}: is a folder, not a SQLite file")
                self._sql = Sql(self.where, connect_sqlite(self.where))
            self._sql.create(TABLE)
        except StoreError as exc:
            raise StoreError(f"model cache: {exc}") from None

    # -- LangChain's interface ------------------------------------------------------------------

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        rows, _ = self._sql.run(
            "SELECT answer FROM wargraph_model_cache WHERE key = ?", (_key(prompt, llm_string),)
        )
        if not rows:
            return None
        try:
            kept = json.loads(rows[0][0])
            return [_generation(item) for item in kept]
        except (ValueError, TypeError, KeyError, AttributeError):
            return None  # a row that is not an answer of ours: asked afresh

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        answer = json.dumps([_plain(g) for g in return_val], ensure_ascii=False)
        model = _model_of(llm_string)
        self._sql.run(
            "INSERT INTO wargraph_model_cache (key, model, answer, created) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (key) DO NOTHING",
            (_key(prompt, llm_string), model, answer, time.time()),
        )

    def clear(self, **kwargs: Any) -> None:
        """Forget every answer (`model=REF`: only that model's)."""
        if kwargs.get("model"):
            self._sql.run("DELETE FROM wargraph_model_cache WHERE model = ?", (kwargs["model"],))
        else:
            self._sql.run("DELETE FROM wargraph_model_cache")

    def count(self) -> int:
        rows, _ = self._sql.run("SELECT count(*) FROM wargraph_model_cache")
        return int(rows[0][0])


def call_keys(
    ref: Any, model: Any, messages: list[BaseMessage], bind: dict[str, Any]
) -> tuple[str, str]:
    """(prompt, llm_string) of one call, as LangChain's own cache would key it (the messages
    serialized by `langchain_core.load.dumps`, the model and call settings by the model's
    `_get_llm_string`), the settings prefixed with wargraph's model reference: LangChain's
    description of an OpenAI-compatible model may leave its server out."""
    from langchain_core.load import dumps

    prompt = dumps([m.model_copy(update={"id": None}) for m in messages])
    settings = model._get_llm_string(**bind)
    return prompt, json.dumps({"model": str(ref), "call": settings}, sort_keys=True)


def _key(prompt: str, llm_string: str) -> str:
    return hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()


def _model_of(llm_string: str) -> str:
    try:
        return str(json.loads(llm_string).get("model", ""))
    except (ValueError, AttributeError):
        return ""


def _plain(g: Generation) -> dict[str, Any]:
    message = getattr(g, "message", None)
    if not isinstance(message, AIMessage):
        return {"text": g.text}
    return {
        "text": str(message.content),
        "usage": dict(message.usage_metadata or {}),
        "finish_reason": (message.response_metadata or {}).get("finish_reason"),
    }


def _generation(item: dict[str, Any]) -> ChatGeneration:
    usage = item.get("usage") or None
    return ChatGeneration(
        message=AIMessage(
            content=str(item["text"]),
            usage_metadata=usage,
            response_metadata={"finish_reason": item.get("finish_reason")},
        )
    )


# --- which cache a call uses ----------------------------------------------------------------

_open: dict[tuple[int, str], ModelCache] = {}
_open_lock = threading.Lock()
_active: contextvars.ContextVar[str | None] = contextvars.ContextVar("model_cache", default=None)


def location(setting: Any, db: str | Path | None) -> str | None:
    """Where a `cache:` setting keeps answers: None (no cache) for None/false/""; the games'
    store `db` for true or "store"; else the SQLite file or PostgreSQL URL it names. A SQLite
    path is made absolute (games in other processes find the same file)."""
    if setting is None or setting is False or setting == "":
        return None
    if setting is True or setting == IN_STORE:
        if db is None:
            raise StoreError("cache: the games' store is not known here; name a file or URL")
        setting = db
    if not isinstance(setting, str | Path):
        raise StoreError(
            f"cache: {setting!r}: expected true, {IN_STORE!r}, a SQLite file or a postgresql:// URL"
        )
    text = str(setting).strip()
    if not text:
        return None
    return text if is_url(text) else str(Path(text).expanduser().resolve())


def cache_at(where: str) -> ModelCache:
    """This process's cache at `where` (opened once; a forked process opens its own)."""
    key = (os.getpid(), where)
    with _open_lock:
        found = _open.get(key)
        if found is None:
            found = _open[key] = ModelCache(where)
        return found


def check(where: str | None) -> None:
    """Open the cache before any game, so a bad location fails once, in one line."""
    if where:
        cache_at(where)


@contextlib.contextmanager
def using(where: str | None) -> Iterator[None]:
    """Calls made inside use the cache at `where` unless their seat names one (post-hoc calls:
    an experiment's judge)."""
    token = _active.set(where)
    try:
        yield
    finally:
        _active.reset(token)


def cache_for(seat: Mapping[str, Any]) -> ModelCache | None:
    """The cache a seat's calls use: its `model_cache`, else the one `using` set, else none."""
    where = seat.get("model_cache") or _active.get()
    return cache_at(str(where)) if where else None


def generations(reply: BaseMessage) -> Sequence[Generation]:
    return [ChatGeneration(message=reply)]
