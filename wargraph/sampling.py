"""Local models (llama.cpp) keep the sides' names whole: a logits processor for the sampler.

llama.cpp's repeat penalty (wargraph uses 1.15 against SmolLM2's loops) also penalises the tokens
of a side's name the answer already wrote, so the second "Azuristan" of an answer comes out
"Azurland" or "Azurlandian". Measured on SmolLM2-135M, the crisis's 21 prose prompts sampled
twice each: 25 of 42 answers misspelt a side's name with the penalty on every token, 9 of 42
with the names' tokens spared (README, "What the embedded model can and cannot do").

`NameKeeper` runs first in llama-cpp-python's sampler chain (before the penalties) and
- spares the names' tokens from the repeat penalty: a name token the answer wrote within the
  penalty's window gets the inverse of the penalty, which the penalty then takes back;
- nudges a name the answer has started to its end: after two or more tokens of a name's
  spelling (" Az", "ur"), the name's next token ("istan") gets COMPLETE_BIAS more logit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

COMPLETE_BIAS = 4.0  # logits added to a started name's next token
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
    ) -> None:
        self.sequences = [tuple(s) for s in sequences if s]
        self.tokens = np.array(sorted({t for s in self.sequences for t in s}), dtype=np.intc)
        self.penalty = penalty
        self.window = window
        self.bias = bias
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
        return cls(sequences, penalty=penalty, window=window)

    def __call__(self, input_ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        if self.start is None:
            self.start = len(input_ids)  # the first call comes before the first answer token
        written = input_ids[self.start :][-self.window :]
        if self.penalty != 1.0 and len(written) and self.tokens.size:
            seen = self.tokens[np.isin(self.tokens, written)]
            if seen.size:  # the penalty divides a positive logit and multiplies a negative one
                x = logits[seen]
                logits[seen] = np.where(x > 0, x * self.penalty, x / self.penalty)
        if self.bias:
            tail = tuple(int(t) for t in input_ids[-8:])
            for nxt in self.next_tokens(tail):
                logits[nxt] += self.bias
        return logits

    def next_tokens(self, tail: Sequence[int]) -> set[int]:
        """The next token of every name whose first MIN_STARTED or more tokens `tail` ends with."""
        out = set()
        for seq in self.sequences:
            for k in range(MIN_STARTED, len(seq)):
                if len(tail) >= k and tuple(tail[-k:]) == seq[:k]:
                    out.add(seq[k])
        return out
