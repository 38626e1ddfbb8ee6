"""The answer schemas: registered by name (a pydantic model, or a factory of one from an ask's\narguments), built once per name and arguments, and flattened for llama.cpp's grammars."""

from __future__ import annotations

import json
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


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema sent to the backend: llama.cpp unrolls string lengths into grammar rules and
    refuses long ones, so lengths are left to `max_tokens` and enforced when parsing."""
    if isinstance(schema, dict):
        return {k: grammar_schema(v) for k, v in schema.items() if k not in _LENGTH_KEYS}
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


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
