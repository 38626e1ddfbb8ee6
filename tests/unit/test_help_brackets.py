"""Every bracketed word of an option's help (`wargraph[scale]`, `openai:MODEL[@URL]`) shows in
`--help`: Typer renders help as Rich markup, which swallows `[scale]` unless it is escaped."""

from __future__ import annotations

import re

from typer.main import get_command
from typer.testing import CliRunner

from wargraph.cli import app

# what Rich takes for a markup tag: [ then a letter, #, / or @
TAG = re.compile(r"\\?\[[a-z#/@][^\[\]]*\]")


def _bracketed() -> list[tuple[str, str]]:
    out = []
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            for tag in TAG.findall(getattr(param, "help", None) or ""):
                out.append((name, tag.lstrip("\\")))
    return out


def test_bracketed_words_of_help_are_shown():
    found = _bracketed()
    assert ("experiment", "[scale]") in found and ("play", "[@URL]") in found
    runner = CliRunner()
    missing = []
    for name, tag in found:
        shown = runner.invoke(app, [name, "--help"], env={"COLUMNS": "400"}).output
        if tag not in shown:
            missing.append((name, tag))
    assert not missing, f"swallowed by Rich markup: {missing}"
