"""Scenario files: the pydantic schema, YAML loading, `--set` overrides and clear errors."""

from __future__ import annotations

import copy
import os
import re
import warnings
from collections.abc import Hashable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

import wargraph.kernel.families as families
from wargraph.kernel.script_shape import check_script
from wargraph.runs.userfiles import UserFileError, read_regular

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

Kind = Literal["ai", "human", "scripted"]
MemoryPolicy = Literal["full", "last_round", "diary"]


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the file, the field and the fix."""


# --- role names --------------------------------------------------------------------------------

# Names end up in prompt headers, audiences, URLs and file names: keep them plain words.
NAME_RULE = (
    "1-40 characters: ASCII letters, digits, '_' or '-', words separated by single spaces, "
    "starting with a letter"
)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z0-9_-]+)*")
MAX_NAME = 40
# Names the kernel gives a meaning of its own: the public audience, the setup's author, the
# umpire and the Diplomacy/WarAgent secretary (the control seat alone may be named those two).
RESERVED = frozenset({"everyone", "all", "scenario", "control", "secretary"})
CONTROL_NAMES = frozenset({"control", "secretary"})


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a role or team, or None when it can."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.fullmatch(name):
        return f"{name!r} is not a valid name ({NAME_RULE})"
    if name.casefold() in RESERVED:
        return f"{name!r} is reserved (reserved: {', '.join(sorted(RESERVED))})"
    return None


class Role(BaseModel):
    """A seat at the table: a player, team member, leader, country, power, secretary or control."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    kind: Kind = "ai"
    model: str | None = None
    persona: str = ""
    personas: dict[str, str] = Field(default_factory=dict)
    goals: list[str] = Field(default_factory=list)
    profile: dict[str, str] = Field(default_factory=dict)
    secrets: list[str] = Field(default_factory=list)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0, le=8192)
    prompt_variant: str | None = None
    review: bool = False
    memory: MemoryPolicy | None = None
    model_profile: Literal["small", "capable"] | None = None
    """The seat's model profile (wargraph.models.profiles; None: chosen from its model)."""
    context_tokens: int | None = Field(default=None, ge=1000, le=10_000_000)
    """The seat's view budget in tokens under the capable profile (None: the profile's)."""
    script: list[Any] | dict[str, Any] | None = None
    """The seat's answers, for tests: a list in the order asked, or a mapping by task
    (wargraph.seats.script); the seeded scripted decider answers once it runs out."""

    @model_serializer(mode="wrap")
    def _without_unset_profile(self, handler: Any) -> Any:
        """A role that names no profile or script is stored as before they existed (records
        and their fingerprints unchanged)."""
        out = handler(self)
        if isinstance(out, dict):
            for name in ("model_profile", "script", "context_tokens"):
                if out.get(name) is None:
                    out.pop(name, None)
        return out

    @field_validator("script")
    @classmethod
    def _playable_script(cls, value: Any) -> Any:
        return None if value is None else check_script(value, "script")

    @property
    def persona_text(self) -> str:
        """`persona` names an entry of `personas` (e.g. hawk/dove) or is the text itself."""
        return self.personas.get(self.persona, self.persona)


class Team(BaseModel):
    """Members (roles or other teams) answer; the leader combines their answers."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    members: list[str] = Field(min_length=1)
    leader: str
    persona: str = ""
    goals: list[str] = Field(default_factory=list)


class Inject(BaseModel):
    model_config = ConfigDict(extra="forbid")

    round: int = Field(ge=1)
    text: str
    audience: list[str] = Field(default_factory=lambda: ["*"])


class DebriefQuestion(BaseModel):
    """A post-game question: free text, or multiple choice when `options` is set."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    text: str
    options: list[str] = Field(default_factory=list)

    @field_validator("options", mode="before")
    @classmethod
    def _yaml_yes_no(cls, value: Any) -> Any:
        """YAML reads a bare yes/no as booleans; options are always words."""
        if isinstance(value, list):
            return [("yes" if v else "no") if isinstance(v, bool) else v for v in value]
        return value


class FlowMount(BaseModel):
    """A library phase mounted with options: `{respond: {phase: order, sequential: true}}`."""

    model_config = ConfigDict(extra="forbid")

    phase: str
    sequential: bool = False
    """`order` only: the seats answer one at a time, each seeing the answers before it."""
    seats: list[str] | None = None
    """`order` only: who answers, in this order (default: the cast's actors)."""


class FlowSpec(BaseModel):
    """A game flow composed from the node library (see src/wargraph/graphs/flow/graph.py)."""

    model_config = ConfigDict(extra="forbid")

    phases: list[str | dict[str, str | FlowMount]] = Field(min_length=1)
    """Library phases in round order; `{name: phase}` mounts a phase under another node name,
    `{name: {phase: order, sequential: true, seats: [...]}}` with options."""
    exchanges: int = Field(default=1, ge=1, le=10)  # negotiation exchanges per round


class Scenario(BaseModel):
    """The common core of every game family; families subclass it with their own sections."""

    model_config = ConfigDict(extra="forbid")

    family: str = "crisis"
    title: str
    setting: str
    timestep: str = "one month"
    rounds: int = Field(default=2, ge=1, le=200)
    nature: bool = False
    public_plans: bool = False
    memory: MemoryPolicy = "last_round"
    prompt_variant: str = "v1"
    players: dict[str, Role] = Field(default_factory=dict)
    teams: dict[str, Team] = Field(default_factory=dict)
    control: Role = Field(default_factory=lambda: Role(name="control"))
    injects: list[Inject] = Field(default_factory=list)
    questions: list[DebriefQuestion] = Field(default_factory=list)
    flow: FlowSpec | None = None

    # What a family's class declares of its scenarios instead of writing a validator (checked
    # after the common checks; a message names the family): how many players it takes (fewest,
    # most), and whether a scenario may give teams or a flow section
    player_count: ClassVar[tuple[int, int] | None] = None
    allows_teams: ClassVar[bool] = True
    allows_flow: ClassVar[bool] = True

    @model_validator(mode="after")
    def _names_and_teams(self) -> Scenario:
        for name, role in self.players.items():
            role.name = name
        if not self.control.name:
            self.control.name = "control"
        if self.flow is not None and self.family == "crisis":
            self.family = "flow"
        for i, q in enumerate(self.questions):
            q.id = q.id or f"q{i + 1}"
        self._check_names()  # also refuses a team named like a player or the control
        for tname, team in self.teams.items():
            team.name = tname
            for m in team.members:
                if m not in self.players and m not in self.teams:
                    raise ValueError(
                        f"teams.{tname}.members: unknown role or team {m!r} "
                        f"(known: {sorted(self.players) + sorted(self.teams)})"
                    )
            if team.leader not in self.players:
                raise ValueError(f"teams.{tname}.leader: unknown player {team.leader!r}")
        self._check_team_cycles()
        self._check_declared()
        return self

    def _check_declared(self) -> None:
        game, n = self.family.capitalize(), len(self.players)
        if self.player_count and not self.player_count[0] <= n <= self.player_count[1]:
            fewest, most = self.player_count
            count = f"exactly {fewest}" if fewest == most else f"{fewest} to {most}"
            raise ValueError(f"players: {game} needs {count} sides (got {n})")
        if self.teams and not self.allows_teams:
            raise ValueError(f"teams: in {game} every side is one player; remove the teams")
        if self.flow is not None and not self.allows_flow:
            raise ValueError(f"flow: a {game} game has its own phases; remove the flow section")

    def _check_names(self) -> None:
        if not self.players:
            raise ValueError("players: a scenario needs at least one player (none are given)")
        control = self.control.name
        problem = name_problem(control)
        if problem and control.casefold() not in CONTROL_NAMES:
            raise ValueError(f"control.name: {problem}")
        seen: dict[str, str] = {control.casefold(): "control"}
        for section, names in (("players", self.players), ("teams", self.teams)):
            for name in names:
                problem = name_problem(name)
                if problem:
                    raise ValueError(f"{section}: {problem}")
                other = seen.setdefault(name.casefold(), f"{section}.{name}")
                if other != f"{section}.{name}":
                    raise ValueError(f"{section}: {name!r} is also the name of {other}")
        roles = set(self.players) | set(self.teams) | {control, "*"}
        for i, inject in enumerate(self.injects):
            unknown = [a for a in inject.audience if a not in roles]
            if unknown:
                raise ValueError(
                    f"injects.{i}.audience: unknown role(s) {unknown} "
                    f"(known: '*', {', '.join(sorted(roles - {'*'}))})"
                )

    def check_seats(self, option: str, names: Iterable[str]) -> None:
        """Refuse seat names (from --human, --role-model ...) that are not roles of this game."""
        unknown = [n for n in names if n not in self.roles]
        if unknown:
            raise ScenarioError(
                f"{option} {unknown[0]!r}: no such role in this scenario "
                f"(roles: {', '.join(self.roles)})"
            )

    def _check_team_cycles(self) -> None:
        state: dict[str, int] = {}  # 1 = on the current path, 2 = finished

        def visit(t: str, path: list[str]) -> None:
            if state.get(t) == 2:
                return
            if state.get(t) == 1:
                cycle = " -> ".join(path[path.index(t) :] + [t])
                raise ValueError(f"teams: cycle {cycle} (a team cannot contain itself)")
            state[t] = 1
            for m in self.teams[t].members:
                if m in self.teams:
                    visit(m, path + [t])
            state[t] = 2

        for t in self.teams:
            visit(t, [])

    # --- who is who -------------------------------------------------------------------

    def role(self, name: str) -> Role:
        if name == self.control.name:
            return self.control
        if name in self.players:
            return self.players[name]
        raise KeyError(f"unknown role {name!r}")

    @property
    def roles(self) -> dict[str, Role]:
        """Every seat, control included."""
        return {**self.players, self.control.name: self.control}

    def groups_of(self, role: str) -> set[str]:
        """The role itself and every team it sits on, directly or through a sub-team."""
        groups = {role}
        changed = True
        while changed:
            changed = False
            for tname, team in self.teams.items():
                if tname not in groups and (groups & set(team.members) or team.leader == role):
                    groups.add(tname)
                    changed = True
        return groups

    @property
    def actors(self) -> list[str]:
        """Who states a plan each move: players on no team, and teams inside no team."""
        in_team = {m for t in self.teams.values() for m in t.members}
        leaders = {t.leader for t in self.teams.values()}
        solo = [p for p in self.players if p not in in_team and p not in leaders]
        top = [t for t in self.teams if t not in in_team]
        return solo + top

    def team_depth(self, team: str) -> int:
        """0 for a team of players; a team holding teams is one deeper than its deepest."""
        subs = [m for m in self.teams[team].members if m in self.teams]
        return 0 if not subs else 1 + max(self.team_depth(s) for s in subs)


class Section(BaseModel):
    """A family's own section of its scenarios (`blotto:`): unknown keys are errors, and a part
    reads it with `MySection.of(table)` (the scenario's field of this class)."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def of(cls, table: Table | Scenario) -> Self:
        scenario = table if isinstance(table, Scenario) else table.scenario
        for name in type(scenario).model_fields:
            value = getattr(scenario, name)
            if isinstance(value, cls):
                return value
        raise ScenarioError(f"a {scenario.family!r} scenario has no {cls.__name__} section")


# --- loading -----------------------------------------------------------------------------


def scenario_class(family: str) -> type[Scenario]:
    """The scenario class of a family, from the registry (`src/wargraph/kernel/families.py`)."""
    try:
        return families.scenario_class(family)
    except families.FamilyError as err:
        raise ScenarioError(f"family: {err}") from None


def shipped_scenarios() -> dict[str, Path]:
    """Scenario files shipped by every registered family (plug-ins included), by name."""
    return families.shipped_scenarios()


def _looks_like_path(name_or_path: str) -> bool:
    return os.sep in name_or_path or "/" in name_or_path or name_or_path.endswith((".yaml", ".yml"))


def resolve_path(name_or_path: str) -> Path:
    """A path (it holds a `/` or ends in .yaml/.yml) is that file; a bare name is the shipped
    scenario of that name, else a file of that name in the working folder."""
    path = Path(name_or_path)
    found = None if _looks_like_path(name_or_path) else families.find_shipped(name_or_path)
    if found is not None:
        note = shadow_note(name_or_path)
        if note:
            warnings.warn(note, ScenarioNote, stacklevel=2)
        return found
    if _looks_like_path(name_or_path) or os.path.lexists(path):
        if not path.exists():
            raise ScenarioError(f"{name_or_path}: no such scenario file")
        return path
    raise ScenarioError(
        f"{name_or_path}: no shipped scenario of that name and no such file "
        f"(shipped: {', '.join(sorted(shipped_scenarios()))})"
    )


class ScenarioNote(UserWarning):
    """Something the user should know about the file chosen (the CLI shows it as a note)."""


def shadow_note(name_or_path: str) -> str | None:
    """When a bare shipped name also names a local file or folder, say which one is used."""
    if _looks_like_path(name_or_path) or families.find_shipped(name_or_path) is None:
        return None
    local = (name_or_path, f"{name_or_path}.yaml", f"{name_or_path}.yml")
    found = next((c for c in local if os.path.lexists(c)), None)
    if found is None:
        return None
    return (
        f"{name_or_path}: the shipped scenario is used, not the local {found!r}; "
        f"to use the local file write ./{found}"
    )


SEAT_SECTIONS = ("players", "teams")


def parse_overrides(items: list[str] | dict[str, Any] | None) -> dict[str, Any]:
    """`["roles.a.persona=hawk", "rounds=3"]` -> {"roles.a.persona": "hawk", "rounds": 3}."""
    if not items:
        return {}
    if isinstance(items, dict):
        return dict(items)
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, e.g. players.a.persona=hawk")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = raw
    return out


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any], source: str) -> dict[str, Any]:
    """Set dotted keys in the raw scenario data before validation (lists by index)."""
    for dotted, value in overrides.items():
        node: Any = data
        parts = dotted.split(".")
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            where = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ScenarioError(
                        f"{source}: --set {dotted}: {where} is not an index of the list"
                    )
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if i == 1 and not last and parts[0] in SEAT_SECTIONS and part not in node:
                    # a typo must not create a seat; a whole new seat is given whole
                    raise ScenarioError(
                        f"{source}: --set {dotted}: no {parts[0][:-1]} {part!r} in this "
                        f"scenario (known: {', '.join(node) or 'none'}); to add one give it "
                        f"whole, e.g. --set '{parts[0]}.{part}={{persona: ...}}'"
                    )
                if last:
                    node[part] = value
                else:
                    node = node.setdefault(part, {})
            else:
                raise ScenarioError(f"{source}: --set {dotted}: {where} is not a section")
    return data


def _format_validation(source: str, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        got = e.get("input")
        shown = "" if isinstance(got, dict | list) or got is None else f" (got {got!r})"
        # whole-scenario checks name their own field at the start of the message
        lines.append(f"{source}: {field}: {msg}{shown}" if field else f"{source}: {msg}")
    return "\n".join(lines)


def validate_data(data: Any, source: str = "<scenario>") -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: expected a mapping of scenario fields at the top level")
    try:
        cls = scenario_class(str(data.get("family", "crisis")))
    except ScenarioError as err:
        raise ScenarioError(f"{source}: {err}") from None  # name the file, as every error does
    try:
        return cls.model_validate(data)
    except ValidationError as err:
        raise ScenarioError(_format_validation(source, err)) from None


# Bounds on what a scenario file may be: the largest shipped one is ~12 kB.
MAX_FILE_BYTES = 1_000_000
# Aliases (`*a`) and merge keys (`<<: *a`) repeat content: a small file can expand to gigabytes.
MAX_EXPANDED_VALUES = 200_000
MAX_EXPANDED_CHARS = 4_000_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (YAML would keep the last)
    and stops merge keys from multiplying entries without bound."""

    merged_entries = 0

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<:` entries may be overridden by the mapping's own keys
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, list | dict):
                continue  # unhashable keys are refused later by validation
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        super().flatten_mapping(node)
        self.merged_entries += len(node.value)
        if self.merged_entries > MAX_EXPANDED_VALUES:
            raise _TooBig


class _TooBig(Exception):
    """The document expands beyond MAX_EXPANDED_VALUES / MAX_EXPANDED_CHARS."""


def _check_expanded(data: Any) -> None:
    """Walk the loaded document as it would be stored (aliases repeated), stopping at the cap."""
    values = chars = 0
    stack = [data]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            chars += len(item) if isinstance(item, str) else 8
        if values > MAX_EXPANDED_VALUES or chars > MAX_EXPANDED_CHARS:
            raise _TooBig


def read_text(path: Path) -> str:
    """A scenario file's text: a regular file of at most MAX_FILE_BYTES, in UTF-8."""
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except UserFileError as err:
        raise ScenarioError(str(err)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a UTF-8 text file") from None


def read_data(name_or_path: str) -> tuple[dict[str, Any], str]:
    path = resolve_path(name_or_path)
    return copy.deepcopy(_parsed(str(path), *_version(path))), str(path)


def _version(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0)  # read_text names the problem
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=64)
def _parsed(path: str, _mtime_ns: int, _size: int) -> Any:
    """A file parsed once while it is unchanged (parsing YAML costs ~8 ms of a scripted game)."""
    return parse_yaml(read_text(Path(path)), path)


def parse_yaml(text: str, path: str) -> Any:
    """YAML text to data, safely: no key given twice, expansion bounded, errors name `path`."""
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506
        _check_expanded(data)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ScenarioError(f"{path}:{where} YAML syntax error: {problem}") from None
    except _TooBig:
        raise ScenarioError(
            f"{path}: expands to more than {MAX_EXPANDED_VALUES:,} values or "
            f"{MAX_EXPANDED_CHARS:,} characters (YAML aliases repeat content); write it out "
            "without aliases or make it smaller"
        ) from None
    except RecursionError:
        raise ScenarioError(f"{path}: the YAML is nested too deeply to be a scenario") from None
    except ValueError as err:  # e.g. an integer of thousands of digits
        raise ScenarioError(f"{path}: a value cannot be read ({str(err)[:200]})") from None
    return data


def load_scenario(
    scenario: str | dict[str, Any] | Scenario,
    overrides: list[str] | dict[str, Any] | None = None,
) -> Scenario:
    """Load a shipped name, a path, a raw dict or a Scenario, then apply `--set` overrides."""
    if isinstance(scenario, Scenario):
        if not overrides:
            return scenario
        data, source = scenario.model_dump(), "<scenario>"
    elif isinstance(scenario, dict):
        data, source = scenario, "<inline scenario>"
    else:
        data, source = read_data(scenario)
    if overrides:
        data = apply_overrides(copy.deepcopy(data) or {}, parse_overrides(overrides), source)
    try:
        return validate_data(data, source)
    except ScenarioError as err:
        hint = colon_hint(overrides)
        if hint:
            raise ScenarioError(f"{err}\n{hint}") from None
        raise


def colon_hint(overrides: list[str] | dict[str, Any] | None) -> str:
    """A `--set` value holding ': ' is YAML for a mapping (`persona=Note: calm` is
    {"Note": "calm"}), which a text field refuses as "not a valid string": say to quote it."""
    if not isinstance(overrides, list):
        return ""
    for item in overrides:
        key, _, raw = item.partition("=")
        if ": " in raw and isinstance(parse_overrides([item]).get(key.strip()), dict):
            quoted = raw.replace('"', '\\"')
            return (
                f"hint: --set {item!r} holds ': ', so its value was read as a mapping; quote "
                f"the value to keep it text: --set '{key.strip()}=\"{quoted}\"'"
            )
    return ""
