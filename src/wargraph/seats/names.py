"""The names a game's seats may write, and the documented fallback for prose that misspells one.

Small models invent near-copies of a scenario's side names ("Azurland", "Azunistiran" for
Azuristan). A prose answer's word that is a near-miss of exactly one side's name is replaced by
that name in the recorded answer; the trace keeps the model's raw output and the corrections
(`corrected` events), so nothing is hidden. A word is left alone when it is
- not capitalised, or shorter than four letters;
- a side's name or a form of it: the name, or the name less its last one or two letters (four
  letters left at least), with a demonym's, plural's or nothing's ending ("Crimsonian",
  "Azuristanis", "Italians"); "Azuristania" is another name, not a form;
- one of the scenario's other entities (a proper noun of its title or setting: "Zafaristan");
- an ordinary word or a real name of the language (a word frequency list knows it: "Azure",
  "Crimson", "Austria"), unless it is rare (Zipf frequency below RARE_ZIPF) and the side's name
  cut short ("Azura" for Azuristan: the name starts with the word less its last letter) or
  very near it (RARE_RATIO: "ENGELAND" for England);
- near none of the sides' names (difflib ratio below NAME_RATIO), near more than one, or at
  least as near another entity of the scenario (which one was meant is not known).
A word with a demonym's ending ("Azurlandian", "Azurlander") is judged by its stem too
("Azurland"), so the adjective of an invented name is that side's name as well. Never touched,
whatever its nearness (found in ~15,700 texts strong models wrote in published Diplomacy and
WarAgent games, where every one of 35 corrections was wrong):
- a hyphenated national prefix, a word ending in "o" before a hyphen ("Italo-German",
  "Austro-Hungarian", "Anglo-", "Franco-", "Russo-", "Turco-", "Germano-", "Sino-");
- a word of another language (common in French, German, Spanish or Italian: FOREIGN_ZIPF;
  "la Russie", "Russland");
- a side's name with a demonym's "-er"/"-ers" ("Every Englander");
- a word fused to punctuation and another word, a missing space ("France.Italyseek"). The name
replaces the whole word, in the word's case ("AZURLAND" -> "AZURISTAN"). An invented side's name
written in lower case ("crimsonia's") is written as the scenario spells it; a side named by a
word of the language ("Turkey") is left alone in lower case.

JSON answers get the same correction in their free-text fields (`correct_value`: strings that
are not picked from an enum, such as a message's text or a diary's summary).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario

NAME_RATIO = 0.7  # difflib ratio (case-insensitive) at or above which a word is taken for a name
RARE_ZIPF = 3.0  # a known word rarer than this may be a side's name cut short ("Azura": 2.06)
RARE_RATIO = 0.85  # ... or a very near miss ("ENGELAND", 1.02, 0.93 to England; "Italic" 0.73)
# Demonym and plural endings: "Azurlandian" and "Azurlanders" are judged by "Azurland" too
SUFFIXES = ("ians", "ian", "ers", "er", "ese", "ish", "is", "i", "s")
# What may follow a name (or the name less its last letters) in a form of it
FORM_ENDINGS = frozenset({"", "s", "es", "n", "ns", "an", "ans", "ian", "ians", "i", "is", "ese"})
# ... and what only the name itself may take ("Englander"), not a name less its last letters
WHOLE_NAME_ENDINGS = frozenset({"er", "ers"})
OTHER_LANGUAGES = ("fr", "de", "es", "it")  # languages a game's press quotes now and then
FOREIGN_ZIPF = 2.5  # as common as this in one of them ("Russie" 4.9 in French; "Engeland" 1.9)
_FUSING = frozenset(".!?;:,")  # punctuation that, with no space after it, fuses two words
_WORD = re.compile(r"\b[A-Z][A-Za-z]{3,}\b")
_LOWER_WORD = re.compile(r"\b[a-z]{4,}\b")
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
    """The name itself or its demonym or plural ("Crimsonian" on "Crimsonia", "Italians" on
    "Italy"); a longer word built on it ("Azuristania") is not."""
    w, n = word.casefold(), name.casefold()
    if w.startswith(n) and w[len(n) :] in WHOLE_NAME_ENDINGS:
        return True
    for cut in (0, 1, 2):
        base = n[: len(n) - cut]
        if len(base) >= 4 and w.startswith(base) and w[len(base) :] in FORM_ENDINGS:
            return True
    return False


def ratio(word: str, name: str) -> float:
    return difflib.SequenceMatcher(None, word.casefold(), name.casefold()).ratio()


def frequency(word: str) -> float:
    """The word's Zipf frequency in English (0: the word list does not know it)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def is_foreign(word: str) -> bool:
    """A word of another language a game's press is written in (OTHER_LANGUAGES)."""
    from wordfreq import zipf_frequency

    return any(zipf_frequency(word, lang) >= FOREIGN_ZIPF for lang in OTHER_LANGUAGES)


def untouchable(text: str, start: int, end: int) -> bool:
    """The word text[start:end] is a hyphenated prefix ("Italo-") or fused to another word by
    punctuation with no space ("France.Italyseek", "Italyseek.France"): never corrected."""
    after = text[end : end + 2]
    if text[end - 1 : end] == "o" and len(after) == 2 and after[0] == "-" and after[1].isalpha():
        return True
    before = text[max(0, start - 2) : start]
    if len(before) == 2 and before[1] in _FUSING and before[0].isalnum():
        return True
    return len(after) == 2 and after[0] in _FUSING and after[1].isalpha()


def is_ordinary(word: str) -> bool:
    """A word of the language or a real place or person (English word frequencies know it)."""
    return frequency(word) > 0


def stems(word: str) -> list[str]:
    """The word and, when it has a demonym's or plural's ending, the rest of it (four letters
    at least): "Azurlandian" -> ["Azurlandian", "Azurland"]."""
    low = word.casefold()
    return [word] + [
        word[: -len(x)] for x in SUFFIXES if low.endswith(x) and len(low) - len(x) >= 4
    ]


def nearness(word: str, name: str) -> float:
    """The word's or one of its stems' difflib ratio to the name, the highest."""
    return max(ratio(stem, name) for stem in stems(word))


def near_sides(word: str, sides: Iterable[str]) -> list[str]:
    """The sides' names the word (or its stem) is a near-miss of; none when it is a form of one."""
    sides = list(sides)
    if any(is_form(word, n) for n in sides):
        return []
    return [s for s in sides if nearness(word, s) >= NAME_RATIO]


def cut_short(word: str, name: str) -> bool:
    """The name cut short: the name starts with the word less its last letter ("Azura")."""
    return name.casefold().startswith(word.casefold()[:-1])


def meant_name(word: str, sides: Iterable[str], entities: Iterable[str] = ()) -> str | None:
    """The side's name a word misspells, or None (see the module's rules)."""
    sides, entities = list(sides), list(entities)
    if not _WORD.fullmatch(word):
        return None
    if any(is_form(word, n) for n in entities):
        return None
    near = near_sides(word, sides)
    if len(near) != 1:
        return None
    (name,) = near
    known, closest = frequency(word), nearness(word, name)
    rare_but_meant = cut_short(word, name) or closest >= RARE_RATIO
    if known > 0 and not (known < RARE_ZIPF and rare_but_meant):
        return None
    if is_foreign(word):
        return None
    # another entity as close or closer ("Zafarastan" is Zafaristan's, not Azuristan's); an
    # entity built on a side's name ("Crimsonians") is that side
    others = [e for e in entities if not any(is_form(e, s) for s in sides)]
    if any(nearness(word, e) >= closest for e in others):
        return None
    return name


def in_case_of(word: str, name: str) -> str:
    """The name written in the word's case: "AZURLAND" -> "AZURISTAN"."""
    return name.upper() if word.isupper() else name


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
        if untouchable(m.string, m.start(), m.end()):
            return word
        if word not in found:
            found[word] = meant_name(word, sides, entities)
        name = found[word]
        return in_case_of(word, name) if name else word

    fixed = _WORD.sub(fix, text)
    # an invented name in lower case ("crimsonia's") is the name; a real word is left alone
    invented = {s.casefold(): s for s in sides if not is_ordinary(s)}
    if invented:

        def capitalise(m: re.Match[str]) -> str:
            word = m.group(0)
            if word in invented:
                found.setdefault(word, invented[word])
                return invented[word]
            return word

        fixed = _LOWER_WORD.sub(capitalise, fixed)
    return fixed, [{"written": w, "name": in_case_of(w, n)} for w, n in found.items() if n]


# A JSON-schema string format: text that must be recorded as written (a Diplomacy order written
# freely), never repaired. Backends treat an unknown format as a plain string.
VERBATIM = "verbatim"


def map_free_text(value: Any, schema: dict[str, Any], fn: Callable[[str], str]) -> Any:
    """`value` (a JSON answer) with `fn` applied to its free-text strings (`schema`: the answer's
    flat JSON schema; a string picked from an `enum` or `const` is left alone, and so is a
    `"format": VERBATIM` string and any field the schema does not describe)."""
    if isinstance(value, str):
        free = schema.get("type") == "string" and "enum" not in schema and "const" not in schema
        free = free and schema.get("format") != VERBATIM
        return fn(value) if free else value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: map_free_text(x, props[k], fn) if k in props else x for k, x in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [map_free_text(x, schema["items"], fn) for x in value]
    return value


def correct_value(
    value: Any, schema: dict[str, Any], sides: Iterable[str], entities: Iterable[str] = ()
) -> tuple[Any, list[Correction]]:
    """A JSON answer with the misspelt names of its free-text fields corrected (`map_free_text`),
    and the corrections made (each word once)."""
    sides, entities = list(sides), list(entities)
    fixes: dict[str, Correction] = {}

    def fix(text: str) -> str:
        text, found = correct_names(text, sides, entities)
        fixes.update({f["written"]: f for f in found if f["written"] not in fixes})
        return text

    if not sides:
        return value, []
    return map_free_text(value, schema, fix), list(fixes.values())
