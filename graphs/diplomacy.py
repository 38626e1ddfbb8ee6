"""Full-press Diplomacy on the `diplomacy` engine, composed from the phase library:

    negotiate (rounds of messages, all powers at once; the world's press rules) -> summarize
    (private diaries: summary, intent, goals, relationships; a yearly digest) -> order (one enum
    of legal orders per unit) -> secretary_validate (the engine checks the orders on a copy of the
    phase; refused orders go back with the reason, then the unit holds) -> adjudicate (the engine
    processes the phase), one engine phase per round until `diplomacy.max_year`; then analyze
    (the game's scores and measures).

The rules live in `wargraph/worlds/diplomacy/world.py` (the World) and `wargraph/worlds/diplomacy/`
(the engine); critical state analysis in `wargraph/worlds/diplomacy/replay.py`, whose hooks the
family's entry (`graphs/diplomacy_family.py`) declares.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from wargraph.graphkit import build_game
from wargraph.nodes.analyze import analyze
from wargraph.nodes.library import CARD_PHASES
from wargraph.scenario import ScenarioError, load_scenario
from wargraph.worlds.diplomacy.world import (  # noqa: F401  (the family's public names)
    GRAMMAR_TEXT_LIMIT,
    RELATIONS,
    SECRETARY,
    DiplomacyConfig,
    DiplomacyScenario,
    DiplomacyWorld,
    diary_text,
    digest_chars,
    game_id_for,
    power_context,
    relationships_of,
    run_folder,
    text_field,
    write_map,
)

DEFAULT_SCENARIO = "diplomacy"


def build(scenario: DiplomacyScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> StateGraph:
    sc = load_scenario(scenario)
    if not isinstance(sc, DiplomacyScenario):
        raise ScenarioError(
            f"family: the diplomacy graph needs family 'diplomacy' (got {sc.family!r})"
        )
    return build_game(
        dict(CARD_PHASES),
        roster=list(sc.roles),
        world=DiplomacyWorld(),
        scenario=sc,
        end={"analyze": analyze},
    )


builder = build()
graph = builder.compile()
