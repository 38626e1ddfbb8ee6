"""Per-run settings (LangGraph `context_schema`): models per role, seed, human seats, outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict

from wargraph.faults import DEFAULT_MAX_FAULTS


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
    temperature: float = 0.7
    """Sampling temperature of the models (a scenario's seat may set its own)."""
    max_tokens: int = 200
    """Longest answer of one model call, in tokens."""
    trace_path: str | None = None
    """Where each model call is appended as one JSON line; None keeps no trace file."""
    call_timeout: float = 60.0
    """Seconds one model call may take before it counts as a transport fault."""
    retries: int = 2
    """Transport retries per model call (with back-off) before the re-ask and the fallback."""
    max_faults: int = DEFAULT_MAX_FAULTS
    """Model calls in a row that fail every retry before the game stops (resumable)."""


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
