"""Answer schemas of the phase library (flat, so llama.cpp grammars hold)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from wargraph.kernel.choices import list_of, one_of
from wargraph.kernel.parts.allocation import ALLOCATION, allocation_schema
from wargraph.seats.schemas import register_schema


class Plan(BaseModel):
    """What a player or team does this move, in its own words."""

    plan: str = Field(min_length=1, max_length=1200)


class Adjudication(BaseModel):
    """The umpire's account of what happens in the next timestep."""

    narrative: str = Field(min_length=1, max_length=2400)


class Diary(BaseModel):
    summary: str = Field(min_length=1, max_length=1200)


class FreeAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=1200)


UNDETERMINED = "undetermined"


QUOTES = 80  # record lines offered as evidence (the latest)
QUOTE_CHARS = 200  # each cut to this many characters, at a word


def record_quotes(context: str) -> list[str]:
    """The quoted lines of a record ("> ..."), as a choice question offers them for evidence:
    each once, cut at a word to QUOTE_CHARS, the latest QUOTES."""
    lines = []
    for line in context.splitlines():
        # a line of signs alone (a Markdown fence "```", a rule) is no evidence, and a fence
        # quoted in a fenced JSON answer ends its block early
        if line.startswith("> ") and any(c.isalnum() for c in line[2:]):
            text = line[2:].strip()
            if len(text) > QUOTE_CHARS:
                text = text[:QUOTE_CHARS].rsplit(" ", 1)[0] + " ..."
            lines.append(text)
    return list(dict.fromkeys(lines))[-QUOTES:]


def choice_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Multiple choice: one of the options or "undetermined", with the evidence: one of the
    record's lines (`quotes`; "" for none) when they are given, so that it is always a quote
    (SmolLM2 wrote the question itself as its evidence), else free text."""
    options = tuple(dict.fromkeys([*args.get("options", []), UNDETERMINED]))
    quotes = tuple(dict.fromkeys(["", *args.get("quotes", [])]))
    evidence: Any = (
        (one_of(quotes), "") if len(quotes) > 1 else (str, Field(default="", max_length=600))
    )
    return create_model("Choice", choice=(one_of(options), ...), evidence=evidence)


def messages_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Up to `limit` messages, each to one named seat or to everyone (`everyone: false` in the
    arguments: to named seats only, a private-only press)."""
    everyone = ["everyone"] if args.get("everyone", True) else []
    recipients = tuple(dict.fromkeys([*args.get("recipients", []), *everyone]))
    limit = int(args.get("limit", 2))
    max_len = int(args.get("max_len", 400))
    message = create_model(
        "Message",
        to=(one_of(recipients), ...),
        text=(str, Field(min_length=1, max_length=max_len)),
    )
    return create_model("Messages", messages=(list_of(message), Field(max_length=limit)))


register_schema("plan", Plan)
register_schema("adjudication", Adjudication)
register_schema("diary", Diary)
register_schema("answer", FreeAnswer)
register_schema("choice", choice_schema)
register_schema("messages", messages_schema)
register_schema(ALLOCATION, allocation_schema)
