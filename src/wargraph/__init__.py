"""wargraph: wargames and negotiation games played by language models and people, on LangGraph.

What a game author uses, in two modules (each name is loaded when first used, so `import
wargraph` stays cheap):

    from wargraph import Family, Scenario, World, Question, Table, build_game   # a family
    from wargraph.worlds import Orders, Press, Diary, Secretary, Resolution       # its rules

`wargraph` holds a family's declaration, its scenario, its graph and what a question is built
from; `wargraph.worlds` holds the parts a World is made of (cast, opening, press, diary, orders,
secretary, resolution, debrief), the scored and allocation games' pieces and the phase names.

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
    # a family and the command line
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
    "RoundRecord": "wargraph.kernel.record",
    "round_record": "wargraph.kernel.record",
    # a game's rules and its questions (the parts: wargraph.worlds)
    "World": "wargraph.kernel.world",
    "Question": "wargraph.kernel.question",
    "Check": "wargraph.kernel.question",
    "Table": "wargraph.kernel.table",
    "quote": "wargraph.kernel.views",
    "register_schema": "wargraph.seats.schemas",
    "load_prompt": "wargraph.prompts",
    "render_prompt": "wargraph.prompts",
    # composing and serving a game
    "GameGraph": "wargraph.kernel.graphkit",
    "build_game": "wargraph.kernel.graphkit",
    "served_graph": "wargraph.server.factory",
}
__all__ = [
    "Bot",
    "build_game",
    "Check",
    "Event",
    "EVERYONE",
    "Family",
    "FamilyError",
    "GameContext",
    "GameGraph",
    "load_prompt",
    "load_scenario",
    "Option",
    "Question",
    "quote",
    "register_schema",
    "render_prompt",
    "round_record",
    "RoundRecord",
    "Scenario",
    "ScenarioError",
    "Section",
    "served_graph",
    "Table",
    "World",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        hint = ""
        if name in _worlds():
            hint = f" (a World's part: from wargraph.worlds import {name})"
        raise AttributeError(f"module 'wargraph' has no attribute {name!r}{hint}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _worlds() -> list[str]:
    from wargraph import worlds

    return list(worlds.__all__)


if TYPE_CHECKING:
    from wargraph.kernel.context import GameContext
    from wargraph.kernel.families import Bot, Family, FamilyError, Option
    from wargraph.kernel.graphkit import GameGraph, build_game
    from wargraph.kernel.question import Check, Question
    from wargraph.kernel.record import RoundRecord, round_record
    from wargraph.kernel.scenario import Scenario, ScenarioError, Section, load_scenario
    from wargraph.kernel.state import EVERYONE, Event
    from wargraph.kernel.table import Table
    from wargraph.kernel.views import quote
    from wargraph.kernel.world import World
    from wargraph.prompts import load_prompt, render_prompt
    from wargraph.seats.schemas import register_schema
    from wargraph.server.factory import served_graph
