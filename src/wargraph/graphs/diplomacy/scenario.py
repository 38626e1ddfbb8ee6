"""The Diplomacy scenario (its `diplomacy:` section, the seven powers as players) and the
engine game it opens (`NewGame`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wargraph.graphs.diplomacy.engine import POWERS, new_game
from wargraph.kernel.parts import Opening
from wargraph.kernel.scenario import MemoryPolicy, Role, Scenario

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

SECRETARY = "secretary"


class DiplomacyConfig(BaseModel):
    """The `diplomacy:` section of a scenario."""

    model_config = ConfigDict(extra="forbid")

    negotiation_rounds: int = Field(default=2, ge=0, le=10)
    """Rounds of messages before each movement phase (0: no press)."""
    press: Literal["full", "public", "none"] = "full"
    """full: public and private messages; public: to GLOBAL only; none: no messages."""
    max_messages: int = Field(default=2, ge=0, le=10)
    """Messages per power per negotiation round."""
    message_chars: int = Field(default=200, ge=20, le=2000)
    """Longest message, in characters (longer ones are cut)."""
    max_year: int = Field(default=1905, ge=1901, le=1940)
    """Last year played (its winter adjustments included)."""
    order_retries: int = Field(default=2, ge=0, le=5)
    """How often the secretary sends refused orders back before the unit holds."""
    orders: Literal["constrained", "free"] = "constrained"
    """constrained: a model picks each unit's order from its legal orders (an enum; an illegal
    order cannot be written). free: a model writes its orders as text, the engine checks them,
    refused ones go back with the reasons; the invalid-order and re-ask rates are measured
    (docs/free-orders.md). People and bots answer as in constrained mode either way."""
    diary_chars: int = Field(default=160, ge=40, le=2000)
    """Longest diary summary (intent and goals get half of it; the yearly digest up to double)."""
    instructions: dict[str, str] = Field(default_factory=dict)
    """Extra guidance for one power (e.g. a persuasion method), shown in its prompts as data."""
    diary: bool | Literal["with_orders"] = True
    """Write diary entries before orders (off: orders only, e.g. for quick benchmarks).
    with_orders: the diary entries and digests are asked in the same step as the orders, one
    model latency less per movement phase; the orders then read the diary as it stood before
    this phase (this phase's talks still in view, not the entry's intent, goals and
    relationships written after them). docs/performance.md."""
    nearest: int = Field(default=2, ge=0, le=10)
    """Nearest foreign units and unowned centres listed in each unit block."""
    game_id: str = ""
    """The engine's game id (default: derived from the title, so records are reproducible)."""
    maps: Literal["final", "all", "none"] = "final"
    """SVG maps written at the end of the game when the run has an output folder: the final
    position (final), every phase (all), or none. Never during play (a map costs more than a
    phase); `wargraph eval diplomacy` draws every phase of a record on request."""

    @property
    def public_only(self) -> bool:
        return self.press == "public"

    @property
    def talks(self) -> bool:
        return self.press != "none" and self.negotiation_rounds > 0 and self.max_messages > 0


class DiplomacyScenario(Scenario):
    """Seven powers as `players` (AUSTRIA ... TURKEY); per-power model and prompt variant are the
    role's `model` and `prompt_variant`; the engine is the secretary (never asked)."""

    family: str = "diplomacy"
    rounds: int = Field(default=200, ge=1, le=200)  # engine phases at most; max_year stops first
    # The world's view is itself bounded (a yearly digest replaces old diary entries; only the
    # last phase's results and this phase's talks), so it reads from every visible event.
    memory: MemoryPolicy = "full"
    control: Role = Field(default_factory=lambda: Role(name=SECRETARY))
    diplomacy: DiplomacyConfig = Field(default_factory=DiplomacyConfig)

    @model_validator(mode="before")
    @classmethod
    def _upper_powers(cls, data: Any) -> Any:
        """Power names are the engine's (upper case); `france` in a file means FRANCE."""
        if isinstance(data, dict) and isinstance(data.get("players"), dict):
            data = {**data, "players": {str(k).upper(): v for k, v in data["players"].items()}}
        return data

    @model_validator(mode="after")
    def _seven_powers(self) -> DiplomacyScenario:
        have, want = set(self.players), set(POWERS)
        if have != want:
            missing, extra = sorted(want - have), sorted(have - want)
            detail = "; ".join(
                part
                for part in (
                    f"missing {missing}" if missing else "",
                    f"unknown {extra}" if extra else "",
                )
                if part
            )
            raise ValueError(f"players: Diplomacy seats exactly the seven powers ({detail})")
        unknown = sorted(set(self.diplomacy.instructions) - want)
        if unknown:
            raise ValueError(f"diplomacy.instructions: unknown power(s) {unknown}")
        if self.teams:
            raise ValueError("teams: Diplomacy has no teams (each power is one seat)")
        return self

    @property
    def powers(self) -> list[str]:
        return list(POWERS)


def diplomacy_scenario(table: Table) -> DiplomacyScenario:
    """The table's scenario, which the Diplomacy world's parts need to be a Diplomacy one."""
    return table.scenario_as(DiplomacyScenario)


def game_id_for(scenario: DiplomacyScenario) -> str:
    if scenario.diplomacy.game_id:
        return scenario.diplomacy.game_id
    return "wargraph-" + hashlib.sha256(scenario.title.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class NewGame(Opening):
    """A new engine game, its id from the scenario (so records are reproducible)."""

    def open(self, table: Table) -> dict[str, Any]:
        return {"world": {"diplomacy": new_game(game_id=game_id_for(diplomacy_scenario(table)))}}
