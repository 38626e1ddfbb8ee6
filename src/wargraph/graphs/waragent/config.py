"""The scenario's `waragent:` section: triggers, ground truth, visibility, limits, the
secretary, the opening board and anonymisation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from wargraph.graphs.waragent.actions import ACTION_TYPES, DEFAULT_VISIBILITY, Visibility
from wargraph.graphs.waragent.anonymise import Anonymiser
from wargraph.graphs.waragent.board import Board, empty_board
from wargraph.graphs.waragent.secretary import AllyAtWarPolicy

PROFILE_SECTIONS: tuple[str, ...] = (
    "leadership",
    "military_capability",
    "resources",
    "historical_background",
    "key_policy",
    "public_morale",
)
AgentSetting = Literal["default", "aggressive", "conservative"]


class GroundTruth(BaseModel):
    """What really happened, for the scores (names as in `players`)."""

    model_config = ConfigDict(extra="forbid")

    # Each entry lists countries that were allied with each other (two or more); blocs are
    # the connected components of these links.
    alliances: list[list[str]] = Field(default_factory=list)
    # Directed (declarer, target) pairs declared in the window (wars already in progress at
    # the start belong to `initial_wars`); null means "no war score" for this scenario.
    wars: list[tuple[str, str]] | None = Field(default_factory=list)
    # Countries that mobilized in the window (not those mobilized at the start).
    mobilized: list[str] = Field(default_factory=list)
    # Countries whose part the record leaves open: every score leaves them out.
    uncertain: list[str] = Field(default_factory=list)
    window: str = ""
    note: str = ""

    @field_validator("alliances")
    @classmethod
    def _groups(cls, v: list[list[str]]) -> list[list[str]]:
        for g in v:
            if len(g) < 2:
                raise ValueError(f"an alliance needs two or more countries (got {g})")
        return v

    def countries(self) -> set[str]:
        named = {c for g in self.alliances for c in g} | set(self.mobilized) | set(self.uncertain)
        return named | {c for pair in self.wars or [] for c in pair}


class SecretaryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # "code": the rules only; "ai"/"human": the rules first, then a decider may veto too.
    kind: Literal["code", "ai", "human"] = "code"
    max_revisions: int = Field(default=4, ge=0, le=20)
    ally_at_war: AllyAtWarPolicy = "waive"
    model: str | None = None


class WarAgentConfig(BaseModel):
    """The `waragent:` section of a scenario file."""

    model_config = ConfigDict(extra="forbid")

    trigger: str = "historical"
    triggers: dict[str, str] = Field(min_length=1)
    great_powers: list[str] = Field(default_factory=list)
    ground_truth: GroundTruth = Field(default_factory=GroundTruth)
    visibility: dict[str, Visibility] = Field(default_factory=dict)
    max_actions: int = Field(default=3, ge=1, le=10)
    message_chars: int = Field(default=300, ge=20, le=4000)
    stop_unchanged: int = Field(default=3, ge=0, le=100)  # K; 0 disables
    setting: AgentSetting = "default"
    # "all": every country reads every profile (long prompts); "summary": its own profile and
    # the others' key policy (the default: small models read ~1/4 as much); "own": its own only.
    profiles_shown: Literal["all", "summary", "own"] = "summary"
    # Profile overrides: a factor on a country's military ("Russia: 3" = three times).
    military_scale: dict[str, float] = Field(default_factory=dict)
    secretary: SecretaryConfig = Field(default_factory=SecretaryConfig)
    # The opening board (what history had already settled when the window opens).
    initial_alliances: list[tuple[str, str]] = Field(default_factory=list)
    initial_treaties: list[tuple[str, str]] = Field(default_factory=list)
    initial_wars: list[tuple[str, str]] = Field(default_factory=list)
    initial_mobilized: list[str] = Field(default_factory=list)
    anonymise: bool = False
    anonymisation: dict[str, str] = Field(default_factory=dict)

    @field_validator("visibility")
    @classmethod
    def _known_actions(cls, v: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(v) - set(ACTION_TYPES))
        if unknown:
            raise ValueError(f"unknown action(s) {unknown} (known: {', '.join(ACTION_TYPES)})")
        return v

    @field_validator("initial_alliances", "initial_treaties", "initial_wars")
    @classmethod
    def _two_countries(cls, v: list[tuple[str, str]]) -> list[tuple[str, str]]:
        for a, b in v:
            if a == b:
                raise ValueError(f"a pair needs two different countries (got [{a}, {b}])")
        return v

    @field_validator("military_scale")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        bad = {k: x for k, x in v.items() if x <= 0}
        if bad:
            raise ValueError(f"military_scale factors must be > 0 (got {bad})")
        return v

    @model_validator(mode="after")
    def _trigger_known(self) -> WarAgentConfig:
        if self.trigger not in self.triggers:
            raise ValueError(
                f"trigger {self.trigger!r} is not one of the triggers ({', '.join(self.triggers)})"
            )
        if self.anonymise and not self.anonymisation:
            raise ValueError("anonymise is on but the anonymisation mapping is empty")
        if self.anonymisation:
            Anonymiser(self.anonymisation)  # one-to-one check, with a clear message
        return self

    @property
    def trigger_text(self) -> str:
        return self.triggers[self.trigger]

    def visibility_map(self) -> dict[str, Visibility]:
        return {**DEFAULT_VISIBILITY, **self.visibility}

    def unknown_countries(self, countries: Iterable[str]) -> list[str]:
        """Country names used in this section that are not players (for a clear error)."""
        known = set(countries)
        used = (
            set(self.great_powers)
            | self.ground_truth.countries()
            | set(self.military_scale)
            | {c for pairs in self._initial_pairs().values() for pair in pairs for c in pair}
            | set(self.initial_mobilized)
        )
        return sorted(used - known)

    def _initial_pairs(self) -> dict[str, list[tuple[str, str]]]:
        return {
            "alliance": self.initial_alliances,
            "treaty": self.initial_treaties,
            "war": self.initial_wars,
        }

    def initial_board(self, countries: list[str]) -> Board:
        """The round-0 board. Wars in progress are relations, not declarations: scores count
        only the declarations a run makes."""
        board = empty_board(countries)
        for kind, pairs in self._initial_pairs().items():
            for a, b in pairs:
                board.add(a, b, kind)
        for c in self.initial_mobilized:
            board.mobilize(c)
        return board


def scale_phrase(factor: float) -> str:
    """A military override as words a model can use ("three times", "a third of")."""
    words = {3.0: "three times", 2.0: "twice", 0.5: "half", 1 / 3: "a third of"}
    for value, word in words.items():
        if abs(factor - value) < 1e-6:
            return f"In this variant its forces are {word} their historical size."
    return f"In this variant its forces are {factor:g} times their historical size."
