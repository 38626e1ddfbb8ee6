"""The WarAgent family: historical country simulations (1914, 1939, the Warring States) where every
country acts at once on its own beliefs and a secretary holds each proposal to the rules. The
rules are pure game logic on JSON-friendly pydantic models, no LangGraph: `actions` (the
vocabulary, the Action and its flat schema), `board` (the board and the stick, applying an
action, who observes it), `secretary` (validate, normalise, amend), `rounds` (the Situation: true board, beliefs, history; the
round, the stopping rule), `scripted` (a seeded always-valid player), `prompt_text` (the board
and the action list as prompt text), `anonymise` (real <-> neutral names) and `config` (the
scenario's `waragent:` section). The game on the graph is not imported here, so the rules load
without the framework: `scenario` (the scenario and its opening), the World's parts `countries`
(cast), `orders`, `secretariat` (secretary) and `resolution`, and `game`, which composes them."""

from wargraph.graphs.waragent.actions import (
    ACTION_HELP,
    ACTION_TYPES,
    DEFAULT_VISIBILITY,
    NO_RELATION,
    NO_TARGET,
    PACT_KINDS,
    RELATIONS,
    UNTARGETED,
    Action,
    Visibility,
    inline_refs,
    parse_actions,
    proposal_model,
    split_action,
)
from wargraph.graphs.waragent.anonymise import Anonymiser
from wargraph.graphs.waragent.board import (
    Board,
    Request,
    apply_action,
    empty_board,
    observers,
    pair_key,
)
from wargraph.graphs.waragent.config import (
    PROFILE_SECTIONS,
    AgentSetting,
    GroundTruth,
    SecretaryConfig,
    WarAgentConfig,
    scale_phrase,
)
from wargraph.graphs.waragent.prompt_text import action_menu, describe_board
from wargraph.graphs.waragent.rounds import RoundLog, Situation, apply_round, new_world, should_stop
from wargraph.graphs.waragent.scripted import scripted_proposal, valid_options
from wargraph.graphs.waragent.secretary import AllyAtWarPolicy, Verdict, amend, normalise, validate

__all__ = [
    "ACTION_HELP",
    "ACTION_TYPES",
    "DEFAULT_VISIBILITY",
    "NO_RELATION",
    "NO_TARGET",
    "PACT_KINDS",
    "PROFILE_SECTIONS",
    "RELATIONS",
    "UNTARGETED",
    "Action",
    "AgentSetting",
    "AllyAtWarPolicy",
    "Anonymiser",
    "Board",
    "GroundTruth",
    "Request",
    "RoundLog",
    "SecretaryConfig",
    "Verdict",
    "Visibility",
    "WarAgentConfig",
    "Situation",
    "action_menu",
    "amend",
    "apply_action",
    "apply_round",
    "describe_board",
    "empty_board",
    "inline_refs",
    "new_world",
    "normalise",
    "observers",
    "pair_key",
    "parse_actions",
    "proposal_model",
    "scale_phrase",
    "scripted_proposal",
    "should_stop",
    "split_action",
    "valid_options",
    "validate",
]
