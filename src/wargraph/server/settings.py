"""A served game's settings belong to the game, not to each run.

A run of the LangGraph API carries its settings (`context`: the models, seed, human seats) and
a run sent without them used to play on the defaults: a person's answer resumed through the SDK
without `context` played the rest of a scripted game on the embedded model (171 s instead of
1 s), and with a key configured it would have spent money silently. So the server keeps each
game's settings with its thread (metadata `wargraph_settings`; before that, what the facilitator
started it with, else its first run's) and, where a run is created on a game's thread:

- a run without `context` plays with the game's settings;
- a run with other settings plays with them (the caller chose so) and the change is recorded in
  `wargraph_settings.changes` (when, from, to): they are the game's settings from then on.

Settings sent the older way (`config.configurable`) are left as they are.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from wargraph.kernel.context import CONTEXT_FIELDS
from wargraph.server.client import client
from wargraph.server.games import wargraph_meta

RUN_PATH = re.compile(r"^/threads/([0-9A-Za-z-]{1,64})/runs(?:/stream|/wait)?/?$")
META = "wargraph_settings"
MAX_CHANGES = 50  # the latest changes kept with a game


def _plain(context: Any) -> dict[str, Any] | None:
    if not isinstance(context, dict):
        return None
    return {k: v for k, v in context.items() if k in CONTEXT_FIELDS}


async def game_settings(thread_id: str, thread: Mapping[str, Any]) -> dict[str, Any] | None:
    """The settings a game plays with: the ones kept with it, else what the facilitator started
    it with, else its first run's (None: it has none yet)."""
    kept = (thread.get("metadata") or {}).get(META)
    if isinstance(kept, dict) and isinstance(kept.get("context"), dict):
        return _plain(kept["context"])
    started = _plain(wargraph_meta(thread).get("context"))
    if started is not None:
        return started
    runs = await client().runs.list(thread_id, limit=20)
    runs.sort(key=lambda r: str(r.get("created_at")))
    first = ((runs[0].get("kwargs") or {}) if runs else {}).get("context")  # type: ignore[attr-defined]
    return _plain(first) if first else None


async def settle(thread_id: str, payload: Any) -> tuple[dict[str, Any] | None, Any]:
    """The run request as it is to be played (None: as it was sent), and what to record once the
    server has taken the run (an awaitable, or None): a run it refuses changes nothing."""
    if not isinstance(payload, dict):
        return None, None
    config = payload.get("config")
    if isinstance(config, dict) and config.get("configurable"):
        return None, None  # settings (or a scenario) the older way: the API takes them as sent
    try:
        thread = await client().threads.get(thread_id)
        stored = await game_settings(thread_id, thread)
    except Exception:  # noqa: BLE001 (no such thread: the API itself answers the request)
        return None, None
    sent = _plain(payload.get("context"))
    if not sent:
        return (None if stored is None else {**payload, "context": stored}), None
    if sent == stored:
        return None, None
    kept = (thread.get("metadata") or {}).get(META)
    changes = list(kept.get("changes") or []) if isinstance(kept, dict) else []
    if stored is not None:
        changes.append({"at": time.time(), "from": stored, "to": sent})
    record = {META: {"context": sent, "changes": changes[-MAX_CHANGES:]}}
    return None, lambda: client().threads.update(thread_id, metadata=record)


STATE_PATH = re.compile(r"^/threads/([0-9A-Za-z-]{1,64})/state/?$")


async def missing_checkpoint(thread_id: str, payload: Any) -> str | None:
    """Why a state edit names a checkpoint the game never had (None: it names none, or one it
    has). LangGraph wrote such an edit as a new state from nothing, replacing the game's."""
    if not isinstance(payload, dict):
        return None
    given = payload.get("checkpoint")
    cid = payload.get("checkpoint_id") or (
        given.get("checkpoint_id") if isinstance(given, dict) else None
    )
    if cid is None:
        return None
    if not isinstance(cid, str) or len(cid) > 100:
        return "checkpoint_id: the id of one of this game's checkpoints (text)"
    try:
        state = await client().threads.get_state(thread_id, checkpoint_id=cid)
    except Exception:  # noqa: BLE001 (no such thread: the API itself answers the request)
        return None
    # the API echoes any id it is asked for: a checkpoint it has was created at some time
    found = ((state or {}).get("checkpoint") or {}).get("checkpoint_id")
    if found != cid or not (state or {}).get("created_at"):
        return (
            f"checkpoint_id {cid!r}: this game has no such checkpoint; "
            f"GET /threads/{thread_id}/history lists its checkpoints"
        )
    return None
