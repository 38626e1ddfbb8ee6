"""wargraph: wargames and negotiation games played by language models and people, on LangGraph.

What a game author uses, importable from here (each name is loaded when first used, so
`import wargraph` stays cheap):

    from wargraph import Family, Option, Scenario, World, Orders, Question, build_game

The layout: `kernel` (state, context, scenario schema, views, table, World and parts, family
registry), `nodes` (the phase library), `models`, `seats`, `store`, `runs`, `view`, `server`,
`evals`, and `games/<family>` (one package per built-in family, shaped like a plug-in).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wargraph import _moved

_moved.install()  # old import paths keep working for one release

# public name -> module that defines it
_PUBLIC = {
    # families and the command line
    "Bot": "wargraph.kernel.families",
    "Family": "wargraph.kernel.families",
    "FamilyError": "wargraph.kernel.families",
    "Option": "wargraph.kernel.families",
    # scenarios, state and context
    "Scenario": "wargraph.kernel.scenario",
    "ScenarioError": "wargraph.kernel.scenario",
    "load_scenario": "wargraph.kernel.scenario",
    "EVERYONE": "wargraph.kernel.state",
    "Event": "wargraph.kernel.state",
    "GameContext": "wargraph.kernel.context",
    "Table": "wargraph.kernel.table",
    "RoundRecord": "wargraph.kernel.record",
    "round_record": "wargraph.kernel.record",
    # composing a game
    "GameGraph": "wargraph.kernel.graphkit",
    "build_game": "wargraph.kernel.graphkit",
    "default_graphs": "wargraph.kernel.graphkit",
    "quote": "wargraph.kernel.views",
    "register_schema": "wargraph.seats.schemas",
    "load_prompt": "wargraph.prompts",
    "render_prompt": "wargraph.prompts",
    # a game's rules: the World and its parts, questions and checks
    **dict.fromkeys(
        [
            "ADJUDICATE",
            "FALLBACK_PLAN",
            "NARRATIVE",
            "NEGOTIATE",
            "ORDER",
            "SECRETARY",
            "SUMMARIZE",
            "Cast",
            "Check",
            "Debrief",
            "Diary",
            "Narration",
            "Opening",
            "Orders",
            "Press",
            "Question",
            "Resolution",
            "Secretary",
            "World",
            "side_name",
        ],
        "wargraph.worlds",
    ),
}
__all__ = [
    "Bot",
    "ADJUDICATE",
    "Cast",
    "Check",
    "Debrief",
    "Diary",
    "EVERYONE",
    "Event",
    "FALLBACK_PLAN",
    "Family",
    "FamilyError",
    "GameContext",
    "GameGraph",
    "NARRATIVE",
    "NEGOTIATE",
    "Narration",
    "ORDER",
    "Opening",
    "Option",
    "Orders",
    "Press",
    "Question",
    "Resolution",
    "RoundRecord",
    "SECRETARY",
    "SUMMARIZE",
    "Scenario",
    "ScenarioError",
    "Secretary",
    "Table",
    "World",
    "build_game",
    "default_graphs",
    "load_prompt",
    "load_scenario",
    "register_schema",
    "quote",
    "render_prompt",
    "round_record",
    "side_name",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'wargraph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from wargraph.kernel.context import GameContext
    from wargraph.kernel.families import Bot, Family, FamilyError, Option
    from wargraph.kernel.graphkit import GameGraph, build_game, default_graphs
    from wargraph.kernel.record import RoundRecord, round_record
    from wargraph.kernel.scenario import Scenario, ScenarioError, load_scenario
    from wargraph.kernel.state import EVERYONE, Event
    from wargraph.kernel.table import Table
    from wargraph.kernel.views import quote
    from wargraph.prompts import load_prompt, render_prompt
    from wargraph.seats.schemas import register_schema
    from wargraph.worlds import (
        ADJUDICATE,
        FALLBACK_PLAN,
        NARRATIVE,
        NEGOTIATE,
        ORDER,
        SECRETARY,
        SUMMARIZE,
        Cast,
        Check,
        Debrief,
        Diary,
        Narration,
        Opening,
        Orders,
        Press,
        Question,
        Resolution,
        Secretary,
        World,
        side_name,
    )
