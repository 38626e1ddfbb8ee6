"""Text-field limits of an answer under the capable profile (wargraph.models.profiles): stated in the
prompt, an answer over one asked again with the limit, and only then cut at a sentence or word
end, each cut reported (the decider writes it to the trace as a `cut` line). Never mid-word."""

from __future__ import annotations

import re
from typing import Any, TypedDict

_SENTENCE_END = re.compile(r"[.!?…][\"')\]*_]*(?=\s|$)")


class Cut(TypedDict):
    field: str  # where in the answer: "plan", "messages[0].text"
    chars: int  # as written
    limit: int  # the field's limit (0: none; the reply's token cap ended it)
    kept: int  # characters kept
    # "limit": over the field's limit after a re-ask (capable); "fit": over it, cut to it as it
    # stood, with no re-ask (small); "tokens": the token cap ended it, cut at a sentence end
    why: str


def cut_words(cut: Any) -> str:
    """How a record, a transcript and a page say a cut: what was written, kept, and why."""
    if not isinstance(cut, dict):
        return ""
    written = f"{cut.get('chars')} characters written, {cut.get('kept')} kept"
    if cut.get("why") == "tokens":
        return f"cut at the answer's token cap, at its last sentence end: {written}"
    if cut.get("why") == "fit":
        return f"cut to its limit: {written}, limit {cut.get('limit')}"
    return f"cut after a re-ask: {written}, limit {cut.get('limit')}"


def text_limits(schema: dict[str, Any], path: str = "") -> list[tuple[str, int]]:
    """Every free-text field's limit in a flat JSON schema: [("messages[].text", 1000), ...]."""
    if schema.get("type") == "string" and "maxLength" in schema and "enum" not in schema:
        return [(path or "answer", int(schema["maxLength"]))]
    out: list[tuple[str, int]] = []
    for key, sub in (schema.get("properties") or {}).items():
        out += text_limits(sub, f"{path}.{key}" if path else key)
    if isinstance(schema.get("items"), dict):
        out += text_limits(schema["items"], f"{path}[]")
    return out


def limits_line(schema: dict[str, Any], prose_field: str | None = None) -> str:
    """The sentence that states the limits in the prompt ("" when there are none)."""
    limits = text_limits(schema)
    if not limits:
        return ""
    if prose_field is not None:
        return f"Write at most {limits[0][1]} characters."
    said = "; ".join(f"{where}: at most {n} characters" for where, n in limits)
    return f"Text limits: {said}."


def over_limits(value: Any, schema: dict[str, Any], path: str = "") -> list[tuple[str, int, int]]:
    """The answer's texts longer than their limit: (where, characters, limit)."""
    if isinstance(value, str):
        limit = schema.get("maxLength")
        if limit is not None and "enum" not in schema and len(value) > int(limit):
            return [(path or "answer", len(value), int(limit))]
        return []
    out: list[tuple[str, int, int]] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in value.items():
            if key in props:
                out += over_limits(sub, props[key], f"{path}.{key}" if path else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, sub in enumerate(value):
            out += over_limits(sub, schema["items"], f"{path}[{i}]")
    return out


def over_limit_reason(found: list[tuple[str, int, int]]) -> str:
    said = "; ".join(
        f"{where} has {n} characters, over its limit of {lim}" for where, n, lim in found
    )
    return f"{said}. Write it again within the limit"


def cut_text(text: str, limit: int) -> str:
    """`text` within `limit` characters, ending at a sentence end when one falls in the second
    half of the room, else at a word end (a hard cut only for one word longer than the limit)."""
    if len(text) <= limit:
        return text
    room = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(room)]
    if ends and ends[-1] >= limit // 2:
        return room[: ends[-1]].rstrip()
    if not text[limit].isspace():  # the cut falls inside a word: back to its start
        space = max(room.rfind(" "), room.rfind("\n"))
        if space > 0:
            room = room[:space]
    return room.rstrip()


def cut_to_limits(value: Any, schema: dict[str, Any], path: str = "") -> tuple[Any, list[Cut]]:
    """The answer with each over-long text cut (`cut_text`), and the cuts made."""
    if isinstance(value, str):
        limit = schema.get("maxLength")
        if limit is None or "enum" in schema or len(value) <= int(limit):
            return value, []
        kept = cut_text(value, int(limit))
        where = path or "answer"
        cut: Cut = {
            "field": where,
            "chars": len(value),
            "limit": int(limit),
            "kept": len(kept),
            "why": "limit",
        }
        return kept, [cut]
    cuts: list[Cut] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        out = {}
        for key, sub in value.items():
            if key in props:
                sub, found = cut_to_limits(sub, props[key], f"{path}.{key}" if path else key)
                cuts += found
            out[key] = sub
        return out, cuts
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = []
        for i, sub in enumerate(value):
            sub, found = cut_to_limits(sub, schema["items"], f"{path}[{i}]")
            cuts += found
            items.append(sub)
        return items, cuts
    return value, []
