"""Scripted bots of known strength: deciders that play a simple strategy for one seat.

A bot is named by the model reference `bot:<name>` (per seat with `--role-model ROLE=bot:greedy`
or a tournament entrant). It answers the asks it has a strategy for (a Diplomacy power's orders,
a Blotto allocation) from the public facts the world puts on the ask (`facts`, given only to
bot seats and never shown to a model); any other ask (messages, diaries) it answers as the
seeded scripted decider does. An answer the schema refuses becomes the ask's fallback.

A strategy is a function `(ask, rng) -> answer | None` (None: no strategy for this ask). Each
family declares its bots (`Family.bots`, a `wargraph.Bot` each); nothing is imported before a
bot plays."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:  # deciders imports this module
    from wargraph.seats.asks import Ask, Decision

PREFIX = "bot:"

Strategy = Callable[[Mapping[str, Any], random.Random], dict[str, Any] | None]


def is_bot(model: Any) -> bool:
    return isinstance(model, str) and model.startswith(PREFIX)


def known() -> dict[str, str]:
    """Every bot the families declare (`Family.bots`): name -> the family it plays."""
    from wargraph.kernel.families import bots

    return {name: family for name, (family, _) in bots().items()}


def _found(name: str) -> tuple[str, Any]:
    """(family, bot) of that name, a built-in's without importing any plug-in; ValueError
    listing the known bots."""
    from wargraph.kernel.families import find_bot

    found = find_bot(name)
    if found is None:
        raise ValueError(f"unknown bot {name!r} (bots: {', '.join(sorted(known()))})")
    return found


def check_bot(name: str) -> str:
    """The bot's name, or ValueError listing the known bots."""
    _found(name)
    return name


def family_of(name: str) -> str:
    """The game family whose seats a bot plays."""
    return _found(name)[0]


def strategy(name: str) -> Strategy:
    from wargraph.kernel.families import bot_strategy

    return bot_strategy(*_found(name))


class BotDecider:
    """Plays `strategy(name)` for a seat; seeded like the scripted decider."""

    def __init__(self, name: str, seed: int = 0) -> None:
        self.name, self.seed = name, seed

    def decide(self, ask: Ask, schema: type[BaseModel], *, memory: str = "") -> Decision:
        from wargraph.seats.scripted import ScriptedDecider, stable_seed

        rng = random.Random(stable_seed(self.seed, ask["id"], self.name))
        value = strategy(self.name)(ask, rng)
        if value is None:
            return ScriptedDecider(self.seed).decide(ask, schema, memory=memory)
        try:
            return {"value": schema.model_validate(value).model_dump(), "source": "scripted"}
        except ValidationError as err:
            return {"value": dict(ask["fallback"]), "source": "fallback", "note": str(err)[:300]}
