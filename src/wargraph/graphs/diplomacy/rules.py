"""The Diplomacy world: a thin, pure-Python boundary over the PyPI ``diplomacy`` engine (1.1.2),
and the World that plays full-press Diplomacy on it (`world.DIPLOMACY`).

Why this shape:

* A ``diplomacy.Game`` cannot be pickled and deep-copying one costs ~0.5 s, so graph state keeps
  the engine's *saved-game dict* (``to_saved_game_format``), which is plain JSON. Every function
  that needs the engine takes either that dict or a ``Game`` and loads a fresh ``Game`` from the
  dict when needed (a few ms); nothing here mutates a caller's dict (`engine`).
* The engine drops invalid orders silently and defaults missing ones. wargraph wants orders that
  are legal *by construction*: `orders` lists every legal order per unit, turns that into a flat
  enum schema (llama.cpp grammars need flat schemas), turns a schema answer into the exact order
  list, and is the secretary: it submits orders to a copy of the phase and returns the engine's
  reason for each rejection.
* What a power sees of the map (`geography`), press rules the engine does not enforce locally
  (`press`), SVG maps on request (`render`), critical state analysis for replays (`replay`).

This package's top level is the engine boundary (no LangGraph). The game is one module per part
of its World, assembled in `world`: `scenario` (the `diplomacy:` section, the new game),
`powers` (the cast), `negotiation`, `diary`, `unit_orders`, `secretary`, `adjudication`,
`debrief`; beside them `schemas` (the answers), `view` (a power's context within its token
`budget`), `phase` (the engine phase a step reads) and `measures` (a finished game's).
"""

from wargraph.graphs.diplomacy.engine import (
    BUILD_SLOT,
    DEFAULT_RULES,
    DISBAND_SLOT,
    GLOBAL,
    POWERS,
    WAIVE,
    PhaseInfo,
    Position,
    adjudicate,
    current,
    load,
    new_game,
    order_type,
    outcome_of,
    phase_info,
    position,
    save,
)
from wargraph.graphs.diplomacy.geography import render_board, render_unit_block, unit_blocks
from wargraph.graphs.diplomacy.orders import (
    check_answer,
    check_orders,
    finalize_orders,
    hold_orders,
    legal_orders,
    orders_json_schema,
)
from wargraph.graphs.diplomacy.press import add_messages, check_message
from wargraph.graphs.diplomacy.render import render_svg, write_maps

__all__ = [
    "BUILD_SLOT",
    "DEFAULT_RULES",
    "DISBAND_SLOT",
    "GLOBAL",
    "POWERS",
    "WAIVE",
    "PhaseInfo",
    "Position",
    "add_messages",
    "adjudicate",
    "check_answer",
    "check_message",
    "check_orders",
    "current",
    "finalize_orders",
    "hold_orders",
    "legal_orders",
    "load",
    "new_game",
    "order_type",
    "orders_json_schema",
    "outcome_of",
    "phase_info",
    "position",
    "render_board",
    "render_svg",
    "render_unit_block",
    "save",
    "unit_blocks",
    "write_maps",
]
