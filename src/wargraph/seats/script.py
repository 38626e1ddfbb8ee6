"""A seat's script: its exact answers, for tests (`wargraph play --script SEAT=FILE`, a role's
`script:` in the scenario, `GameContext(scripts={seat: [...]})`).

A script is a list, one answer per question the seat is asked, in the order it is asked, or a
mapping by task (`{vote: [yes, no], draft: "..."}`: a list is answered in order, one answer
is given every time). An answer is an object of the answer schema's fields, or, for a schema of
one field, the field's value alone. When the script has no answer left for a question the seat
answers as the seeded scripted decider and its trace line says so (`"event": "script-ended"`).
An answer the schema refuses stops the game with a `ScriptError` naming the seat, the answer
and the reason."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from wargraph.kernel.script_shape import Script, ScriptError, check_script

if TYPE_CHECKING:
    from wargraph.seats.asks import Ask, Decision

MAX_SCRIPT_BYTES = 5_000_000  # a script is a few answers; a test's longest is a few kB


def load_script(path: str | Path, where: str = "") -> Script:
    """A script from a YAML or JSON file (a list of answers or a mapping by task)."""
    from wargraph.kernel.scenario import ScenarioError, parse_yaml
    from wargraph.runs.userfiles import UserFileError, read_json, read_regular

    where = where or str(path)
    p = Path(path)
    if not os.path.lexists(p):
        raise ScriptError(f"{where}: no script file {str(p)!r}")
    try:  # a regular file under a bound, YAML with its aliases' expansion bounded too
        if p.suffix == ".json":
            data = read_json(p, MAX_SCRIPT_BYTES)
        else:
            raw = read_regular(p, MAX_SCRIPT_BYTES)
            data = parse_yaml(raw.decode("utf-8"), str(p))
    except UserFileError as err:  # it names the file
        raise ScriptError(str(err) if where == str(p) else f"{where}: {err}") from None
    except ScenarioError as err:
        detail = str(err).removeprefix(f"{p}:").strip()
        raise ScriptError(f"{where}: {p.name} is not valid YAML/JSON ({detail})") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{where}: {p.name} is not a UTF-8 text file") from None
    return check_script(data, where)


def next_answer(script: Script, task: str, used: dict[str, int]) -> tuple[str, Any] | None:
    """The script's next answer for a question of `task`, and the counter it advances (`used`,
    how many answers of each counter were given: "" for a list, the task for a mapping);
    None when the script has none left."""
    if isinstance(script, list):
        key, answers = "", script
    elif task in script:
        key, given = task, script[task]
        if not isinstance(given, list):
            return key, given  # one answer, given every time
        answers = given
    else:
        return None
    n = used.get(key, 0)
    return (key, answers[n]) if n < len(answers) else None


def as_value(answer: Any, schema: type[BaseModel]) -> dict[str, Any]:
    """A script's answer as a value of `schema`: an object of its fields, or one value for a
    schema of one field. Raises ValueError with the reason."""
    from wargraph.seats.deciders import validate_value

    if not isinstance(answer, dict):
        fields = list(schema.model_fields)
        if len(fields) != 1:
            raise ValueError(
                f"{answer!r} is one value but the answer has the fields {', '.join(fields)}"
            )
        answer = {fields[0]: answer}
    return validate_value(answer, schema).model_dump()


def script_decision(
    ask: Ask, schema: type[BaseModel], used: dict[str, int]
) -> tuple[Decision | None, str]:
    """The seat's scripted answer to `ask` (source "script"), advancing `used`; None and a note
    for the trace when the script has run out (the caller answers as the seeded decider)."""
    script = ask.get("seat", {}).get("script")
    assert script is not None
    found = next_answer(script, ask["task"], used)
    if found is None:
        given = sum(used.values())
        return None, (
            f"the script of {ask['role']} has no answer for {ask['task']} ({ask['id']}) "
            f"after {given} scripted answer{'s' if given != 1 else ''}: "
            "a seeded scripted answer"
        )
    key, answer = found
    try:
        value = as_value(answer, schema)
    except ValueError as err:
        n = used.get(key, 0) + 1
        which = f"answer {n}" if key == "" else f"task {key!r} answer {n}"
        raise ScriptError(
            f"script of {ask['role']}, {which} (round {ask['round']}, {ask['task']}): {err}"
        ) from None
    used[key] = used.get(key, 0) + 1
    return {"value": value, "source": "script"}, ""
