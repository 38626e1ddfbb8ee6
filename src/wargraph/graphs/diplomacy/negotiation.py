"""Negotiation under the scenario's press rules: rounds of messages before each movement phase,
to GLOBAL or (full press) one power, each message checked by `press.check_message` and the
delivered ones kept in the engine's saved game too."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.graphs.diplomacy.engine import GLOBAL
from wargraph.graphs.diplomacy.phase import info_of, saved_of
from wargraph.graphs.diplomacy.press import add_messages, check_message
from wargraph.graphs.diplomacy.scenario import diplomacy_scenario
from wargraph.graphs.diplomacy.view import NOTE_SLOT
from wargraph.kernel.parts import Press
from wargraph.kernel.parts.press import STAY_SILENT
from wargraph.kernel.question import Question
from wargraph.prompts import render_prompt
from wargraph.seats.scripted import stable_seed

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


def message_chars(table: Table, power: str) -> int:
    """The longest message a power may send: the scenario's, raised by its seat's model profile
    (capable models write press of several sentences; wargraph.models.profiles)."""
    return table.profile(power).message_limit(diplomacy_scenario(table).diplomacy.message_chars)


def schema_order(recipients: list[str]) -> list[str]:
    """The recipients as the answer schema lists them: GLOBAL first, then the powers in
    alphabetical order, however the prompt lists them (one answer model per set)."""
    return [r for r in recipients if r == GLOBAL] + sorted(r for r in recipients if r != GLOBAL)


@dataclass(frozen=True)
class Negotiation(Press):
    """`diplomacy.negotiation_rounds` exchanges of at most `max_messages` per power."""

    everyone: str = GLOBAL

    def exchanges(self, table: Table) -> int:
        return diplomacy_scenario(table).diplomacy.negotiation_rounds

    def limit(self, table: Table) -> int:
        return diplomacy_scenario(table).diplomacy.max_messages

    def recipients(self, table: Table, speaker: str, speakers: list[str]) -> list[str]:
        """GLOBAL, then the other powers in an order drawn for this seat and phase: listed
        alphabetically, AUSTRIA came first for everyone, and small models wrote to the first
        power listed (all six others opened with AUSTRIA; two powers received nothing all game).
        Drawn from the game's id, seat and phase, so a game replays the same."""
        if diplomacy_scenario(table).diplomacy.public_only:
            return [GLOBAL]
        others = [o for o in speakers if o != speaker]
        seed = stable_seed(
            "recipients", saved_of(table).get("id", ""), speaker, info_of(table).name
        )
        random.Random(seed).shuffle(others)
        return [GLOBAL, *others]

    def question(
        self, table: Table, speaker: str, exchange: int, recipients: list[str]
    ) -> Question:
        cfg = diplomacy_scenario(table).diplomacy
        others = [r for r in recipients if r != GLOBAL]
        chars = message_chars(table, speaker)
        return Question(
            task=self.task,
            question=render_prompt(
                "diplomacy_negotiate_question",
                table.variant(speaker),
                power=speaker,
                phase=info_of(table).name,
                round=exchange,
                rounds=cfg.negotiation_rounds,
                limit=cfg.max_messages,
                chars=chars,
                recipients=", ".join(recipients),
                private=""
                if cfg.public_only
                else f" to one power privately ({', '.join(others)}) or",
            ),
            schema="diplomacy_messages",
            schema_args={
                # the schema's choices in one order: the prompt above lists them in this seat's
                # order for the phase, and a schema per order was a new answer model per seat
                # and phase (the order of an enum decides nothing a model is held to)
                "recipients": schema_order(recipients),
                "limit": cfg.max_messages,
                "chars": chars,
                **({"people": True} if table.seat(speaker).get("kind") == "human" else {}),
            },
            fallback={"action": STAY_SILENT, "messages": []},
            scripted={"action": "send"},  # scripted games talk as before (benchmarks compare)
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=cfg.max_messages * (chars + 16) + 16,
        )

    def address(self, table: Table, to: str) -> str:
        return to.strip().upper()

    def refusal(self, table: Table, sender: str, to: str, text: str) -> str | None:
        cfg = diplomacy_scenario(table).diplomacy
        alive = list(info_of(table).powers_alive)
        return check_message(
            sender, to, text, press=cfg.press, max_len=message_chars(table, sender), powers=alive
        )

    def data(self, table: Table, exchange: int) -> dict[str, Any]:
        return {"phase": info_of(table).name, "negotiation_round": exchange}

    def delivered(self, table: Table, sent: list[tuple[str, str, str]]) -> dict[str, Any]:
        # the engine's saved game keeps the press too (record.json holds it)
        return {"diplomacy": add_messages(saved_of(table), sent)} if sent else {}
