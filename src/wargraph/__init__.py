"""wargraph: wargames and negotiation games played by language models and people, on LangGraph.

What a game author uses, importable from here (each name is loaded when first used, so
`import wargraph` stays cheap):

    from wargraph import Family, Option, Scenario, World, Orders, Question, build_game

The layout: `kernel` (state, context, scenario schema, views, table, World and parts, family
registry), `nodes` (the phase library), `models`, `seats`, `store`, `runs`, `view`, `server`,
`evals`, and the design's data and game folders: `graphs/<family>` (one package per built-in
family), `prompts/<family>` (its templates) and `scenarios/<family>` (its YAML).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "Section": "wargraph.kernel.scenario",
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
    "served_graph": "wargraph.server.factory",
    "quote": "wargraph.kernel.views",
    "register_schema": "wargraph.seats.schemas",
    "load_prompt": "wargraph.prompts",
    "render_prompt": "wargraph.prompts",
    # a game's rules: the World and its parts, questions and checks
    **dict.fromkeys(
        [
            "ADJUDICATE",
            "ALLOCATION",
            "FALLBACK_PLAN",
            "NARRATIVE",
            "NEGOTIATE",
            "ORDER",
            "SECRETARY",
            "SUMMARIZE",
            "Allocate",
            "Allocation",
            "BudgetCheck",
            "Cast",
            "Check",
            "Debrief",
            "Diary",
            "FinalScore",
            "Keys",
            "Narration",
            "Opening",
            "Orders",
            "Outcome",
            "Press",
            "Question",
            "Replies",
            "Resolution",
            "Result",
            "Rules",
            "ScoreCast",
            "Secretary",
            "Terms",
            "World",
            "add_points",
            "allocation_question",
            "allocation_schema",
            "check_allocation",
            "contest",
            "even_split",
            "in_turn",
            "last_allocations",
            "leaders",
            "played",
            "render_allocation",
            "render_contest",
            "scale_down",
            "score_measures",
            "scores",
            "side_name",
            "spread",
            "standing",
        ],
        "wargraph.worlds",
    ),
}
__all__ = [
    "add_points",
    "ADJUDICATE",
    "Allocate",
    "ALLOCATION",
    "Allocation",
    "allocation_question",
    "allocation_schema",
    "Bot",
    "BudgetCheck",
    "build_game",
    "Cast",
    "Check",
    "check_allocation",
    "contest",
    "Debrief",
    "Diary",
    "even_split",
    "in_turn",
    "Event",
    "EVERYONE",
    "FALLBACK_PLAN",
    "Family",
    "FamilyError",
    "FinalScore",
    "GameContext",
    "GameGraph",
    "Keys",
    "last_allocations",
    "leaders",
    "played",
    "load_prompt",
    "load_scenario",
    "Narration",
    "NARRATIVE",
    "NEGOTIATE",
    "Opening",
    "Option",
    "ORDER",
    "Orders",
    "Outcome",
    "Press",
    "Question",
    "Replies",
    "quote",
    "register_schema",
    "render_allocation",
    "render_contest",
    "render_prompt",
    "Resolution",
    "Result",
    "round_record",
    "RoundRecord",
    "Rules",
    "scale_down",
    "Scenario",
    "ScenarioError",
    "score_measures",
    "ScoreCast",
    "scores",
    "served_graph",
    "SECRETARY",
    "Secretary",
    "Section",
    "side_name",
    "spread",
    "standing",
    "SUMMARIZE",
    "Table",
    "Terms",
    "World",
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
    from wargraph.kernel.graphkit import GameGraph, build_game
    from wargraph.kernel.record import RoundRecord, round_record
    from wargraph.kernel.scenario import Scenario, ScenarioError, Section, load_scenario
    from wargraph.kernel.state import EVERYONE, Event
    from wargraph.kernel.table import Table
    from wargraph.kernel.views import quote
    from wargraph.prompts import load_prompt, render_prompt
    from wargraph.seats.schemas import register_schema
    from wargraph.server.factory import served_graph
    from wargraph.worlds import (
        ADJUDICATE,
        ALLOCATION,
        FALLBACK_PLAN,
        NARRATIVE,
        NEGOTIATE,
        ORDER,
        SECRETARY,
        SUMMARIZE,
        Allocate,
        Allocation,
        BudgetCheck,
        Cast,
        Check,
        Debrief,
        Diary,
        FinalScore,
        Keys,
        Narration,
        Opening,
        Orders,
        Outcome,
        Press,
        Question,
        Replies,
        Resolution,
        Result,
        Rules,
        ScoreCast,
        Secretary,
        Terms,
        World,
        add_points,
        allocation_question,
        allocation_schema,
        check_allocation,
        contest,
        even_split,
        in_turn,
        last_allocations,
        leaders,
        played,
        render_allocation,
        render_contest,
        scale_down,
        score_measures,
        scores,
        side_name,
        spread,
        standing,
    )
