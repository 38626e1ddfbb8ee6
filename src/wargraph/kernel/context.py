"""Per-run settings (LangGraph `context_schema`): models per role, seed, human seats, outputs."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import ConfigDict

from wargraph.models.faults import DEFAULT_MAX_FAULTS


@dataclass
class GameContext:
    """Shown by LangGraph Studio as a form; the CLI fills it from its flags."""

    # The docstring under each field is its description in Studio's form.
    __pydantic_config__ = ConfigDict(use_attribute_docstrings=True)

    model: str = "embedded"
    """Default model for every AI seat: embedded, scripted, gguf:PATH or openai:MODEL[@URL]."""
    role_models: dict[str, str] = field(default_factory=dict)
    """Per-role model, overriding the scenario and `model`."""
    seed: int = 0
    """Seed of the run: the same seed and scripted seats give the same game."""
    humans: list[str] = field(default_factory=list)
    """Roles played by people (through interrupts), whatever the scenario says."""
    scripts: dict[str, Any] = field(default_factory=dict)
    """Per-role script of answers for tests (a list in the order asked, or a mapping by task;
    wargraph.seats.script), overriding the scenario's; the seed answers once it runs out."""
    temperature: float = 0.7
    """Sampling temperature of the models (a scenario's seat may set its own)."""
    max_tokens: int = 200
    """Longest answer of one model call, in tokens."""
    trace_path: str | None = None
    """Where each model call is appended as one JSON line; None keeps no trace file."""
    call_timeout: float | None = None
    """Seconds one model call may take before it counts as a transport fault (None: the seat's
    profile's, 60 s small, 300 s capable; wargraph.models.profiles)."""
    retries: int | None = None
    """Transport retries per model call (with back-off) before the re-ask and the fallback (None:
    the seat's profile's)."""
    profile: str | None = None
    """Model profile of every AI seat: small or capable (None: chosen from each seat's model;
    docs/model-profiles.md)."""
    role_profiles: dict[str, str] = field(default_factory=dict)
    """Per-role model profile, overriding the scenario and `profile`."""
    max_faults: int = DEFAULT_MAX_FAULTS
    """Model calls in a row that fail every retry before the game stops (resumable)."""
    model_cache: str | None = None
    """A SQLite file or postgresql:// URL where model answers are kept and reused: the same call
    (model, messages, settings) is answered from it, not asked again (None: no cache)."""


# What a served game's request may set (a run on one's own machine is not limited): a request
# must not hold a server's worker for hours through a huge timeout or retry count.
SERVED_BOUNDS: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 8192),
    "call_timeout": (1.0, 600.0),
    "retries": (0, 10),
    "max_faults": (1, 100),
}


def served_bound_refusal(settings: dict[str, Any]) -> str | None:
    """Why run settings sent to a server are out of its bounds (None: they are within)."""
    for name, (low, high) in SERVED_BOUNDS.items():
        value = settings.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{name}: a number from {low:g} to {high:g}"
        if not low <= value <= high:
            return f"{name}: from {low:g} to {high:g} on a served game (got {value:g})"
    return None


def context_of(runtime: Any) -> GameContext:
    """`runtime.context` is None when a run passes no context, even though every field has a default."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return GameContext()
    if isinstance(ctx, dict):
        return GameContext(
            **{k: v for k, v in ctx.items() if k in GameContext.__dataclass_fields__}
        )
    return ctx


CONTEXT_FIELDS = frozenset(f.name for f in fields(GameContext))
"""The names of a game's settings (what a stored run's or a served game's context may hold)."""
