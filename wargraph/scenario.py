"""Scenario files: the pydantic schema, YAML loading, `--set` overrides and clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Kind = Literal["ai", "human", "scripted"]
MemoryPolicy = Literal["full", "last_round", "diary"]


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the file, the field and the fix."""


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


class Question(BaseModel):
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


class FlowSpec(BaseModel):
    """A game flow composed from the node library (see graphs/flow.py)."""

    model_config = ConfigDict(extra="forbid")

    phases: list[str | dict[str, str]] = Field(min_length=1)
    """Library phases in round order; `{name: phase}` mounts a phase under another node name."""
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
    questions: list[Question] = Field(default_factory=list)
    flow: FlowSpec | None = None

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
        known_roles = set(self.players) | {self.control.name}
        clash = set(self.teams) & known_roles
        if clash:
            raise ValueError(f"teams and players share the name(s) {sorted(clash)}")
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
        return self

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


# --- loading -----------------------------------------------------------------------------


def scenario_class(family: str) -> type[Scenario]:
    """The scenario class of a family, from the registry (`wargraph/families.py`)."""
    from wargraph import families

    try:
        return families.scenario_class(family)
    except families.FamilyError as err:
        raise ScenarioError(f"family: {err}") from None


def shipped_scenarios() -> dict[str, Path]:
    """Scenario files shipped by every registered family (plug-ins included), by name."""
    from wargraph import families

    return families.shipped_scenarios()


def resolve_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.exists():
            raise ScenarioError(f"{name_or_path}: no such scenario file")
        return path
    shipped = shipped_scenarios()
    if name_or_path not in shipped:
        raise ScenarioError(
            f"{name_or_path}: no shipped scenario of that name and no such file "
            f"(shipped: {', '.join(sorted(shipped))})"
        )
    return shipped[name_or_path]


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


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (YAML would keep the last)."""

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, list | dict):
                continue  # unhashable keys are refused later by validation
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_data(name_or_path: str) -> tuple[dict[str, Any], str]:
    path = resolve_path(name_or_path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ScenarioError(f"{path}:{where} YAML syntax error: {problem}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a UTF-8 text file") from None
    except RecursionError:
        raise ScenarioError(f"{path}: the YAML is nested too deeply to be a scenario") from None
    except ValueError as err:  # e.g. an integer of thousands of digits
        raise ScenarioError(f"{path}: a value cannot be read ({str(err)[:200]})") from None
    return data, str(path)


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
        import copy

        data = apply_overrides(copy.deepcopy(data) or {}, parse_overrides(overrides), source)
    return validate_data(data, source)
