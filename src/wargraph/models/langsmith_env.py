"""LangSmith tracing only with a key: without one, every run would try the network (about 13 s
here, offline) and print a warning per failed upload. Say once what is missing and go on."""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping

# the names langsmith reads (LANGSMITH_* first, the older LANGCHAIN_* as well)
TRACING_VARS = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)
KEY_VARS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
_ON = {"true", "1", "yes", "on"}


def offline_unless_keyed(
    env: MutableMapping[str, str] | None = None, say: Callable[[str], None] | None = None
) -> bool:
    """Turn LangSmith tracing off unless a key is set; returns True when it stays on. When the
    user asked for tracing without a key, `say` is called once with what is missing."""
    env = os.environ if env is None else env
    if any(env.get(k, "").strip() for k in KEY_VARS):
        return any(env.get(k, "").strip().lower() in _ON for k in TRACING_VARS)
    asked = [k for k in TRACING_VARS if env.get(k, "").strip().lower() in _ON]
    for k in TRACING_VARS:
        env[k] = "false"
    if asked and say:
        say(
            f"{asked[0]} is on but LANGSMITH_API_KEY is not set: LangSmith tracing is off for "
            "this run (set the key to trace; the game's own trace.jsonl is kept either way)."
        )
    return False
