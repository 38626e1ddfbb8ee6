"""The scripted decider: deterministic and seeded, a schema-valid answer for any ask; what\ntests and benchmarks play with (and what a bot falls back on)."""

from __future__ import annotations

import copy
import hashlib
import random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from wargraph.seats.schemas import flat_json_schema

if TYPE_CHECKING:  # the deciders use this module
    from wargraph.seats.asks import Ask, Decision


def stable_seed(*parts: Any) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class ScriptedDecider:
    """Deterministic and seeded: the same seed and ask give the same schema-valid answer.

    For tests and benchmarks only; it reads nothing and plays no strategy."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def decide(self, ask: Ask, schema: type[BaseModel], *, memory: str = "") -> Decision:
        rng = random.Random(stable_seed(self.seed, ask["id"]))
        value = scripted_value(flat_json_schema(schema), rng, f"{ask['role']} {ask['task']}")
        value.update(ask.get("scripted") or {})
        try:
            checked = schema.model_validate(value).model_dump()
            return {"value": checked, "source": "scripted"}
        except ValidationError as err:
            # A schema with constraints the generator does not know: the documented fallback.
            return {
                "value": copy.deepcopy(ask["fallback"]),
                "source": "fallback",
                "note": str(err)[:300],
            }


_WORDS = [
    "hold the line",
    "open talks",
    "move reserves forward",
    "ask allies for support",
    "issue a public statement",
    "secure the border",
    "offer a ceasefire",
    "call an emergency meeting",
]


def scripted_value(schema: dict[str, Any], rng: random.Random, label: str) -> Any:
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return scripted_value(options[0], rng, label)
    kind = schema.get("type", "string")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: scripted_value(v, rng, f"{label} {k}") for k, v in props.items()}
    if kind == "array":
        lo = schema.get("minItems", 1)
        hi = max(lo, min(schema.get("maxItems", 2), 2))
        return [
            scripted_value(schema.get("items", {}), rng, label) for _ in range(rng.randint(lo, hi))
        ]
    if kind == "integer":
        return rng.randint(schema.get("minimum", 0), schema.get("maximum", 5))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0.0), schema.get("maximum", 1.0)), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    text = f"{label} #{rng.randrange(10**6):06d}: {rng.choice(_WORDS)}"
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    text = text.ljust(lo, ".")
    return text[:hi] if hi else text
