"""Logits processors for local models (llama.cpp): the sides' names kept whole (`NameKeeper`) and
an answer whose first words are given kept going past them (`GoesOn`).

llama.cpp's repeat penalty (wargraph uses 1.15 against SmolLM2's loops) also penalises the tokens
of a side's name the answer already wrote, so the second "Azuristan" of an answer comes out
"Azurland" or "Azurlandian". Measured on SmolLM2-135M, the crisis's 21 prose prompts sampled
twice each: 25 of 42 answers misspelt a side's name with the penalty on every token, 9 of 42
with the names' tokens spared (README, "What the embedded model can and cannot do").

`NameKeeper` runs first in llama-cpp-python's sampler chain (before the penalties) and
- spares the names' tokens from the repeat penalty: a name token the answer wrote within the
  penalty's window gets the inverse of the penalty, which the penalty then takes back;
- nudges a name the answer has started to its end: after two or more tokens of a name's
  spelling (" Az", "ur"), the name's next token ("istan") gets COMPLETE_BIAS more logit;
- ends a name where it ends: after a whole name, a token that goes on with letters ("ia":
  "Azuristania", "AzuristanAZURISTAN...") gets END_BIAS less, unless it makes a form of the name
  ("i", "ians": `wargraph.seats.names.FORM_ENDINGS`).
A name's first token is not spared: sparing it made the model name a side in every clause
("Azuristan and Azuristan"), and once a name has begun the nudge finishes it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

COMPLETE_BIAS = 4.0  # logits added to a started name's next token
END_BIAS = 10.0  # logits taken from a token that runs on after a whole name ("Azuristan|ia")
MIN_AFTER_START = 4  # tokens after an answer's given first words before it may end
MIN_STARTED = 2  # tokens of a name written before its next one is nudged (" Az" alone: Azerbaijan?)


def name_spellings(name: str) -> list[str]:
    """The spellings a name's tokens are taken from: as written and upper case, after a space
    and at the start of a text."""
    return list(
        dict.fromkeys(f"{space}{form}" for form in (name, name.upper()) for space in ("", " "))
    )


class NameKeeper:
    """A llama-cpp-python logits processor (`(input_ids, logits) -> logits`) for one completion:
    make a new one per call (it notes where the prompt ends on its first call)."""

    def __init__(
        self,
        sequences: Iterable[Sequence[int]],
        *,
        penalty: float,
        window: int,
        bias: float = COMPLETE_BIAS,
        run_on: Iterable[int] = (),
    ) -> None:
        self.sequences = [tuple(s) for s in sequences if s]
        # a name's later tokens, never its first (see the module's notes)
        later = {t for s in self.sequences for t in s[1:]} - {s[0] for s in self.sequences}
        self.tokens = np.array(sorted(later), dtype=np.intc)
        self.penalty = penalty
        self.window = window
        self.bias = bias
        self.run_on = np.array(sorted(run_on or ()), dtype=np.intc)
        self.start: int | None = None

    @classmethod
    def for_names(
        cls, llama: Any, names: Iterable[str], *, penalty: float, window: int
    ) -> NameKeeper:
        """Built on the model's own tokenizer (`llama_cpp.Llama`)."""
        sequences = [
            llama.tokenize(s.encode(), add_bos=False, special=False)
            for name in names
            for s in name_spellings(name)
        ]
        return cls(sequences, penalty=penalty, window=window, run_on=vocabulary(llama).run_on)

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.start is None:
            self.start = len(input_ids)  # the first call comes before the first answer token
        written = input_ids[self.start :][-self.window :]
        if self.penalty != 1.0 and len(written) and self.tokens.size:
            seen = self.tokens[np.isin(self.tokens, written)]
            if seen.size:  # the penalty divides a positive logit and multiplies a negative one
                x = logits[seen]
                logits[seen] = np.where(x > 0, x * self.penalty, x / self.penalty)
        tail = tuple(int(t) for t in input_ids[-8:])
        if self.bias:
            for nxt in self.next_tokens(tail):
                logits[nxt] += self.bias
        if self.run_on.size and self.ends_name(tail):
            logits[self.run_on] -= END_BIAS
        return logits

    def ends_name(self, tail: Sequence[int]) -> bool:
        """`tail` ends with a whole name."""
        return any(len(tail) >= len(s) and tuple(tail[-len(s) :]) == s for s in self.sequences)

    def next_tokens(self, tail: Sequence[int]) -> set[int]:
        """The next token of every name whose first MIN_STARTED or more tokens `tail` ends with."""
        out = set()
        for seq in self.sequences:
            for k in range(MIN_STARTED, len(seq)):
                if len(tail) >= k and tuple(tail[-k:]) == seq[:k]:
                    out.add(seq[k])
        return out


class GoesOn:
    """A llama-cpp-python logits processor for an answer whose first words are given ("In move
    1,"): its first MIN_AFTER_START tokens can be neither the end nor a line break. SmolLM2
    otherwise ended some narrations right after the given words (with a blank line, the prose
    stop), and its re-ask did the same."""

    def __init__(self, breaks: Iterable[int]) -> None:
        self.breaks = np.array(sorted(breaks), dtype=np.intc)
        self.start: int | None = None

    @classmethod
    def for_model(cls, llama: Any) -> GoesOn:
        return cls(vocabulary(llama).breaks)

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.start is None:
            self.start = len(input_ids)
        if len(input_ids) - self.start < MIN_AFTER_START and self.breaks.size:
            logits[self.breaks] = -np.inf
        return logits


@dataclass(frozen=True)
class Vocabulary:
    """What the processors need to know of a model's tokens."""

    run_on: frozenset[int]  # go on with a letter, no space, and make no form of a name ("ia")
    breaks: frozenset[int]  # end the answer or its paragraph (end of text, a line break)


_VOCABULARY: weakref.WeakKeyDictionary[Any, Vocabulary] = weakref.WeakKeyDictionary()


def vocabulary(llama: Any) -> Vocabulary:
    """Read once per loaded model (`llama_cpp.Llama`; 0.1 s for SmolLM2's 49k tokens)."""
    from wargraph.seats.names import FORM_ENDINGS

    if llama not in _VOCABULARY:
        run_on, breaks = set(), {int(llama.token_eos())}
        for t in range(llama.n_vocab()):
            text = llama.detokenize([t]).decode("utf-8", errors="ignore")
            if text[:1].isalpha() and text.casefold() not in FORM_ENDINGS:
                run_on.add(t)
            if "\n" in text:
                breaks.add(t)
        _VOCABULARY[llama] = Vocabulary(frozenset(run_on), frozenset(breaks))
    return _VOCABULARY[llama]
