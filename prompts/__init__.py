"""Prompt templates as text files, one folder per version (v1, v2 ...); `${name}` placeholders."""

from __future__ import annotations

import importlib.resources
from string import Template


class PromptError(KeyError):
    pass


def load_prompt(name: str, variant: str = "v1") -> str:
    """The template `name` of `variant`, falling back to v1 when a variant does not override it."""
    root = importlib.resources.files("wargraph.prompts")
    for folder in (variant, "v1"):
        path = root / folder / f"{name}.txt"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise PromptError(f"no prompt template {name!r} in prompts/{variant} or prompts/v1")


def render_prompt(name: str, variant: str = "v1", **values: object) -> str:
    """Fill a template; unknown placeholders stay as they are rather than failing a game."""
    return (
        Template(load_prompt(name, variant))
        .safe_substitute({k: "" if v is None else str(v) for k, v in values.items()})
        .strip()
    )
