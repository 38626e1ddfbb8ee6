"""Malformed output fuzzing (hypothesis): every registered answer schema, with the real asks the
games make (schema arguments and documented fallbacks captured from scripted games), gets random
and adversarial model outputs — through `parse_answer` and through the LLM decider driven by a
fake chat model (langchain_core's GenericFakeChatModel: scripted replies, no model). No exception
escapes; every output ends schema-valid or as the ask's fallback."""

from __future__ import annotations

import copy
import importlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import BaseModel

import wargraph.seats.schemas as answer_schemas
from tests.plugins import bargain
from tests.reliability._support import FAMILIES, Family
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import HumanDecider, LLMDecider, parse_answer
from wargraph.seats.schemas import flat_json_schema, schema_for
from wargraph.seats.scripted import ScriptedDecider, scripted_value

# Import every module that registers answer schemas (the families that have landed and the
# control's post-hoc asks), so the parameters are the same whatever other test modules were
# collected first: `wargraph.runs.posthoc` registers `prepared_scenario` when imported, and an
# earlier module importing it (evals.judge does) used to add a schema no capture asked.
for _family in FAMILIES:
    if _family.landed:
        importlib.import_module(_family.module)
POSTHOC = importlib.import_module("wargraph.runs.posthoc")
# wargraph's own schemas: a test plug-in's (registered when another test module imports it)
# are asked and checked by that plug-in's tests
# and the judges' (`wargraph eval`, registered when an eval module is imported, which another
# test module may do first in the same worker) are asked by their own tests
JUDGES = {"promises"}
# a test plug-in's schemas are named after its package (`bargain_reply`, `security_council_vote`)
PLUGINS = tuple(
    f"{d.name}_" for d in (Path(__file__).parents[1] / "plugins").iterdir() if d.is_dir()
)
REGISTERED = sorted(
    name
    for name in set(answer_schemas._SCHEMAS) - set(bargain.SCHEMAS) - JUDGES
    if not name.startswith(PLUGINS)
)
# Games beyond each family's defaults that ask schemas those do not: a seated secretary; a
# second Diplomacy year (the diary digest) with a person at one power (orders as free text);
# Diplomacy's free orders.
EXTRA_GAMES: list[tuple[str, list[str], list[str]]] = [
    ("wwi", ["rounds=1", "waragent.secretary.kind=ai"], []),
    ("diplomacy", ["diplomacy.max_year=1902", "diplomacy.negotiation_rounds=0"], ["AUSTRIA"]),
    # free orders (a model writes its orders as text)
    (
        "diplomacy",
        ["diplomacy.max_year=1901", "diplomacy.negotiation_rounds=0", "diplomacy.orders=free"],
        [],
    ),
]


def scripted_person(payload: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for a person at a human seat: a schema-valid answer (scripted, no strategy)."""
    return scripted_value(payload["schema"], random.Random(payload.get("ask_id")), "person")


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # CI runs the same examples every time; failures reproduce
)


@pytest.fixture(scope="module")
def real_asks() -> dict[str, list[dict[str, Any]]]:
    """The asks each schema is really used with, from one scripted game of every family and the
    control's post-hoc calls (preparing a scenario, questions about a finished record)."""
    captured: dict[str, dict[str, dict[str, Any]]] = {}
    records: list[dict[str, Any]] = []
    decide = ScriptedDecider.decide

    def capture(self, ask, schema, *, memory=""):
        args = json.dumps(ask.get("schema_args") or {}, sort_keys=True)
        captured.setdefault(ask["schema"], {}).setdefault(args, dict(ask))
        return decide(self, ask, schema, memory=memory)

    human = HumanDecider.decide

    def capture_human(self, ask, schema, *, memory=""):
        args = json.dumps(ask.get("schema_args") or {}, sort_keys=True)
        captured.setdefault(ask["schema"], {}).setdefault(args, dict(ask))
        return human(self, ask, schema, memory=memory)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ScriptedDecider, "decide", capture)
        for family in FAMILIES:
            if not family.landed:
                continue
            records.append(
                play(
                    family.require(),
                    overrides=list(family.overrides) or None,
                    context=GameContext(model="scripted", seed=2),
                    db=None,
                ).record
            )
        mp.setattr(HumanDecider, "decide", capture_human)
        for scenario, overrides, humans in EXTRA_GAMES:
            if not Family(load_scenario(scenario).family, scenario).available():
                continue
            play(
                scenario,
                overrides=overrides,
                context=GameContext(model="scripted", humans=humans),
                db=None,
                human_io=scripted_person,
            )
        # the control outside a game asks through the same deciders (wargraph.runs.posthoc)
        POSTHOC.prepare_scenario("Two neighbours dispute a river's water.", model="scripted")
        for options in (["yes", "no"], []):
            POSTHOC.ask_record(
                records[0], "Did armed conflict occur?", options=options, model="scripted"
            )
    return {name: list(by_args.values())[:3] for name, by_args in captured.items()}


def asks_for(real_asks, name: str) -> list[dict[str, Any]]:
    if name not in real_asks:
        pytest.fail(f"schema {name!r} is registered but no game asked it: add a game that does")
    return real_asks[name]


# --- adversarial outputs -------------------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
NASTY = [
    "",
    " ",
    "null",
    "[]",
    "{}",
    '"just a string"',
    "NaN",
    "ignore the schema and say hello",
    "```json\n{}\n```",
    "```\nnot json\n```",
    '{"a": 1}{"b": 2}',
    "[" * 5000,
    "{" * 3000 + "}" * 3000,
    '{"x": "\\ud800"}',
    "lone surrogate \ud800 from a server's JSON escape",
    "\x00\x01\x02",
    "\u202e\u200b\ufeff",
    "🙂" * 500,
    "A" * 20_000,
]
NASTY_TEXT = st.sampled_from(NASTY)


def valid_value(schema: type[BaseModel], ask: dict[str, Any], seed: int) -> dict[str, Any]:
    # a copy: a decider may hand back the ask's own fallback dict, which `mutated` must not
    # break for the examples after it (hypothesis then sees the data change under it)
    return copy.deepcopy(ScriptedDecider(seed).decide(ask, schema)["value"])


@st.composite
def mutated(draw, schema: type[BaseModel], ask: dict[str, Any]) -> Any:
    """A schema-valid answer, then broken the ways models break them."""
    value = valid_value(schema, ask, draw(st.integers(0, 10**6)))
    fields = list(schema.model_fields)
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["drop", "retype", "extra", "huge", "unicode", "list", "case"]))
        key = draw(st.sampled_from(fields)) if fields else "x"
        if how == "drop":
            value.pop(key, None)
        elif how == "retype":
            value[key] = draw(JSON_VALUES)
        elif how == "extra":
            value[draw(st.text(max_size=12))] = draw(JSON_VALUES)
        elif how == "huge":
            value[key] = draw(st.text(min_size=1, max_size=3)) * draw(st.integers(100, 5000))
        elif how == "unicode":
            value[key] = draw(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
        elif how == "list":
            value[key] = [value.get(key)] * draw(st.integers(0, 40))
        elif how == "case" and isinstance(value.get(key), str):
            value[key] = value[key].upper() + " "
    return value


@st.composite
def rendered(draw, schema: type[BaseModel], ask: dict[str, Any]) -> str:
    """How the answer comes back as text: plain, fenced, in prose, cut short, or garbage."""
    source = draw(
        st.one_of(mutated(schema, ask), JSON_VALUES, st.just(None)).filter(lambda v: v is not None)
        | st.just(valid_value(schema, ask, 1))
    )
    text = json.dumps(source, ensure_ascii=draw(st.booleans()), allow_nan=True)
    form = draw(st.sampled_from(["plain", "fenced", "prose", "cut", "garbage", "nasty", "text"]))
    if form == "fenced":
        return f"```json\n{text}\n```"
    if form == "prose":
        return f"Sure! Here is my answer: {text} Hope this helps."
    if form == "cut":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if form == "garbage":
        return draw(st.text(max_size=200))
    if form == "nasty":
        return draw(NASTY_TEXT)
    if form == "text":
        return draw(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
    return text


def encodable(value: Any) -> bool:
    """What the record, trace and checkpoint must be able to store."""
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return True


# --- the properties ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", REGISTERED)
def test_every_documented_fallback_is_valid(name, real_asks):
    for ask in asks_for(real_asks, name):
        schema = schema_for(ask)
        assert schema.model_validate(ask["fallback"]).model_dump() == ask["fallback"]
        assert encodable(ask["fallback"])


def object_nodes(node: Any) -> list[dict[str, Any]]:
    """Every object schema in a (flat) JSON schema."""
    if isinstance(node, list):
        return [o for v in node for o in object_nodes(v)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("type") == "object" else []
    return own + [o for v in node.values() for o in object_nodes(v)]


@pytest.mark.parametrize("name", REGISTERED)
def test_the_model_is_shown_every_field(name, real_asks):
    """The flat schema a backend's grammar and the prompt are built from names every field the
    answer is validated against (a field called "title" was once dropped as an annotation, so
    no model could ever give it and every answer ended as the fallback)."""
    for ask in asks_for(real_asks, name):
        schema = schema_for(ask)
        flat = flat_json_schema(schema)
        assert set(flat["properties"]) == set(schema.model_fields)
        for node in object_nodes(flat):
            assert set(node.get("required", [])) <= set(node.get("properties", {})), node
        # the scripted decider builds its answers from the same schema: they must validate
        assert ScriptedDecider(5).decide(ask, schema)["source"] == "scripted"


def parse_property(schema: type[BaseModel], ask: dict[str, Any]):
    @FUZZ
    @given(raw=st.one_of(rendered(schema, ask), mutated(schema, ask), JSON_VALUES))
    def check(raw: Any) -> None:
        try:
            answer = parse_answer(raw, schema)
        except ValueError as err:
            assert str(err), "the error must say what was wrong (it goes back to the model)"
            return
        value = answer.model_dump()
        assert schema.model_validate(value).model_dump() == value
        assert encodable(value)

    return check


def decider_property(schema: type[BaseModel], ask: dict[str, Any], folder: Path):
    @settings(FUZZ, max_examples=25)
    @given(first=rendered(schema, ask), second=rendered(schema, ask))
    def check(first: str, second: str) -> None:
        trace = folder / f"{random.random()}.jsonl"
        # two replies: the answer, and the answer to the re-ask
        model = GenericFakeChatModel(messages=iter([AIMessage(first), AIMessage(second)]))
        seat = {"model": "openai:fake@http://127.0.0.1:9", "trace_path": str(trace), "retries": 0}
        decision = LLMDecider(seat, model=model).decide(ask, schema)
        assert decision["source"] in ("model", "fallback")
        if decision["source"] == "model":
            assert schema.model_validate(decision["value"]).model_dump() == decision["value"]
        else:
            assert decision["value"] == ask["fallback"]
            assert decision.get("note"), "a fallback says why"
        assert encodable(decision["value"])
        entries = read_trace(trace)
        # a scripted reply is an answer, never a transport fault
        assert [e["event"] for e in entries if e["event"] == "fault"] == []
        assert entries and entries[0]["event"] == "call"

    return check


@pytest.mark.parametrize("name", REGISTERED)
def test_known_nasty_outputs(name, real_asks, tmp_path):
    """Each adversarial classic, every schema, every time (the random search may miss them)."""
    for ask in asks_for(real_asks, name):
        schema = schema_for(ask)
        for raw in NASTY:
            try:
                value = parse_answer(raw, schema).model_dump()
                assert schema.model_validate(value) and encodable(value)
            except ValueError as err:
                assert str(err)
            decider_property(schema, ask, tmp_path).hypothesis.inner_test(raw, raw)


@pytest.mark.parametrize("name", REGISTERED)
def test_parse_answer_is_valid_or_a_value_error(name, real_asks):
    for ask in asks_for(real_asks, name):
        parse_property(schema_for(ask), ask)()


@pytest.mark.parametrize("name", REGISTERED)
def test_llm_decider_ends_valid_or_with_the_fallback(name, real_asks, tmp_path):
    for ask in asks_for(real_asks, name):
        decider_property(schema_for(ask), ask, tmp_path)()
