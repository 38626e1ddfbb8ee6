"""Whether a model's answer to `wargraph prepare` is a scenario of the description it was given:
checked against the description's own words, for echoes of the prompt's instructions, and for
seats with names and personas of their own (`answer_problems`)."""

from __future__ import annotations

import re
from typing import Any

# Words that say nothing of what a description is about: they need not reappear in the setting.
_FILLER = frozenset((
    "a", "an", "the", "and", "or", "but", "of", "on", "in", "at", "to", "for", "from", "with",
    "by", "about", "into", "over", "under", "between", "among", "after", "before", "during",
    "against", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this",
    "that", "these", "those", "there", "their", "they", "them", "two", "three", "four", "five",
    "some", "any", "each", "every", "one", "who", "what", "which", "where", "when", "how", "set",
    "play", "played", "game", "games", "scenario", "scenarios", "exercise", "exercises",
    "tabletop", "table-top", "drill", "wargame", "war-game", "simulation", "simulated", "prepare",
    "write", "make", "new", "short", "long",
))  # fmt: skip


def key_words(request: str) -> list[str]:
    """The words a description is about (lowercase, in order): its nouns and names, less the
    filler and the words that only say which kind of game it is."""
    words = re.findall(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]", request.lower())
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in _FILLER))


def _same_word(a: str, b: str) -> bool:
    """Two forms of one word (hospital, hospitals; fishing, fish; state, states)."""
    n = min(len(a), len(b))
    if n < 4:
        return a == b
    k = max(4, n - 2)
    return a[:k] == b[:k]


# Words too common to make a run of the prompt's words its own ("each with a", "during the").
_GLUE = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "with", "each", "that", "for", "in", "on", "at",
    "during", "one", "what", "who", "has", "have", "had", "is", "are", "was", "were", "be", "it",
    "its", "their", "they", "this", "such", "as", "never", "own", "not", "no", "from", "by", "s",
))  # fmt: skip


# Words of the prompt's form, not of a world: a setting or a seat's name holding one (and the
# description not) names the form instead of filling it in.
_FORM_WORDS = frozenset(("persona", "personas", "inject", "injects"))
_UNNAMED = re.compile(
    r"(name|player|persona|goal|role|side|character)([ _]?(\d+|one|two|three|four|[a-d]))?"
)
MIN_CARD_WORDS = 5  # an inject card is an event in a sentence, not a name or a date


def _instruction_grams(request: str) -> set[tuple[str, ...]]:
    """Runs of two and three words of the prompt's instructions (not of the request) holding
    two words of their own (not glue): a setting with one repeats what it was told to write
    ("three to six sentences", "key players") instead of writing it."""
    from wargraph.prompts import render_prompt

    told = render_prompt("prepare_question", request="")
    asked = _grams(request)
    return {g for g in _grams(told) if g not in asked and sum(w not in _GLUE for w in g) >= 2}


def _grams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i : i + n]) for n in (2, 3) for i in range(len(words) - n + 1)}


MIN_SETTING_WORDS = 15  # the prompt asks for three to six sentences: a fragment is no setting


def answer_problems(
    request: str,
    title: str,
    setting: str,
    players: dict[str, Any] | None = None,
) -> list[str]:
    """Why a written answer does not answer the description, in words a person can act on;
    none when it does. Checked against the description's own words: at least half of its key
    words (one at least) appear in the title or setting; the setting is sentences, not a
    fragment; no text of the answer repeats the prompt's instructions or names its form (a
    "persona"); and each seat (`players`: name -> persona, goals) has a name of its own (not
    "name", "player 2") and a persona."""
    problems = []
    text = f"{title} {setting}"
    seats = players or {}
    everything = " ".join(
        [text, *(f"{p.get('persona', '')} {' '.join(p.get('goals', []))}" for p in seats.values())]
    )
    echoed = sorted(" ".join(g) for g in _grams(everything) & _instruction_grams(request))
    asked = set(re.findall(r"[a-z]+", request.lower()))
    echoed += sorted(set(re.findall(r"[a-z]+", everything.lower())) & _FORM_WORDS - asked)
    if echoed:
        problems.append(f"it repeats the prompt's instructions ({echoed[0]!r})")
    keys = key_words(request)
    written = re.findall(r"[a-z0-9]+", text.lower())
    found = [k for k in keys if any(_same_word(part, w) for part in k.split("-") for w in written)]
    if keys and len(found) < max(1, len(keys) // 2):
        missing = ", ".join(k for k in keys if k not in found)
        problems.append(f"its setting does not speak of the description ({missing} missing)")
    if len(setting.split()) < MIN_SETTING_WORDS:
        problems.append(f"its setting is a fragment ({len(setting.split())} words)")
    unnamed = [p for p in seats if _UNNAMED.fullmatch(p.strip().lower())]
    if unnamed:
        problems.append(f"its seats have no names of their own ({', '.join(unnamed)})")
    faceless = [n for n, p in seats.items() if not str(p.get("persona", "")).strip()]
    if faceless:
        problems.append(f"seat(s) without a persona ({', '.join(faceless)})")
    return problems
