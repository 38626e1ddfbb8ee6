"""The shape of a seat's script (a list of answers, or a mapping of task to answers), checked
where a scenario or a command line names one; playing it is `wargraph.seats.script`'s work."""

from __future__ import annotations

from typing import Any

Script = list[Any] | dict[str, Any]


class ScriptError(ValueError):
    """A script that cannot be read or whose answer the question's schema refuses."""


def _answer_ok(answer: Any) -> bool:
    return isinstance(answer, dict | str | int | float | bool)


def check_script(script: Any, where: str) -> Script:
    """The script itself when its shape is one a seat can play, else a one-line ScriptError."""
    if isinstance(script, list):
        bad = [i for i, a in enumerate(script, 1) if not _answer_ok(a)]
        if bad:
            raise ScriptError(
                f"{where}: answer {bad[0]} is a {type(script[bad[0] - 1]).__name__}; "
                "expected an object of the answer's fields or one value"
            )
        return script
    if isinstance(script, dict):
        for task, answers in script.items():
            for i, a in enumerate(answers if isinstance(answers, list) else [answers], 1):
                if not _answer_ok(a):
                    raise ScriptError(
                        f"{where}: task {task!r} answer {i} is a {type(a).__name__}; "
                        "expected an object of the answer's fields or one value"
                    )
        return script
    raise ScriptError(
        f"{where}: a script is a list of answers or a mapping of task to answers, "
        f"not {type(script).__name__}"
    )
