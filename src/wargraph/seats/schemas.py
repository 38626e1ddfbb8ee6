"""The answer schemas: registered by name (a pydantic model, or a factory of one from an ask's\narguments), built once per name and arguments, and flattened for llama.cpp's grammars."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:  # the deciders use this module
    from wargraph.seats.asks import Ask


SchemaFactory = Callable[[dict[str, Any]], type[BaseModel]]


_SCHEMAS: dict[str, SchemaFactory] = {}


def register_schema(name: str, factory: SchemaFactory | type[BaseModel]) -> None:
    if isinstance(factory, type):
        if not issubclass(factory, BaseModel):
            raise TypeError(f"schema {name!r}: {factory.__name__} is not a pydantic model")
        model = factory
        _SCHEMAS[name] = lambda _args: model
    else:
        _SCHEMAS[name] = factory
    _model_for.cache_clear()  # a name registered again makes new models


def schema_for(ask: Ask) -> type[BaseModel]:
    """The answer model of an ask. Building a pydantic model and its JSON schema costs more than
    a scripted game's whole step, so a model is made once per schema and arguments (the same
    recipients, relations or legal orders recur across seats and rounds)."""
    if ask["schema"] not in _SCHEMAS:
        raise KeyError(f"no answer schema registered as {ask['schema']!r}")
    args = ask.get("schema_args") or {}
    return _model_for(ask["schema"], json.dumps(args, sort_keys=True, default=str))


def prepare_schema(name: str, args: dict[str, Any]) -> None:
    """Build the answer model (and its flat JSON schema) an ask of `name` with `args` will use,
    ahead of the ask (`wargraph.kernel.ahead`)."""
    flat_json_schema(schema_for({"schema": name, "schema_args": args}))  # type: ignore[typeddict-item]


@lru_cache(maxsize=4096)
def _model_for(name: str, args_json: str) -> type[BaseModel]:
    return _SCHEMAS[name](json.loads(args_json))


@lru_cache(maxsize=4096)
def flat_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Inline `$defs` so llama.cpp's grammar converter sees one flat schema. Made once per model
    and shared: read it, never change it (a payload that leaves this process gets a copy)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any, fields: bool = False) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and not fields:
                return inline(defs[node["$ref"].split("/")[-1]])
            # drop the `title` annotations, never a field called "title" (`fields`: the keys of
            # a `properties` mapping are field names, not schema keywords)
            return {
                k: inline(v, fields=k == "properties" and not fields)
                for k, v in node.items()
                if fields or k != "title"
            }
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)


_LENGTH_KEYS = ("maxLength", "minLength")


# Characters llama-cpp-python's grammar writer does not escape in a literal: a double quote
# ended the literal early and llama.cpp crashed the process (SIGSEGV) on the grammar it made.
_UNSAFE_IN_LITERAL = re.compile(r'["\\\x00-\x1f\x7f]')
_LITERAL_STAND_INS = {'"': "'", "\\": "/"}


def grammar_text(value: str) -> str:
    """A choice as the grammar offers it: a double quote as ', a backslash as /, a control
    character as a space (the answer is mapped back to the choice it stands for)."""
    return _UNSAFE_IN_LITERAL.sub(lambda m: _LITERAL_STAND_INS.get(m.group(0), " "), value)


def _grammar_choices(values: Any) -> Any:
    if isinstance(values, list):
        return [grammar_text(v) if isinstance(v, str) else v for v in values]
    return grammar_text(values) if isinstance(values, str) else values


def grammar_schema(schema: Any) -> Any:
    """The schema sent to the backend: llama.cpp unrolls string lengths into grammar rules and
    refuses long ones, so lengths are left to `max_tokens` and enforced when parsing; choices
    (`enum`, `const`) hold only characters its grammars can carry (`grammar_text`), whoever
    wrote them (a record's line, a person's option)."""
    if isinstance(schema, dict):
        return {
            k: _grammar_choices(v) if k in ("enum", "const") else grammar_schema(v)
            for k, v in schema.items()
            if k not in _LENGTH_KEYS
        }
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


def restore_choices(value: Any, schema: dict[str, Any]) -> Any:
    """An answer's choices as the schema spells them: a choice given as `grammar_text` made it
    is the one choice it stands for."""
    if isinstance(value, str) and isinstance(schema.get("enum"), list):
        if value in schema["enum"]:
            return value
        meant = [c for c in schema["enum"] if isinstance(c, str) and grammar_text(c) == value]
        return meant[0] if len(meant) == 1 else value
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: restore_choices(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [restore_choices(v, schema["items"]) for v in value]
    return value


_GBNF_RULE = re.compile(r"^([A-Za-z0-9-]+)\s*::=\s*(.*)$")
_GBNF_TOKEN = re.compile(
    r'\s+|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|[A-Za-z0-9-]+|[|()*+?.]|\{\d*(?:,\d*)?\}'
)


def grammar_problem(gbnf: str) -> str | None:
    """What is wrong with a GBNF grammar, checked before llama.cpp sees it (it dereferences a
    grammar it failed to parse): each line a rule, its body only well-formed literals, character
    classes, operators and the names of rules that are defined; a root rule."""
    rules: dict[str, str] = {}
    for line in gbnf.splitlines():
        if not line.strip():
            continue
        rule = _GBNF_RULE.match(line)
        if not rule:
            return f"not a rule: {line[:80]!r}"
        rules[rule.group(1)] = rule.group(2)
    if "root" not in rules:
        return "no root rule"
    for name, body in rules.items():
        at = 0
        while at < len(body):
            token = _GBNF_TOKEN.match(body, at)
            if not token:
                return f"rule {name}: cannot read {body[at : at + 40]!r}"
            word = token.group(0)
            if word[0].isalnum() and word not in rules:
                return f"rule {name}: no rule called {word!r}"
            at = token.end()
    return None


def fit_lengths(value: Any, schema: dict[str, Any]) -> Any:
    """Documented fallback for over-long text: cut it to the field's maxLength."""
    if isinstance(value, str) and "maxLength" in schema:
        return value[: schema["maxLength"]]
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: fit_lengths(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [fit_lengths(v, schema["items"]) for v in value]
    return value
