"""The answers a power gives, as schemas registered with the deciders: orders (one enum of legal
orders per unit, so a grammar-constrained model cannot give an illegal one; free text for
people), messages, diary entries and the yearly digest. Flat, so llama.cpp grammars hold."""

from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model
from pydantic.config import JsonDict

from wargraph.graphs.diplomacy.engine import GLOBAL
from wargraph.graphs.diplomacy.order_choices import choices, key_label
from wargraph.graphs.diplomacy.scenario import DiplomacyConfig
from wargraph.kernel.choices import list_of, one_of
from wargraph.kernel.parts.press import STAY_SILENT
from wargraph.seats.names import VERBATIM
from wargraph.seats.schemas import register_schema

RELATIONS: tuple[str, ...] = ("Enemy", "Unfriendly", "Neutral", "Friendly", "Ally")
# a relationship as a number (charts, reciprocity): Enemy -2 ... Ally 2
RELATION_VALUES: dict[str, int] = {r: i - 2 for i, r in enumerate(RELATIONS)}
ACTIONS = ("send", STAY_SILENT)

# The kernel leaves string lengths out of the grammar (llama.cpp's grammar parser fails on long
# bounded repeats), so a small model rambles until max_tokens and its JSON is cut off. Short texts
# carry an equivalent pattern instead, which llama.cpp turns into a bounded rule: the answer ends
# in time and stays valid JSON. Parsing still cuts to maxLength (for people and other backends).
GRAMMAR_TEXT_LIMIT = 300

# what a person's message form says beside its fields
PEOPLE_ACTION = "send (the default) sends your messages; stay_silent sends nothing this round."
PEOPLE_MESSAGES = "To GLOBAL every power reads it; to a power only that power does."


def bounded_text(max_chars: int, *, min_chars: int = 1) -> tuple[type, Any]:
    """A text field of at most `max_chars`, bounded in the grammar too when it is short."""
    extra: JsonDict | None = None
    if max_chars <= GRAMMAR_TEXT_LIMIT:
        extra = {"pattern": f'^[^"\\\\\\n]{{{min_chars},{max_chars}}}$'}
    return (str, Field(min_length=min_chars, max_length=max_chars, json_schema_extra=extra))


def digest_chars(cfg: DiplomacyConfig, diary_chars: int | None = None) -> int:
    """The digest may be twice a diary summary (`diary_chars`, default the scenario's), but stays
    short enough for a bounded grammar."""
    chars = cfg.diary_chars if diary_chars is None else diary_chars
    return max(chars, min(2 * chars, GRAMMAR_TEXT_LIMIT))


def orders_schema(args: dict[str, Any]) -> type[BaseModel]:
    """One field per unit (or build/disband slot) whose value must be one of its legal orders:
    exactly `orders_json_schema(legal)` (an enum per key, even for a single option)."""
    legal: dict[str, list[str]] = args.get("legal") or {}
    return _orders_model(tuple((key, tuple(opts)) for key, opts in legal.items()))


# A position's legal orders recur (every game opens on the same board; a power asked again
# after the secretary sends orders back): building the model cost ~5 ms a question.
@functools.lru_cache(maxsize=512)
def _orders_model(legal: tuple[tuple[str, tuple[str, ...]], ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for key, opts in legal:
        options = opts or (f"{key} H",)
        kind: Any = Annotated[
            one_of(options),
            WithJsonSchema({"type": "string", "enum": list(options)}),
        ]
        fields[key] = (kind, ...)
    return create_model("Orders", __config__=ConfigDict(extra="forbid"), **fields)


def orders_text_schema(args: dict[str, Any]) -> type[BaseModel]:
    """For people: one order per unit or slot, checked by the secretary (the engine), which
    sends refused orders back with the reason. Each field lists its legal orders in words
    (`x-choices`: the seat page's select per unit; `x-preset`, from `preset`: the order it
    starts on, the fallback's) and takes free text as well (the terminal, and the page's "type
    an order" fallback)."""
    legal: dict[str, list[str]] = args.get("legal") or {}
    preset: dict[str, str] = args.get("preset") or {}
    fields: dict[str, Any] = {}
    for key, opts in legal.items():
        shown: dict[str, Any] = {"x-choices": choices(key, opts), "x-label": key_label(key)}
        if preset.get(key) in opts:
            shown["x-preset"] = preset[key]  # what the page's select starts on
        fields[key] = (
            str,
            Field(
                default="",
                max_length=80,
                description=_order_hint(key, opts),
                json_schema_extra=shown,
            ),
        )
    return create_model("OrdersText", __config__=ConfigDict(extra="forbid"), **fields)


def _order_hint(key: str, legal: list[str]) -> str | None:
    """A unit's field may leave the unit out (the secretary puts it in front): say so, with one
    of its own moves."""
    if not key.startswith(("A ", "F ")):
        return None
    move = next((o.removeprefix(key).strip() for o in legal if o.startswith(f"{key} - ")), "")
    shown = f'"{move}" or "H"' if move else '"H"'
    return f"for example {shown} (the unit may be left out)"


def free_orders_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Free orders (`diplomacy.orders: free`): a list of order strings the model writes itself,
    checked by the secretary (the engine). Each string is `verbatim`: no name or echo repair
    touches it (an order repeats the question's words by nature), so the record and the
    invalid-order rate hold what the model wrote."""
    # no length limit: an over-long "order" (SmolLM2 wrote prose) reaches the secretary whole
    # and counts as an invalid order, rather than voiding the answer or being cut unseen; the
    # answer's max_tokens bounds it
    order = Annotated[str, WithJsonSchema({"type": "string", "format": VERBATIM})]
    # at least one order: a power is asked only when it has something to order (a small model
    # given the choice wrote `{"orders": []}` every time)
    return create_model(
        "FreeOrders",
        __config__=ConfigDict(extra="forbid"),
        orders=(list[order], Field(..., min_length=1)),
    )


def messages_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Sending is the normal answer: `action` first, send first, then at least one message (to
    a power by name or GLOBAL). Silence is an explicit choice (`action: stay_silent`; the
    messages are not sent): a schema whose shortest answer is an empty list is what a
    grammar-bound small model picks, a choice named "pass" it took for sending, and a choice
    after the messages it made against them (re-asked SmolLM2 prompts: "pass" after the
    messages 14 of 27, "stay_silent" after them 1 of 27, "stay_silent" first 0 of 18)."""
    recipients = tuple(args.get("recipients") or (GLOBAL,))
    message = create_model(
        "Message",
        to=(one_of(recipients), ...),
        text=bounded_text(int(args.get("chars", 300))),
    )
    limit = max(1, int(args.get("limit", 2)))

    def grammar_only(schema: dict[str, Any]) -> None:
        # the grammar asks for the choice and one message at least; a person (or a backend
        # without grammars) may leave `action` out (send) and give no message
        schema["required"] = ["action", "messages"]
        schema["properties"]["messages"]["minItems"] = 1

    if args.get("people"):  # a person's form: nothing forced, each field says what it does
        return create_model(
            "Messages",
            action=(one_of(ACTIONS), Field("send", description=PEOPLE_ACTION)),
            messages=(
                list_of(message),
                Field(default_factory=list, max_length=limit, description=PEOPLE_MESSAGES),
            ),
        )
    return create_model(
        "Messages",
        __config__=ConfigDict(json_schema_extra=grammar_only),
        action=(one_of(ACTIONS), "send"),
        messages=(list_of(message), Field(default_factory=list, max_length=limit)),
    )


def diary_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Summary first: the agent keeps the first text field as its private note."""
    chars = int(args.get("chars", 240))
    fields: dict[str, Any] = {
        "summary": bounded_text(chars),
        "intent": bounded_text(max(40, chars // 2), min_chars=0),
        "goals": bounded_text(max(40, chars // 2), min_chars=0),
    }
    current: dict[str, str] = (args.get("current") or {}) if args.get("people") else {}
    for other in args.get("others") or []:  # a model's grammar asks for every field
        kept = current.get(other)
        fields[other] = (one_of(RELATIONS), kept if kept in RELATIONS else ...)
    return create_model("Diary", **fields)


def digest_schema(args: dict[str, Any]) -> type[BaseModel]:
    return create_model("Digest", digest=bounded_text(int(args.get("chars", 480))))


register_schema("diplomacy_orders", orders_schema)
register_schema("diplomacy_orders_text", orders_text_schema)
register_schema("diplomacy_orders_free", free_orders_schema)
register_schema("diplomacy_messages", messages_schema)
register_schema("diplomacy_diary", diary_schema)
register_schema("diplomacy_digest", digest_schema)
