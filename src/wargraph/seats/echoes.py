"""Instructions restated in an answer: what the play-quality measure counts as an echo, and the
sentences a model's answer loses before it is recorded.

Small models write their question back: "In two to four sentences, ..." after a plan, or a
diary's field descriptions ("What was said and agreed in this phase's messages above") as the
diary. A sentence that restates the instructions says nothing about the game; it is dropped from
a free-text answer (the call's trace keeps the raw output, a `corrected` line says what went),
and an answer with nothing left is re-asked like any unusable answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

# the format's own words ("no JSON", "plain text", "the plan only, no ...")
FORMAT_WORDS = re.compile(
    r"\bno json\b|\bplain text\b|\bjson object\b|\bno heading\b|\b\w+ only, no\b|"
    r"\banswer (?:in|with) (?:plain|one)\b",
    re.I,
)
# the length asked for ("in two to four sentences", "one or two sentences")
LENGTH_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six)(?: or | to )(?:two|three|four|five|six) sentences\b|"
    r"\bin (?:one|two|three|four|five|six) sentences?\b",
    re.I,
)
ECHO_SHARE = 0.5  # of a text's word triples found in the instructions
SENTENCE_WORDS = 5  # a sentence this long, mostly the instructions' words, restates them
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def triples(ws: list[str]) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + 3]) for i in range(len(ws) - 2)}


def sentences(text: str) -> list[str]:
    return [s for line in text.splitlines() for s in _SENTENCE.split(line) if s.strip()]


@lru_cache(maxsize=256)
def asked_triples(instructions: str) -> frozenset[tuple[str, ...]]:
    """The instructions' word triples, made once per prompt (every text field of an answer, and
    every retry, is checked against the same instructions)."""
    return frozenset(triples(words(instructions)))


def restates(sentence: str, asked: frozenset[tuple[str, ...]]) -> bool:
    """A sentence that restates instructions whose word triples are `asked`: the format's or the
    length's words, or SENTENCE_WORDS words or more of which ECHO_SHARE of the triples are asked."""
    if FORMAT_WORDS.search(sentence) or LENGTH_WORDS.search(sentence):
        return True
    ws = words(sentence)
    own = triples(ws)
    return len(ws) >= SENTENCE_WORDS and len(own & asked) / len(own) >= ECHO_SHARE


def is_echo(answer: str, instructions: str) -> bool:
    """An answer that repeats its instructions: as a whole (ECHO_SHARE of its triples, 3 words or
    more) or in one of its sentences (`restates`)."""
    asked = asked_triples(instructions)
    own = triples(words(answer))
    if own and len(own & asked) / len(own) >= ECHO_SHARE:
        return True
    return any(restates(s, asked) for s in sentences(answer))


def drop_restated(text: str, instructions: str) -> tuple[str, list[str]]:
    """`text` less its sentences that restate `instructions`, and those sentences. Unchanged
    (to the character) when none does; "" when every sentence does."""
    asked = asked_triples(instructions)
    dropped: list[str] = []
    lines = []
    for line in text.splitlines():
        parts = [s for s in _SENTENCE.split(line) if s.strip()]
        kept = [s for s in parts if not restates(s, asked)]
        dropped += [s.strip() for s in parts if s not in kept]
        if kept:
            lines.append(" ".join(kept) if len(kept) < len(parts) else line)
    return ("\n".join(lines).strip() if dropped else text), dropped
