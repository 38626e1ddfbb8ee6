"""The phase library by name: every phase a game may mount, and the five card phases in the
order most games play a round (negotiate -> summarize -> order -> secretary_validate ->
adjudicate)."""

from __future__ import annotations

from wargraph.kernel.graphkit import Phase
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.analyze import analyze
from wargraph.nodes.inject import inject
from wargraph.nodes.negotiate import negotiate
from wargraph.nodes.order import order
from wargraph.nodes.secretary_validate import secretary_validate
from wargraph.nodes.summarize import summarize

CARD_PHASES: dict[str, Phase] = {
    "negotiate": negotiate,
    "summarize": summarize,
    "order": order,
    "secretary_validate": secretary_validate,
    "adjudicate": adjudicate,
}

LIBRARY: dict[str, Phase] = {"inject": inject, **CARD_PHASES, "analyze": analyze}
