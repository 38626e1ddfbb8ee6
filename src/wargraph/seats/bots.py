"""Scripted bots of known strength: deciders that play a simple strategy for one seat.

A bot is named by the model reference `bot:<name>` (per seat with `--role-model ROLE=bot:greedy`
or a tournament entrant). It answers the asks it has a strategy for (a Diplomacy power's orders,
a Blotto allocation) from the public facts the world puts on the ask (`facts`, given only to
bot seats and never shown to a model); any other ask (messages, diaries) it answers as the
seeded scripted decider does. An answer the schema refuses becomes the ask's fallback.

A strategy is a function `(ask, rng) -> answer | None` (None: no strategy for this ask); the
registry names where each lives so that nothing is imported before it is used."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:  # deciders imports this module
    from wargraph.seats.deciders import Ask, Decision

PREFIX = "bot:"

# name -> "module:function"; a bot plays the asks of the family its strategy knows
BOTS: dict[str, str] = {
    "greedy": "wargraph.games.diplomacy.bots:greedy",
    "hold": "wargraph.games.diplomacy.bots:hold",
    "random_legal": "wargraph.games.diplomacy.bots:random_legal",
    "fixed": "wargraph.games.blotto.bots:fixed_split",
    "even": "wargraph.games.blotto.bots:even",
    "best_response": "wargraph.games.blotto.bots:best_response",
}

Strategy = Callable[[Mapping[str, Any], random.Random], dict[str, Any] | None]


def is_bot(model: Any) -> bool:
    return isinstance(model, str) and model.startswith(PREFIX)


def check_bot(name: str) -> str:
    """The bot's name, or ValueError listing the known bots."""
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r} (bots: {', '.join(sorted(BOTS))})")
    return name


def family_of(name: str) -> str:
    """The game family a bot's strategy plays (its module's: diplomacy or blotto)."""
    module = BOTS[check_bot(name)].partition(":")[0]
    return "blotto" if module.endswith("blotto_bots") else module.split(".")[2]


def strategy(name: str) -> Strategy:
    module, _, attr = BOTS[check_bot(name)].partition(":")
    return getattr(importlib.import_module(module), attr)


class BotDecider:
    """Plays `strategy(name)` for a seat; seeded like the scripted decider."""

    def __init__(self, name: str, seed: int = 0) -> None:
        self.name, self.seed = name, seed

    def decide(self, ask: Ask, schema: type[BaseModel], *, memory: str = "") -> Decision:
        from wargraph.seats.deciders import ScriptedDecider, stable_seed

        rng = random.Random(stable_seed(self.seed, ask["id"], self.name))
        value = strategy(self.name)(ask, rng)
        if value is None:
            return ScriptedDecider(self.seed).decide(ask, schema, memory=memory)
        try:
            return {"value": schema.model_validate(value).model_dump(), "source": "scripted"}
        except ValidationError as err:
            return {"value": dict(ask["fallback"]), "source": "fallback", "note": str(err)[:300]}
