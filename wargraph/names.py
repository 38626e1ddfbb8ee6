"""The names a game's seats may write, and the documented fallback for prose that misspells one.

Small models invent near-copies of a scenario's side names ("Azurland", "Azunistiran" for
Azuristan). A prose answer's word that is a near-miss of exactly one side's name is replaced by
that name in the recorded answer; the trace keeps the model's raw output and the corrections
(`corrected` events), so nothing is hidden. A word is left alone when it is
- not capitalised, or shorter than four letters;
- a side's name or a form of it (it starts with the name less its last two letters, at least
  four: "Crimsonian", "Azuristani");
- one of the scenario's other entities (a proper noun of its title or setting: "Zafaristan");
- an ordinary word or a real name of the language (a word frequency list knows it: "Azure",
  "Crimson", "Austria");
- near none of the sides' names (difflib ratio below NAME_RATIO), near more than one, or at
  least as near another entity of the scenario (which one was meant is not known).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from wargraph.scenario import Scenario

NAME_RATIO = 0.7  # difflib ratio (case-insensitive) at or above which a word is taken for a name
_WORD = re.compile(r"\b[A-Z][A-Za-z]{3,}\b")
# Capitalised words of settings that start sentences, not entities
_SENTENCE_WORDS = {"both", "each", "every", "seven", "that", "their", "there", "these", "they"}
_SENTENCE_WORDS |= {"this", "when", "with", "diplomacy"}


class Correction(TypedDict):
    written: str  # the word as the model wrote it
    name: str  # the side's name it was replaced by


def display_name(name: str) -> str:
    """A seat's name as prose writes it: "azuristan" -> "Azuristan", "AUSTRIA" -> "Austria"
    (a name with mixed capitals stays as the scenario spells it)."""
    spaced = name.replace("_", " ")
    return spaced.title() if name.islower() or name.isupper() else spaced


def scenario_names(scenario: Scenario) -> tuple[list[str], list[str]]:
    """The one place a game's names come from: (the sides' names as prose writes them — players
    and teams —, the scenario's other entities — proper nouns of its title and setting)."""
    sides = [display_name(n) for n in [*scenario.players, *scenario.teams]]
    nouns = set(re.findall(r"\b[A-Z][a-z]{3,}\b", f"{scenario.title}\n{scenario.setting}"))
    taken = {s.casefold() for s in sides} | _SENTENCE_WORDS
    return sides, sorted(n for n in nouns if n.casefold() not in taken)


def is_form(word: str, name: str) -> bool:
    """The name itself or a word built on it ("Crimsonian" on "Crimsonia")."""
    w, n = word.casefold(), name.casefold()
    return w == n or w.startswith(n[: max(4, len(n) - 2)])


def ratio(word: str, name: str) -> float:
    return difflib.SequenceMatcher(None, word.casefold(), name.casefold()).ratio()


def is_ordinary(word: str) -> bool:
    """A word of the language or a real place or person (English word frequencies know it)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") > 0


def meant_name(word: str, sides: Iterable[str], entities: Iterable[str] = ()) -> str | None:
    """The side's name a word misspells, or None (see the module's rules)."""
    sides, entities = list(sides), list(entities)
    if not _WORD.fullmatch(word):
        return None
    if any(is_form(word, n) for n in [*sides, *entities]):
        return None
    near = [s for s in sides if ratio(word, s) >= NAME_RATIO]
    if len(near) != 1 or is_ordinary(word):
        return None
    (name,) = near
    # another entity as close or closer ("Zafarastan" is Zafaristan's, not Azuristan's); an
    # entity built on a side's name ("Crimsonians") is that side
    closest = ratio(word, name)
    if any(ratio(word, e) >= closest for e in entities if not any(is_form(e, s) for s in sides)):
        return None
    return name


def correct_names(
    text: str, sides: Iterable[str], entities: Iterable[str] = ()
) -> tuple[str, list[Correction]]:
    """The text with every near-miss of a side's name replaced by the name, and the
    corrections made (each word once, in order of first appearance)."""
    sides, entities = list(sides), list(entities)
    if not sides:
        return text, []
    found: dict[str, str | None] = {}

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        if word not in found:
            found[word] = meant_name(word, sides, entities)
        return found[word] or word

    fixed = _WORD.sub(fix, text)
    return fixed, [{"written": w, "name": n} for w, n in found.items() if n]
