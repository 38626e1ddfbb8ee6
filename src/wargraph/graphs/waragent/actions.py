"""The WarAgent vocabulary (relations, the nineteen action types, what each does and who sees
it by default) and the Action a country proposes, with the flat schema it answers in."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from wargraph.kernel.choices import list_of, one_of

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
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return inline_refs(super().model_json_schema(*args, **kwargs))


@lru_cache(maxsize=64)
def proposal_model(
    countries: tuple[str, ...], max_actions: int = 3, message_chars: int = 300
) -> type[BaseModel]:
    """The structured output a country answers with: `{"actions": [{type, target, message}]}`.

    Enums are built per scenario so a grammar can only produce known actions and targets;
    the schema has no `$defs` and no `anyOf` (checked in the unit tests).
    """
    type_enum = one_of(ACTION_TYPES)
    target_enum = one_of((NO_TARGET, *countries))
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
        actions=(list_of(action), Field(min_length=1, max_length=max_actions)),
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
