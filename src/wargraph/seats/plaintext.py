"""Plain-text answers: a question whose schema is one text field (a plan, a narrative, a diary
summary, a digest, a free answer) is asked for prose, generated without a grammar, and put into
the field here, in code.

Small models still dress prose as JSON now and then (`{ "plan": "We ...`), or nest it
(`{"narrative": "{\\"narrative\\": ...`). `unwrap_text` peels such wrappers off; text that still
holds JSON afterwards is refused with a reason (the decider re-asks, then falls back), so no
wrapper is ever stored as an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

_FENCE = re.compile(r"```[\w-]*\s*(.*?)(?:```|$)", re.S)
# `{ "plan": "`, `[{"narrative":"`, `"plan": ` — an opening bracket run and a quoted key
_OPEN_KEY = re.compile(r'^[\s\[{]*"[^"\n]{1,40}"\s*:\s*"?')
_OPEN_JUNK = re.compile(r"^[\s\[\]{}]+")  # stray brackets before the prose (`]You will ...`)
_CLOSE = re.compile(r'\s*"?\s*[\]}][\s\]}"]*$')  # `"}`, `"]}`, `}` after the prose
# What counts as JSON wrapper text left in an answer (also what the tests scan records for).
JSON_WRAPPER = re.compile(r'```|^\s*[\[{]|[\]}]\s*$|"[\w -]{1,40}"\s*:\s*["\[{]')
_LAYERS = 6  # small models nest a few wrappers at most
_SENTENCE_END = re.compile(r"[.!?…][\"')\]]*(?=\s|$)")


def text_field(schema: type[BaseModel]) -> str | None:
    """The field's name when the schema is exactly one text field, else None."""
    fields = schema.model_fields
    if len(fields) != 1:
        return None
    name, info = next(iter(fields.items()))
    return name if info.annotation is str else None


def _json_string(value: Any, field: str) -> str:
    """The prose inside a whole JSON value, if it holds exactly one; raises if it holds none."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get(field), str):
            return value[field]
        texts = [v for v in value.values() if isinstance(v, str) and v.strip()]
        if len(texts) == 1:  # the right prose under another key name
            return texts[0]
    raise ValueError(f"the answer was JSON, not plain text; write only the {field} as prose")


def _unescape(text: str) -> str:
    """Prose cut out of a broken JSON string still carries its escapes (\\n, \\")."""
    try:
        return json.loads(f'"{text}"')
    except json.JSONDecodeError:
        return text.replace("\\n", "\n").replace('\\"', '"')


def _peel(text: str, field: str) -> str:
    """One layer of wrapping off (a fence, a whole JSON value, a key opening, a closing)."""
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1).strip()
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    else:
        return _json_string(value, field).strip()
    opened = _OPEN_KEY.match(text)
    if opened:
        text = _CLOSE.sub("", text[opened.end() :])
        if text.endswith('"'):
            text = text[:-1]
        return _unescape(text).strip()
    text = _CLOSE.sub("", _OPEN_JUNK.sub("", text))
    label = re.match(rf"^{re.escape(field)}\s*:\s*", text, re.I)  # `Plan: We ...`
    return (text[label.end() :] if label else text).strip()


def unwrap_text(raw: str, field: str) -> str:
    """The prose of a plain-text answer, wrappers peeled off. Raises ValueError (sent back to the
    model) when nothing readable is left or JSON remains."""
    text = str(raw).strip()
    for _ in range(_LAYERS):
        peeled = _peel(text, field)
        if peeled == text:
            break
        text = peeled
    if not re.search(r"[^\W\d_]", text):
        raise ValueError(f"the answer held no text; write the {field} as plain sentences")
    found = JSON_WRAPPER.search(text)
    if found:
        raise ValueError(
            f"the answer still held JSON ({found.group(0).strip()!r}); write only the {field} "
            "as plain sentences, no JSON"
        )
    return text


_WHOLE_FENCE = re.compile(r"```[\w-]*\s*(.*?)\s*```", re.S)


def as_written(raw: str, field: str) -> str:
    """The prose of a plain-text answer under the capable profile: as written (Markdown, fences,
    labels and all), less its surrounding blank space. Only an answer that is wholly one JSON
    value (bare or in a fence) holding the field's text is read from it. Raises ValueError (sent
    back to the model) when it holds no text."""
    text = str(raw).strip()
    fenced = _WHOLE_FENCE.fullmatch(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if isinstance(value, str) or (isinstance(value, dict) and isinstance(value.get(field), str)):
        text = _json_string(value, field).strip()  # other JSON: kept as written
    if not re.search(r"[^\W\d_]", text):
        raise ValueError(f"the answer held no text; write the {field} as plain sentences")
    return text


def trim_to_sentence(text: str) -> str:
    """A reply cut by the length cap ends mid-sentence: keep whole sentences when there are some
    (past the first third, so a long first sentence is not thrown away)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if ends and ends[-1] >= len(text) // 3:
        return text[: ends[-1]].strip()
    return text.strip()
