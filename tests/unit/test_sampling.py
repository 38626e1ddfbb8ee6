"""NameKeeper (wargraph.models.sampling): the sides' names spared the repeat penalty and a started name
nudged to its end, on hand-made token ids (the embedded model's run is in
tests/integration/test_embedded_model.py)."""

from __future__ import annotations

import numpy as np
import pytest

from wargraph.models.sampling import (
    COMPLETE_BIAS,
    END_BIAS,
    MIN_AFTER_START,
    GoesOn,
    NameKeeper,
    name_spellings,
)

AZ, UR, ISTAN, CRIM, SON, IA, LAND = 10, 11, 12, 20, 21, 22, 30
PROMPT = np.array([1, 2, 3, AZ, UR, ISTAN], dtype=np.intc)  # the prompt names Azuristan


def keeper(**kw) -> NameKeeper:
    return NameKeeper([(AZ, UR, ISTAN), (CRIM, SON, IA)], penalty=1.2, window=4, **kw)


def penalised(logits: np.ndarray, written: list[int], penalty: float = 1.2) -> np.ndarray:
    """What llama.cpp's repeat penalty does next (positive logits divided, others multiplied)."""
    out = logits.copy()
    for t in set(written):
        out[t] = out[t] / penalty if out[t] > 0 else out[t] * penalty
    return out


def test_a_name_token_the_answer_wrote_leaves_the_penalty_as_it_was():
    k = keeper(bias=0.0)
    logits = np.linspace(-3, 3, 40).astype(np.single)
    k(PROMPT, logits.copy())  # the first call: before the answer's first token
    written = [AZ, UR, ISTAN, 35]  # the answer wrote "Azuristan" and another word
    ids = np.concatenate([PROMPT, written]).astype(np.intc)
    out = penalised(k(ids, logits.copy()), written)
    for t in (UR, ISTAN):  # spared: the penalty took back what the keeper gave
        assert out[t] == pytest.approx(logits[t])
    # a name's first token keeps the penalty: spared, the model began the name in every clause
    assert out[AZ] == pytest.approx(penalised(logits, [AZ])[AZ])
    assert out[35] == pytest.approx(logits[35] / 1.2)  # other words keep the penalty
    assert out[CRIM] == logits[CRIM]  # not written: untouched


def test_only_what_the_answer_wrote_in_the_penalty_window_is_spared():
    k = keeper(bias=0.0)
    logits = np.full(40, 2.0, dtype=np.single)
    k(PROMPT, logits.copy())
    # the prompt's own "Azuristan" is not the answer's (the penalty does not count the prompt)
    assert np.array_equal(k(PROMPT, logits.copy()), logits)
    # "ur" written five tokens ago: out of the window of four
    ids = np.concatenate([PROMPT, [UR, 5, 6, 7, 8]]).astype(np.intc)
    assert np.array_equal(k(ids, logits.copy()), logits)


def test_a_started_name_is_nudged_to_its_end():
    k = keeper()
    logits = np.zeros(40, dtype=np.single)
    k(PROMPT, logits.copy())
    after_two = k(np.concatenate([PROMPT, [5, AZ, UR]]).astype(np.intc), logits.copy())
    assert after_two[ISTAN] == pytest.approx(COMPLETE_BIAS)
    assert after_two[LAND] == 0.0  # "Azurland" is not made impossible, only less likely
    after_one = k(np.concatenate([PROMPT, [5, 6, AZ]]).astype(np.intc), logits.copy())
    assert not after_one.any()  # " Az" alone may start Azerbaijan
    assert k.next_tokens([CRIM, SON]) == {IA} and k.next_tokens([SON, IA]) == set()


def test_a_name_is_tokenized_as_written_and_upper_case_with_and_without_a_space():
    assert name_spellings("Azuristan") == ["Azuristan", " Azuristan", "AZURISTAN", " AZURISTAN"]
    assert name_spellings("FRANCE") == ["FRANCE", " FRANCE"]


def test_a_whole_name_does_not_run_on_into_another_word():
    # "Azuristan" + "ia" made "Azuristania", and upper case "AZURISTANIAAZURISTANIA..."
    k = keeper(run_on=[IA, LAND])
    logits = np.zeros(40, dtype=np.single)
    k(PROMPT, logits.copy())
    after_name = k(np.concatenate([PROMPT, [5, AZ, UR, ISTAN]]).astype(np.intc), logits.copy())
    assert after_name[IA] == -END_BIAS and after_name[LAND] == -END_BIAS
    assert after_name[5] == 0.0  # a space, a full stop, a form's ending: as they were
    inside = k(np.concatenate([PROMPT, [5, CRIM, SON]]).astype(np.intc), logits.copy())
    assert inside[IA] == COMPLETE_BIAS  # "Crim", "son" + "ia" is the name's own end


def test_an_answer_goes_on_past_its_given_first_words():
    # SmolLM2 ended narrations right after "In move 1," (a blank line: the prose stop)
    EOS, NEWLINE = 2, 3
    goes_on = GoesOn([EOS, NEWLINE])
    logits = np.zeros(40, dtype=np.single)
    start = np.array([1, 5, 6], dtype=np.intc)  # the prompt with the given first words
    first = goes_on(start, logits.copy())
    assert first[EOS] == -np.inf and first[NEWLINE] == -np.inf and first[7] == 0.0
    later = np.concatenate([start, [7] * MIN_AFTER_START]).astype(np.intc)
    assert not goes_on(later, logits.copy()).any()  # a few words on, it may end
