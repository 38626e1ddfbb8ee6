"""WarAgent-style historical country simulations: pure game logic, no LangGraph.

The pieces a round needs, each a small function of plain data:

- the action space (a flat pydantic schema, so llama.cpp can turn it into a grammar);
- the board (relations between every pair) and the stick (who is mobilized);
- one board per country for its *beliefs*, updated only from what reached it;
- the secretary's rules (format + logic) returning reasons per invalid action, and the
  amend step that drops invalid actions so the game always moves on;
- the round update, the stopping rule, and anonymisation with translation back.

Everything here is JSON-friendly (pydantic models with `model_dump()`), so a world can sit
in a LangGraph state and in `record.json`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

# --- vocabulary ----------------------------------------------------------------------------

# Highest precedence first: a pair shows the strongest of its active relations.
RELATIONS: tuple[str, ...] = ("war", "alliance", "peace", "treaty")
NO_RELATION = "none"
PACT_KINDS: tuple[str, ...] = ("alliance", "treaty", "peace")  # relations made by request/accept
NO_TARGET = "none"

ACTION_TYPES: tuple[str, ...] = (
    "wait",
    "general_mobilization",
    "declare_war",
    "request_alliance",
    "accept_alliance",
    "reject_alliance",
    "publish_alliance",
    "betray_alliance",
    "request_treaty",
    "accept_treaty",
    "reject_treaty",
    "publish_treaty",
    "betray_treaty",
    "present_peace",
    "accept_peace",
    "reject_peace",
    "publish_peace",
    "betray_peace",
    "send_message",
)
UNTARGETED: frozenset[str] = frozenset({"wait", "general_mobilization"})

ACTION_HELP: dict[str, str] = {
    "wait": "do nothing this round",
    "general_mobilization": "mobilize your armed forces (once per game)",
    "declare_war": "declare war on the target",
    "request_alliance": "ask the target for a military alliance",
    "accept_alliance": "accept the target's alliance request",
    "reject_alliance": "reject the target's alliance request",
    "publish_alliance": "make your alliance with the target known to all",
    "betray_alliance": "break your alliance with the target",
    "request_treaty": "ask the target for a non-intervention treaty",
    "accept_treaty": "accept the target's treaty request",
    "reject_treaty": "reject the target's treaty request",
    "publish_treaty": "make your treaty with the target known to all",
    "betray_treaty": "break your treaty with the target",
    "present_peace": "offer the target a peace agreement (ends a war when accepted)",
    "accept_peace": "accept the target's peace offer",
    "reject_peace": "reject the target's peace offer",
    "publish_peace": "make your peace agreement with the target known to all",
    "betray_peace": "break your peace agreement with the target",
    "send_message": "send the target a message",
}

Visibility = Literal["public", "private"]

# Public acts are seen by every country; private ones by the actor and the target only.
# Why these defaults: mobilizations, declarations, publications and betrayals are acts of
# state the world notices; negotiations (requests, answers, messages) happen in private.
DEFAULT_VISIBILITY: dict[str, Visibility] = {
    t: (
        "public"
        if t in UNTARGETED or t == "declare_war" or t.startswith(("publish_", "betray_"))
        else "private"
    )
    for t in ACTION_TYPES
}

_VERB_ALIASES = {"present": "request"}  # a peace agreement is "presented", not "requested"


def split_action(action_type: str) -> tuple[str, str | None]:
    """`"accept_alliance"` -> ("accept", "alliance"); `"present_peace"` -> ("request", "peace")."""
    verb, _, kind = action_type.partition("_")
    if kind in PACT_KINDS:
        return _VERB_ALIASES.get(verb, verb), kind
    return action_type, None


# --- actions and their schema -----------------------------------------------------------------


class Action(BaseModel):
    """One action as proposed. Lenient on purpose: the secretary reports what is wrong."""

    model_config = ConfigDict(extra="ignore")

    type: str
    target: str = NO_TARGET
    message: str = ""

    @field_validator("type", "target", mode="before")
    @classmethod
    def _strip(cls, v: Any) -> Any:
        return v.strip() if isinstance(v, str) else v

    def short(self) -> str:
        if self.type in UNTARGETED:
            return self.type
        return f"{self.type} -> {self.target}"


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve local `$ref`s and drop `$defs`: llama.cpp grammars want flat schemas."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


class _FlatSchema(BaseModel):
    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        return inline_refs(super().model_json_schema(*args, **kwargs))


@lru_cache(maxsize=64)
def proposal_model(
    countries: tuple[str, ...], max_actions: int = 3, message_chars: int = 300
) -> type[BaseModel]:
    """The structured output a country answers with: `{"actions": [{type, target, message}]}`.

    Enums are built per scenario so a grammar can only produce known actions and targets;
    the schema has no `$defs` and no `anyOf` (checked in the unit tests).
    """
    type_enum = Literal[ACTION_TYPES]  # type: ignore[valid-type]
    target_enum = Literal[(NO_TARGET, *countries)]  # type: ignore[valid-type]
    action = create_model(
        "CountryAction",
        __base__=_FlatSchema,
        type=(type_enum, Field(description="one action from the list")),
        target=(target_enum, Field(description='a country, or "none" for wait/mobilization')),
        message=(str, Field(max_length=message_chars, description="short text, may be empty")),
    )
    return create_model(
        "CountryActions",
        __base__=_FlatSchema,
        actions=(list[action], Field(min_length=1, max_length=max_actions)),  # type: ignore[valid-type]
    )


def parse_actions(raw: Any) -> list[Action]:
    """Accept `{"actions": [...]}`, a bare list, a pydantic model or a list of Actions."""
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if isinstance(raw, Mapping):
        raw = raw.get("actions", [])
    if not isinstance(raw, list):
        raise ValueError(f"expected a list of actions, got {type(raw).__name__}")
    return [a if isinstance(a, Action) else Action.model_validate(a) for a in raw]


# --- the board and the stick ---------------------------------------------------------------


class Request(BaseModel):
    """A pending request (alliance, treaty) or peace offer, waiting for the receiver's answer."""

    sender: str
    receiver: str
    kind: Literal["alliance", "treaty", "peace"]


def pair_key(a: str, b: str) -> str:
    return "|".join(sorted((a, b)))


class Board(BaseModel):
    """Relations between every pair of countries (the board) plus who is mobilized (the stick).

    A pair can hold several relations at once (an alliance and an old treaty); what it *shows*
    is the one with the highest precedence: war > alliance > peace > treaty > none.
    """

    countries: list[str]
    relations: dict[str, list[str]] = Field(default_factory=dict)
    requests: list[Request] = Field(default_factory=list)
    mobilized: list[str] = Field(default_factory=list)
    declarations: list[tuple[str, str]] = Field(default_factory=list)  # (declarer, target)

    # reading -----------------------------------------------------------------------------
    def active(self, a: str, b: str) -> set[str]:
        return set(self.relations.get(pair_key(a, b), []))

    def has(self, a: str, b: str, kind: str) -> bool:
        return kind in self.active(a, b)

    def relation(self, a: str, b: str) -> str:
        active = self.active(a, b)
        return next((r for r in RELATIONS if r in active), NO_RELATION)

    def partners(self, a: str, kind: str) -> list[str]:
        return [c for c in self.countries if c != a and self.has(a, c, kind)]

    def has_request(self, sender: str, receiver: str, kind: str) -> bool:
        return any(
            r.sender == sender and r.receiver == receiver and r.kind == kind for r in self.requests
        )

    def is_mobilized(self, c: str) -> bool:
        return c in self.mobilized

    def matrix(self) -> list[list[str]]:
        """Shown relation per ordered pair; the diagonal is "self"."""
        return [
            ["self" if a == b else self.relation(a, b) for b in self.countries]
            for a in self.countries
        ]

    def edges(self, kind: str) -> list[tuple[str, str]]:
        """Pairs holding `kind`, in country order."""
        out = []
        for i, a in enumerate(self.countries):
            for b in self.countries[i + 1 :]:
                if self.has(a, b, kind):
                    out.append((a, b))
        return out

    def shown_edges(self, kind: str) -> list[tuple[str, str]]:
        """Pairs whose shown relation is `kind` (an alliance under a war does not count)."""
        return [(a, b) for a, b in self.edges(kind) if self.relation(a, b) == kind]

    def state_key(self) -> tuple[Any, ...]:
        """What the stopping rule compares: relations and the stick (not pending requests)."""
        rels = tuple(sorted((k, tuple(sorted(v))) for k, v in self.relations.items() if v))
        return rels, tuple(sorted(self.mobilized))

    # writing -----------------------------------------------------------------------------
    def add(self, a: str, b: str, kind: str) -> None:
        key = pair_key(a, b)
        kinds = set(self.relations.get(key, [])) | {kind}
        self.relations[key] = [r for r in RELATIONS if r in kinds]

    def remove(self, a: str, b: str, kind: str) -> None:
        key = pair_key(a, b)
        kinds = [r for r in self.relations.get(key, []) if r != kind]
        if kinds:
            self.relations[key] = kinds
        else:
            self.relations.pop(key, None)

    def add_request(self, sender: str, receiver: str, kind: str) -> None:
        if not self.has_request(sender, receiver, kind):
            self.requests.append(Request(sender=sender, receiver=receiver, kind=kind))  # type: ignore[arg-type]

    def drop_request(self, sender: str, receiver: str, kind: str) -> None:
        self.requests = [
            r
            for r in self.requests
            if not (r.sender == sender and r.receiver == receiver and r.kind == kind)
        ]

    def renamed(self, f: Any) -> Board:
        """The same board with every country name passed through `f` (pairs re-keyed)."""
        out = Board(
            countries=[f(c) for c in self.countries], mobilized=[f(c) for c in self.mobilized]
        )
        for key, kinds in self.relations.items():
            a, _, b = key.partition("|")
            for kind in kinds:
                out.add(f(a), f(b), kind)
        out.requests = [
            Request(sender=f(r.sender), receiver=f(r.receiver), kind=r.kind) for r in self.requests
        ]
        out.declarations = [(f(a), f(b)) for a, b in self.declarations]
        return out

    def mobilize(self, c: str) -> None:
        if c not in self.mobilized:
            self.mobilized = [x for x in self.countries if x in {*self.mobilized, c}]


def empty_board(countries: Iterable[str]) -> Board:
    return Board(countries=list(countries))


# The order effects are applied inside one round, so simultaneous moves give one answer:
# breaking and answering come before new requests, and a war declared in the same round as
# a peace is accepted wins (it is the later, stronger act).
_APPLY_ORDER = ("betray", "reject", "accept", "publish", "request", "declare_war")


def _apply_rank(a: Action) -> int:
    verb, _ = split_action(a.type)
    return _APPLY_ORDER.index(verb) if verb in _APPLY_ORDER else len(_APPLY_ORDER)


def apply_action(board: Board, actor: str, action: Action) -> None:
    """Apply one action to a board (the true board or one country's beliefs).

    Permissive on purpose: the secretary has already judged it, and an observer may learn
    of an acceptance without having seen the private request.
    """
    verb, kind = split_action(action.type)
    target = action.target
    if action.type == "general_mobilization":
        board.mobilize(actor)
    elif action.type == "declare_war":
        board.add(actor, target, "war")
        if (actor, target) not in board.declarations:
            board.declarations.append((actor, target))
    elif kind is None:
        return  # wait, send_message: no effect on the board
    elif verb == "request":
        board.add_request(actor, target, kind)
    elif verb == "accept":
        board.drop_request(target, actor, kind)
        board.add(actor, target, kind)
        if kind == "peace":
            board.remove(actor, target, "war")  # a peace agreement ends the war
    elif verb == "reject":
        board.drop_request(target, actor, kind)
    elif verb == "publish":
        board.add(actor, target, kind)
    elif verb == "betray":
        board.remove(actor, target, kind)


# --- visibility ------------------------------------------------------------------------------


def observers(
    actor: str, action: Action, countries: Iterable[str], visibility: Mapping[str, str]
) -> list[str]:
    """Who learns of an action: everyone if public, else the actor and its target."""
    countries = list(countries)
    if visibility.get(action.type, DEFAULT_VISIBILITY.get(action.type)) == "public":
        return countries
    return [c for c in countries if c == actor or c == action.target]


# --- the secretary -------------------------------------------------------------------------


class Verdict(BaseModel):
    """The secretary's judgement: reasons per action (empty = valid) and for the whole set."""

    action_reasons: list[list[str]] = Field(default_factory=list)
    general: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.general and not any(self.action_reasons)

    def invalid_indices(self) -> list[int]:
        return [i for i, r in enumerate(self.action_reasons) if r]

    def text(self, actions: list[Action]) -> str:
        """Reasons as the country reads them when it revises."""
        lines = [
            f"- action {i + 1} ({actions[i].short()}): {'; '.join(r)}"
            for i, r in enumerate(self.action_reasons)
            if r
        ]
        lines += [f"- {g}" for g in self.general]
        return "\n".join(lines)


def _format_reasons(actor: str, a: Action, countries: list[str]) -> list[str]:
    if a.type not in ACTION_TYPES:
        return [f"unknown action {a.type!r} (known: {', '.join(ACTION_TYPES)})"]
    if a.type in UNTARGETED:
        return []  # any target is ignored (normalised to "none" by `normalise`)
    if a.target == actor:
        return [f"{a.type} cannot target yourself"]
    if a.target not in countries:
        return [f"unknown target {a.target!r} (countries: {', '.join(countries)})"]
    if a.type == "send_message" and not a.message.strip():
        return ["send_message needs a message text"]
    return []


def _logic_reasons(
    actor: str, a: Action, board: Board, earlier: list[Action], later: list[Action]
) -> list[str]:
    """Rules against the actor's own board and stick, and against its other actions."""
    t = a.target
    verb, kind = split_action(a.type)
    same = [e for e in earlier if e.type == a.type and (a.type in UNTARGETED or e.target == t)]
    if same and a.type not in ("send_message", "wait"):
        return [f"{a.short()} appears twice"]
    if a.type == "general_mobilization":
        return ["you are already mobilized"] if board.is_mobilized(actor) else []
    if a.type == "declare_war":
        if board.has(actor, t, "war"):
            return [f"you are already at war with {t}"]
        betrays = any(o.type == "betray_alliance" and o.target == t for o in earlier + later)
        if board.has(actor, t, "alliance") and not betrays:
            return [
                f"{t} is your ally: betray the alliance first (betray_alliance) in the same set"
            ]
        return []
    if kind is None:
        return []
    noun = {"alliance": "an alliance", "treaty": "a treaty", "peace": "a peace agreement"}[kind]
    if verb == "request":
        if board.has(actor, t, kind):
            return [f"you already have {noun} with {t}"]
        if board.has_request(actor, t, kind):
            return [f"you already asked {t} for {noun}; wait for the answer"]
        if kind == "peace" and not board.has(actor, t, "war"):
            return [f"you are not at war with {t}, so there is no war to end"]
        if kind != "peace" and board.has(actor, t, "war"):
            return [f"you are at war with {t}: present peace first"]
        return []
    if verb in ("accept", "reject"):
        if not board.has_request(t, actor, kind):
            return [f"{t} has not asked you for {noun}; nothing to {verb}"]
        return []
    if verb in ("publish", "betray"):
        if not board.has(actor, t, kind):
            return [f"you have no {kind} with {t} to {verb}"]
        return []
    return []


def _ally_obligations(actor: str, actions: list[Action], board: Board) -> list[tuple[str, str]]:
    """(ally, enemy) pairs where an ally is at war and the actor neither joins nor betrays."""
    joins = {a.target for a in actions if a.type == "declare_war"}
    betrays = {a.target for a in actions if a.type == "betray_alliance"}
    open_ = []
    for ally in board.partners(actor, "alliance"):
        if ally in betrays:
            continue
        for enemy in board.partners(ally, "war"):
            if enemy == actor or board.has(actor, enemy, "war") or enemy in joins:
                continue
            open_.append((ally, enemy))
    return open_


def validate(
    actor: str, actions: list[Action], board: Board, countries: list[str], max_actions: int = 3
) -> Verdict:
    """Check format and logic of one country's proposal against its own board and stick."""
    reasons: list[list[str]] = []
    for i, a in enumerate(actions):
        r = _format_reasons(actor, a, countries)
        if not r:
            r = _logic_reasons(actor, a, board, actions[:i], actions[i + 1 :])
        reasons.append(r)
    general = []
    if len(actions) > max_actions:
        general.append(f"at most {max_actions} actions per round (you gave {len(actions)})")
    for ally, enemy in _ally_obligations(actor, actions, board):
        general.append(
            f"your ally {ally} is at war with {enemy}: join it (declare_war on {enemy}) "
            f"or break the alliance (betray_alliance with {ally})"
        )
    return Verdict(action_reasons=reasons, general=general)


AllyAtWarPolicy = Literal["waive", "join", "betray"]


def normalise(actions: list[Action]) -> list[Action]:
    """Untargeted actions carry target "none" (the model may fill in anything)."""
    return [
        a.model_copy(update={"target": NO_TARGET}) if a.type in UNTARGETED else a for a in actions
    ]


def amend(
    actor: str,
    actions: list[Action],
    board: Board,
    countries: list[str],
    max_actions: int = 3,
    ally_at_war: AllyAtWarPolicy = "waive",
) -> tuple[list[Action], list[str]]:
    """The secretary's last resort: drop invalid actions until the set is valid.

    Returns the amended actions and notes on what was done. Dropping can expose a new
    problem (a dropped betrayal leaves a war on an ally), so it repeats until stable. An
    unmet alliance obligation cannot be fixed by dropping: `ally_at_war` says whether to
    waive it (default: the secretary does not make war for a country), join the war, or
    break the alliance.
    """
    notes: list[str] = []
    kept = normalise(actions)
    for _ in range(len(kept) + 1):
        verdict = validate(actor, kept, board, countries, max_actions=len(kept) or 1)
        bad = verdict.invalid_indices()
        if not bad:
            break
        notes += [f"dropped {kept[i].short()}: {'; '.join(verdict.action_reasons[i])}" for i in bad]
        kept = [a for i, a in enumerate(kept) if i not in bad]
    if len(kept) > max_actions:
        notes += [
            f"dropped {a.short()}: over the limit of {max_actions}" for a in kept[max_actions:]
        ]
        kept = kept[:max_actions]
    # One obligation at a time: answering one (a betrayal) can change the next.
    for _ in range(len(countries) * 2):
        open_ = _ally_obligations(actor, kept, board)
        if not open_:
            break
        ally, enemy = open_[0]
        if ally_at_war == "waive":
            notes += [f"waived: ally {a} is at war with {e}" for a, e in open_]
            break
        betrayed = {a.target for a in kept if a.type == "betray_alliance"}
        if ally_at_war == "join" and (not board.has(actor, enemy, "alliance") or enemy in betrayed):
            kept.append(Action(type="declare_war", target=enemy, message=f"We stand by {ally}."))
            notes.append(f"added declare_war -> {enemy} to honour the alliance with {ally}")
        else:
            kept.append(Action(type="betray_alliance", target=ally))
            notes.append(f"added betray_alliance -> {ally}: it is at war with {enemy}")
    return (
        _fit_limit(actor, kept, board, countries, max_actions, notes) or [Action(type="wait")]
    ), notes


def _fit_limit(
    actor: str,
    kept: list[Action],
    board: Board,
    countries: list[str],
    max_actions: int,
    notes: list[str],
) -> list[Action]:
    """Actions added for an alliance obligation may pass the limit: drop others that are not
    needed (latest first), as long as the set stays valid."""
    while len(kept) > max_actions:
        for i in reversed(range(len(kept))):
            trial = kept[:i] + kept[i + 1 :]
            if validate(actor, trial, board, countries, max_actions=len(trial)).ok:
                notes.append(f"dropped {kept[i].short()}: over the limit of {max_actions}")
                kept = trial
                break
        else:
            break  # nothing can go without breaking a rule; the limit yields to the rules
    return kept


# --- a scripted player (tests, benchmarks) ---------------------------------------------------


def valid_options(actor: str, board: Board, countries: list[str]) -> list[Action]:
    """Every single action the rules allow the actor right now (ally obligations aside)."""
    out = []
    for t in ACTION_TYPES:
        targets = [NO_TARGET] if t in UNTARGETED else [c for c in countries if c != actor]
        for target in targets:
            text = f"{actor} to {target}: {t.replace('_', ' ')}." if t == "send_message" else ""
            a = Action(type=t, target=target, message=text)
            if not validate(actor, [a], board, countries).action_reasons[0]:
                out.append(a)
    return out


def scripted_proposal(
    actor: str, board: Board, countries: list[str], rng: Any, max_actions: int = 3
) -> list[Action]:
    """A seeded, always-valid proposal: a few action types drawn at random, then a target each.

    Drawing the type first keeps the mix varied (otherwise declarations, with one option per
    country, would crowd out the rest). Plays no strategy; for tests and benchmarks.
    """
    options = valid_options(actor, board, countries)
    by_type: dict[str, list[Action]] = {}
    for a in options:
        by_type.setdefault(a.type, []).append(a)
    types = sorted(by_type)
    chosen = rng.sample(types, k=min(len(types), rng.randint(1, max_actions)))
    picked = [rng.choice(by_type[t]) for t in chosen]
    kept, _ = amend(actor, picked, board, countries, max_actions, ally_at_war="join")
    return kept


# --- the world and the round ---------------------------------------------------------------


class RoundLog(BaseModel):
    """One round on the true board: the applied actions and the board after them."""

    round: int
    actions: dict[str, list[Action]] = Field(default_factory=dict)
    board: Board


class World(BaseModel):
    """The true board, each country's beliefs, and the per-round history."""

    countries: list[str]
    true: Board
    beliefs: dict[str, Board]
    history: list[RoundLog] = Field(default_factory=list)
    round: int = 0
    unchanged: int = 0  # rounds in a row the board and stick did not change

    def renamed(self, f: Any) -> World:
        """The same world with every country name passed through `f` (e.g. anonymised back)."""

        def acts(a: Action) -> Action:
            return a.model_copy(
                update={"target": f(a.target) if a.target != NO_TARGET else a.target}
            )

        return World(
            countries=[f(c) for c in self.countries],
            true=self.true.renamed(f),
            beliefs={f(c): b.renamed(f) for c, b in self.beliefs.items()},
            history=[
                RoundLog(
                    round=log.round,
                    actions={f(c): [acts(a) for a in v] for c, v in log.actions.items()},
                    board=log.board.renamed(f),
                )
                for log in self.history
            ],
            round=self.round,
            unchanged=self.unchanged,
        )

    @model_validator(mode="after")
    def _every_country_believes(self) -> World:
        missing = set(self.countries) - set(self.beliefs)
        if missing:
            raise ValueError(f"beliefs missing for {sorted(missing)}")
        return self


def new_world(countries: Iterable[str], initial: Board | None = None) -> World:
    """Everyone starts from the same (public) initial board."""
    countries = list(countries)
    start = initial.model_copy(deep=True) if initial else empty_board(countries)
    return World(
        countries=countries,
        true=start,
        beliefs={c: start.model_copy(deep=True) for c in countries},
        history=[RoundLog(round=0, board=start.model_copy(deep=True))],
    )


def apply_round(
    world: World, proposals: Mapping[str, list[Action]], visibility: Mapping[str, str]
) -> World:
    """All countries' (already validated) actions at once; returns a new world.

    The true board takes every action; each country's beliefs take the public actions and
    the private ones it made or that were addressed to it.
    """
    new = world.model_copy(deep=True)
    ordered = sorted(
        (
            (_apply_rank(a), new.countries.index(actor), i, actor, a)
            for actor, acts in proposals.items()
            for i, a in enumerate(acts)
        ),
        key=lambda t: t[:3],
    )
    before = new.true.state_key()
    for _, _, _, actor, action in ordered:
        apply_action(new.true, actor, action)
        for who in observers(actor, action, new.countries, visibility):
            apply_action(new.beliefs[who], actor, action)
    new.round += 1
    new.unchanged = new.unchanged + 1 if new.true.state_key() == before else 0
    new.history.append(
        RoundLog(
            round=new.round,
            actions={c: list(proposals.get(c, [])) for c in new.countries},
            board=new.true.model_copy(deep=True),
        )
    )
    return new


def should_stop(world: World, max_rounds: int, unchanged_rounds: int) -> str | None:
    """Why the game ends now, or None. `unchanged_rounds` <= 0 disables the stillness rule."""
    if world.round >= max_rounds:
        return f"round limit ({max_rounds}) reached"
    if unchanged_rounds > 0 and world.unchanged >= unchanged_rounds:
        return f"board and stick unchanged for {world.unchanged} rounds"
    return None


# --- text for prompts ------------------------------------------------------------------------


def describe_board(board: Board, viewer: str) -> str:
    """A country's own view of the board and stick, as short lines for a prompt."""
    lines = []
    own = [f"{c}: {board.relation(viewer, c)}" for c in board.countries if c != viewer]
    lines.append("Your relations: " + "; ".join(own) + ".")
    others = []
    for a, b in ((a, b) for i, a in enumerate(board.countries) for b in board.countries[i + 1 :]):
        if viewer not in (a, b) and board.relation(a, b) != NO_RELATION:
            others.append(f"{a}-{b}: {board.relation(a, b)}")
    lines.append("Known relations between others: " + ("; ".join(others) or "none") + ".")
    lines.append("Mobilized: " + (", ".join(board.mobilized) or "nobody") + ".")
    lines.append("You are " + ("" if board.is_mobilized(viewer) else "not ") + "mobilized.")
    asks = [f"{r.sender} asks you for {r.kind}" for r in board.requests if r.receiver == viewer]
    lines.append("Requests waiting for your answer: " + ("; ".join(asks) or "none") + ".")
    return "\n".join(lines)


def action_menu() -> str:
    return "\n".join(f"- {t}: {ACTION_HELP[t]}" for t in ACTION_TYPES)


# --- anonymisation ---------------------------------------------------------------------------


class Anonymiser:
    """Real names <-> neutral names (countries, places, people, events), both ways.

    Longest names are replaced first and only as whole words, so "Germany" inside
    "German Empire" or "Country B" inside "Country BA" never half-match.
    """

    def __init__(self, mapping: Mapping[str, str]) -> None:
        values = list(mapping.values())
        dupes = sorted({v for v in values if values.count(v) > 1})
        if dupes:
            raise ValueError(
                f"anonymisation: several names map to {dupes}; the mapping must be one-to-one"
            )
        both = sorted(set(mapping) & set(values))
        if both:
            raise ValueError(f"anonymisation: {both} appear as both a real and a neutral name")
        self.forward_map = dict(mapping)
        self.back_map = {v: k for k, v in mapping.items()}
        self._fwd = self._pattern(self.forward_map)
        self._back = self._pattern(self.back_map)

    @staticmethod
    def _pattern(m: Mapping[str, str]) -> re.Pattern[str] | None:
        if not m:
            return None
        alts = "|".join(re.escape(k) for k in sorted(m, key=len, reverse=True))
        return re.compile(rf"(?<!\w)(?:{alts})(?!\w)")

    @staticmethod
    def _sub(pattern: re.Pattern[str] | None, m: Mapping[str, str], text: str) -> str:
        return pattern.sub(lambda x: m[x.group(0)], text) if pattern else text

    def forward(self, text: str) -> str:
        return self._sub(self._fwd, self.forward_map, text)

    def back(self, text: str) -> str:
        return self._sub(self._back, self.back_map, text)

    def name(self, country: str) -> str:
        return self.forward_map.get(country, country)

    def real(self, neutral: str) -> str:
        return self.back_map.get(neutral, neutral)

    def translate(self, data: Any, backwards: bool = False) -> Any:
        """Every string and mapping key inside nested dicts/lists/tuples, one way or back."""
        f = self.back if backwards else self.forward
        if isinstance(data, str):
            return f(data)
        if isinstance(data, Mapping):
            return {
                (f(k) if isinstance(k, str) else k): self.translate(v, backwards)
                for k, v in data.items()
            }
        if isinstance(data, list | tuple):
            return type(data)(self.translate(v, backwards) for v in data)
        return data


# --- the scenario's `waragent:` section ----------------------------------------------------

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
