"""The tournament file: its schema, validation with one-line errors naming file and field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from wargraph.evals.experiment.spec import (
    ContextSpec,
    ExperimentError,
    Workers,
    format_validation,
    read_fields,
    shipped_files,
    shipped_instead,
)
from wargraph.models.chat import ModelRefError, parse_model_ref

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")


class TournamentError(ExperimentError):
    """A tournament file that cannot run; the message names the file, the field and the fix."""


class Entrant(BaseModel):
    """Who plays a seat: a model (or `bot:<name>`), optionally with a persona, a prompt variant
    and seat settings (`set`: keys under the seat, e.g. {temperature: 0.2}); or a person
    (`human: true`, never rated)."""

    model_config = ConfigDict(extra="forbid")

    model: str = "embedded"
    persona: str | None = None
    prompt_variant: str | None = None
    set: dict[str, Any] = Field(default_factory=dict)
    human: bool = False

    @model_validator(mode="after")
    def _check(self) -> Entrant:
        try:
            parse_model_ref(self.model)
        except ModelRefError as err:
            raise ValueError(str(err)) from None
        for key in self.set:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", str(key)):
                raise ValueError(f"set: {key!r} is not a seat setting (e.g. temperature, goals)")
        return self

    @property
    def rated(self) -> bool:
        return not self.human


class Score(BaseModel):
    """What ranks the seats of one game: `centres` (Diplomacy: supply centres, then the order of
    elimination), `points` (Blotto), or `measure` (any family: a measure of the record with
    `{seat}` standing for the seat, e.g. `scores.{seat}`). Higher is better."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["centres", "points", "measure"] = "measure"
    measure: str = ""

    @model_validator(mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        if isinstance(v, str):
            return {"kind": v} if v in ("centres", "points") else {"kind": "measure", "measure": v}
        return v

    @model_validator(mode="after")
    def _check(self) -> Score:
        if self.kind == "measure" and "{seat}" not in self.measure:
            raise ValueError("measure: name a measure per seat with {seat}, e.g. scores.{seat}")
        return self


class Stop(BaseModel):
    """Adaptive length: more rotations until the top two entrants' intervals separate, or until
    a budget (games, model calls, tokens) is spent."""

    model_config = ConfigDict(extra="forbid")

    until_separated: bool = True
    max_games: int = Field(default=200, ge=1, le=100_000)
    max_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)


class Tournament(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""
    description: str = ""
    scenario: str = Field(min_length=1)
    family: str | None = None  # checked against the scenario's
    set: dict[str, Any] = Field(default_factory=dict)  # overrides for every game
    seats: list[str] | None = None  # the seats entrants rotate over (default: every player)
    entrants: dict[str, Entrant] = Field(min_length=2)
    rotations: int | None = Field(default=None, ge=1, le=10_000)
    games_per_pairing: int | None = Field(default=None, ge=1, le=10_000)
    games: int | None = Field(default=None, ge=1, le=100_000)
    adaptive: Stop | None = None
    score: Score = Field(default_factory=lambda: Score(kind="measure", measure="scores.{seat}"))
    # non-negative (the ratings' bootstrap takes it as a generator seed), a whole number
    seed: int = Field(default=0, ge=0, le=2**32 - 1, strict=True)
    model: str = "scripted"  # seats no entrant takes (the control, an umpire)
    context: ContextSpec = Field(default_factory=ContextSpec)
    concurrency: int = Field(default=2, ge=1, le=64)
    workers: Workers = "auto"  # threads or processes; auto: processes for bots and scripted
    bootstrap: int = Field(default=200, ge=20, le=10_000)
    cache: bool | str = False  # reuse model answers (as an experiment's `cache:`)

    base_dir: str = Field(default=".", exclude=True)

    @model_validator(mode="after")
    def _check(self) -> Tournament:
        for name in self.entrants:
            if not NAME.match(str(name)):
                raise ValueError(
                    f"entrants: {name!r}: use a letter then letters, digits, '.', '-', '_' "
                    "(at most 40)"
                )
        given = [k for k in ("rotations", "games_per_pairing", "games") if getattr(self, k)]
        if len(given) > 1:
            raise ValueError(f"give one of rotations, games_per_pairing or games (got {given})")
        if sum(e.rated for e in self.entrants.values()) < 2:
            raise ValueError("entrants: at least two rated entrants (people are not rated)")
        return self


def shipped_tournaments() -> dict[str, Path]:
    return shipped_files("tournaments")


def resolve_tournament(source: str | Path) -> Path:
    """A file, or the name of a shipped tournament (src/wargraph/scenarios/tournaments/NAME.yaml)."""
    path = Path(source)
    if path.is_file():
        return path
    shipped = shipped_tournaments()
    if path.suffix not in (".yaml", ".yml") and str(source) in shipped:
        return shipped[str(source)]
    instead = shipped_instead(path, "tournaments", shipped)
    if instead is not None:
        return instead
    raise TournamentError(
        f"{source}: no such tournament file (shipped: {', '.join(sorted(shipped)) or 'none'})"
    )


def load_tournament(source: str | Path | dict[str, Any], *, model: str | None = None) -> Tournament:
    """Read and validate a tournament file. `model` replaces every entrant's model except bots
    and people (a quick check of the harness with `scripted`)."""
    if isinstance(source, dict):
        data, where, base = dict(source), "<tournament>", "."
    else:
        path = resolve_tournament(source)
        where, base = str(path), str(path.parent)
        data = read_fields(path, "tournament", TournamentError)
        data.setdefault("name", path.stem)
    data["base_dir"] = base
    try:
        t = Tournament.model_validate(data)
    except ValidationError as err:
        raise TournamentError(format_validation(where, err)) from None
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", t.name or ""):
        raise TournamentError(f"{where}: name: use letters, digits, '.', '-' and '_'")
    if model is not None:
        try:
            parse_model_ref(model)
        except ModelRefError as err:
            raise TournamentError(f"--model: {err}") from None
        for e in t.entrants.values():
            if not e.human and not e.model.startswith("bot:"):
                e.model = model
    return t
