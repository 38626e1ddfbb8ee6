"""Deciders: every choice in a game is asked of one — a model, a person (interrupt) or a script.

An `Ask` is plain data (it travels in the game's `asks` channel and its checkpoints); its answer
schema is looked up by name in a registry so dynamic schemas (e.g. one enum of legal orders per
unit) work.
"""

from __future__ import annotations

import copy
import json
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from wargraph.kernel.views import unseen_notes
from wargraph.models.cache import ModelCache, cache_for, call_keys, generations
from wargraph.models.chat import (
    ModelRef,
    ModelRefError,
    ModelRefused,
    chat_model,
    endpoint_limit,
    parse_model_ref,
    structured_kwargs,
    usage_of,
)
from wargraph.models.faults import (
    DEFAULT_MAX_FAULTS,
    ModelUnavailable,
    current_thread_id,
    fault_text,
    stop_message,
    streaks,
)
from wargraph.models.profiles import Profile, plain_text_kwargs, seat_profile
from wargraph.models.ratelimit import retry_after_s
from wargraph.models.waits import waiting
from wargraph.runs.trace import CACHED, record_call
from wargraph.seats.asks import Ask, Decision, Seat
from wargraph.seats.bots import PREFIX as BOT_PREFIX
from wargraph.seats.bots import BotDecider, is_bot
from wargraph.seats.echoes import drop_restated
from wargraph.seats.limits import Cut, cut_to_limits, limits_line, over_limit_reason, over_limits
from wargraph.seats.names import Correction, correct_names, correct_value, map_free_text
from wargraph.seats.plaintext import as_written, text_field, trim_to_sentence, unwrap_text
from wargraph.seats.schemas import (
    fit_lengths,
    flat_json_schema,
    grammar_problem,
    grammar_schema,
    restore_choices,
)
from wargraph.seats.scripted import ScriptedDecider, stable_seed
from wargraph.store.errors import StoreError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


# --- the schema registry --------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


# --- parsing model output ---------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _loads(text: str) -> Any:
    """json.loads, but too deep a nesting ("[[[[...") is bad JSON, not a RecursionError; raw
    control characters (newlines) inside strings are accepted, as llama.cpp's grammars let them
    through."""
    try:
        return json.loads(text, strict=False)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def over_length(value: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    """Each text of `value` longer than its field's maxLength: "plan: 5,000 characters, the
    most is 1,200"."""
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        return [
            f"{where or 'answer'}: {len(value):,} characters, the most is {schema['maxLength']:,}"
        ]
    out: list[str] = []
    if isinstance(value, dict) and "properties" in schema:
        for k, v in value.items():
            out += over_length(v, schema["properties"].get(k, {}), f"{where}.{k}" if where else k)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value, 1):
            out += over_length(v, schema["items"], f"{where} {i}" if where else str(i))
    return out


def parse_answer(
    raw: Any,
    schema: type[M],
    *,
    lengths: str = "fit",
    cuts: list[Cut] | None = None,
    cut: bool = True,
) -> M:
    """Validate a model's or a person's answer. Raises ValueError with a message to send back.
    `cut=False` (a person's answer): text over its limit is refused with the limit, never cut.
    A model's text over its limit: `lengths`, `cuts` (see `plain_answer`)."""
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            raise ValueError("the answer was empty")
        fenced = _FENCE.search(text)
        if fenced:
            text = fenced.group(1).strip()
        try:
            raw = _loads(text)
        except json.JSONDecodeError as err:
            start, end = text.find("{"), text.rfind("}")
            try:
                if start < 0 or end <= start:
                    raise err
                raw = _loads(text[start : end + 1])
            except json.JSONDecodeError:
                field = text_field(schema)
                if field is None:
                    raise ValueError(f"the answer was not valid JSON ({err.msg})") from None
                # a plain-text answer to a one-text-field question, its JSON dressing peeled off
                raw = {field: unwrap_text(text, field)}
    if not isinstance(raw, dict):
        raise ValueError(f"the answer must be a JSON object, not {type(raw).__name__}")
    if not cut:
        longer = over_length(raw, flat_json_schema(schema))
        if longer:
            raise ValueError(f"too long, write it shorter ({'; '.join(longer[:5])})")
        return validate_value(raw, schema)
    return validate_value(check_lengths(raw, schema, lengths, cuts), schema)


@lru_cache(maxsize=512)
def _grammar_problem_of(schema_json: str) -> str | None:
    """`grammar_problem` of the grammar llama-cpp-python writes for a schema (once per schema)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return grammar_problem(json_schema_to_gbnf(schema_json))
    except Exception as exc:  # noqa: BLE001 (its converter refusing the schema is a problem too)
        return f"no grammar for the schema ({exc})"


def validate_value(raw: dict[str, Any], schema: type[M]) -> M:
    """Over-long text cut to its limit (documented), then pydantic; errors name the fields."""
    raw = fit_lengths(restore_choices(raw, flat_json_schema(schema)), flat_json_schema(schema))
    try:
        return schema.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}"
            for e in err.errors()[:5]
        )
        raise ValueError(f"the answer did not match the schema ({problems})") from None


def plain_answer(
    reply: Any,
    schema: type[BaseModel],
    field: str,
    names: dict[str, list[str]] | None = None,
    *,
    start: str = "",
    instructions: str = "",
    lengths: str = "fit",
    cuts: list[Cut] | None = None,
    shape: bool = True,
) -> tuple[BaseModel, list[Correction], list[str]]:
    """A model's prose for a one-text-field question, put into the field in code (`shape`: its
    wrappers peeled off, `unwrap_text`; else as written, `as_written`), less the
    sentences that restate its `instructions` (wargraph.seats.echoes), with the sides' misspelt names
    corrected (`names`: the ask's sides and entities; see wargraph.seats.names); and the corrections
    and the sentences dropped. An answer that is only the `start` it was given ("In move 1,"),
    or only instructions restated, is not usable: it says nothing.

    `lengths` (`check_lengths`): "fit" cuts text over its limit to it (the small profile), "ask"
    refuses it with the limit, "cut" cuts it at a sentence or word end; each cut is added to
    `cuts`. A reply the length cap ended is cut at its last sentence end, and counted too."""
    text = (unwrap_text if shape else as_written)(str(reply.content), field)

    def says_nothing(text: str) -> bool:  # nothing but the start it was given, and punctuation
        return not text.strip().removeprefix(start.strip()).strip(" \n,.;:-")

    if start and says_nothing(text):
        raise ValueError(f"the answer stops after its first words ({start.strip()!r})")
    if (getattr(reply, "response_metadata", None) or {}).get("finish_reason") == "length":
        whole = text
        text = trim_to_sentence(text)  # cut by the length cap: end on a whole sentence
        if cuts is not None and text != whole:  # never a silent cut, whatever the profile
            cuts.append(
                {
                    "field": field,
                    "chars": len(whole),
                    "limit": 0,
                    "kept": len(text),
                    "why": "tokens",
                }
            )
    text, dropped = drop_restated(text, instructions) if instructions else (text, [])
    if dropped and says_nothing(text):
        raise ValueError("the answer only restates its instructions; answer the question itself")
    fixes: list[Correction] = []
    if names:
        text, fixes = correct_names(text, names.get("sides", []), names.get("entities", []))
    value = check_lengths({field: text}, schema, lengths, cuts)
    return validate_value(value, schema), fixes, dropped


def check_lengths(
    value: dict[str, Any], schema: type[BaseModel], lengths: str, cuts: list[Cut] | None
) -> dict[str, Any]:
    """Text over its limit under `lengths` (see `plain_answer`): "fit" leaves it to
    `validate_value` (cut to the limit) and adds the cut to `cuts`, "ask" raises with the
    limits, "cut" cuts it at a sentence or word end (`wargraph.seats.limits.cut_text`) and adds
    each cut to `cuts`."""
    flat = flat_json_schema(schema)
    if lengths == "fit":  # cut to the limit as it stands (`validate_value`), and said
        if cuts is not None:
            cuts.extend(
                {"field": where, "chars": chars, "limit": limit, "kept": limit, "why": "fit"}
                for where, chars, limit in over_limits(value, flat)
            )
        return value
    if lengths == "ask":
        found = over_limits(value, flat)
        if found:
            raise ValueError(over_limit_reason(found))
        return value
    value, made = cut_to_limits(value, flat)
    if cuts is not None:
        cuts.extend(made)
    return value


def json_answer(
    raw: str,
    schema: type[BaseModel],
    names: dict[str, list[str]] | None = None,
    *,
    instructions: str = "",
    lengths: str = "fit",
    cuts: list[Cut] | None = None,
) -> tuple[BaseModel, list[Correction], list[str]]:
    """A model's JSON answer, validated (text over its limit: `lengths`, `cuts`, see
    `plain_answer`), its free-text fields (fields picked from an enum stay) less the sentences
    that restate its `instructions` and with the sides' misspelt names corrected (`names`: the
    ask's sides and entities); and the corrections and the sentences dropped. A text field left
    empty by the dropping fails validation where it must have text."""
    answer = parse_answer(raw, schema, lengths=lengths, cuts=cuts)
    value, flat = answer.model_dump(), flat_json_schema(schema)
    dropped: list[str] = []
    if instructions:

        def drop(text: str) -> str:
            kept, gone = drop_restated(text, instructions)
            dropped.extend(gone)
            return kept

        value = map_free_text(value, flat, drop)
    fixes: list[Correction] = []
    if names:
        value, fixes = correct_value(value, flat, names.get("sides", []), names.get("entities", []))
    if not (fixes or dropped):
        return answer, [], []
    try:
        return validate_value(value, schema), fixes, dropped
    except ValueError as err:
        raise ValueError(f"{err}, once the instructions restated in it were left out") from None


# --- the three deciders -------------------------------------------------------------------------


class LLMDecider:
    """Prompt + model + schema, validated, re-asked once with the reason, then the ask's documented
    fallback. A one-text-field question is asked for prose (no grammar; the text is put into the
    field in code); any other is grammar-constrained JSON where the backend allows. Every call,
    unusable answer, fallback and stop is traced with its reason."""

    def __init__(self, seat: Seat, model: Any = None) -> None:
        self.seat = seat
        self.ref: ModelRef = parse_model_ref(seat.get("model"))
        self.profile: Profile = seat_profile(seat)
        self._given = model  # a ready chat model (tests, custom backends); else built lazily

    @property
    def max_tokens(self) -> int:
        return max(int(self.seat.get("max_tokens") or 200), self.profile.min_tokens)

    def _model(self) -> BaseChatModel:
        if self._given is not None:
            return self._given
        timeout = self.seat.get("timeout")
        return chat_model(
            self.ref,
            temperature=float(self.seat.get("temperature", 0.7)),
            max_tokens=self.max_tokens,
            seed=int(self.seat.get("seed", 0)),
            timeout=float(timeout if timeout is not None else self.profile.call_timeout),
        )

    def _trace(self, ask: Ask, event: str, **fields: Any) -> None:
        if event in ("call", CACHED):  # the seat's profile and what its view showed (records.py)
            fields = {**fields, **view_fields(ask, self.profile.name)}
        record_call(self.seat.get("trace_path"), {**_where(ask), "event": event, **fields})

    def _check_grammar(self, ask: Ask, bind: dict[str, Any]) -> None:
        """The grammar llama.cpp will be given, checked first: it crashes the process on one it
        cannot parse. A bad one is dropped (the answer is still JSON, checked when parsed) and
        the trace says so."""
        why = _grammar_problem_of(json.dumps(bind["response_format"]["schema"], sort_keys=True))
        if why:
            bind["response_format"] = {"type": "json_object"}
            self._trace(ask, "grammar_dropped", error=why)

    def decide(self, ask: Ask, schema: type[BaseModel], *, memory: str = "") -> Decision:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        json_schema = flat_json_schema(schema)
        field = text_field(schema)
        profile = self.profile
        if field is not None:
            # prose needs no grammar: several times faster, and no JSON to nest the text in
            limit = json_schema["properties"][field].get("maxLength")
            cap = self.max_tokens
            if limit and not profile.reask_over_limit:  # the capable re-ask instead
                cap = min(cap, limit // 3 + 1)
            bind = plain_text_kwargs(self.ref, cap, profile)
            local = self.ref.provider in ("embedded", "gguf")
            if ask.get("answer_start") and local and profile.answer_start:
                bind["answer_start"] = ask["answer_start"]
            again = f"Answer again with only the {field} itself" + (
                ", in plain sentences, no JSON." if profile.shape_plain else "."
            )
        else:
            name = ask["schema"].replace(".", "_")
            bind = structured_kwargs(self.ref, grammar_schema(json_schema), name=name)
            if self.ref.provider in ("embedded", "gguf"):
                self._check_grammar(ask, bind)
            again = "Answer again with one JSON object that matches the schema."
        # a seed per question: with the seat's one seed every call draws the same random numbers,
        # and a small model opened its second plan with its first one's words
        bind["seed"] = stable_seed(self.seat.get("seed", 0), ask["id"]) % 2**31
        if self.ref.provider in ("embedded", "gguf") and profile.keep_names:
            kept = ask.get("names") or {}
            if kept.get("sides"):  # in process: the sides' names kept whole while sampling
                bind["keep_names"] = [*kept["sides"], *kept.get("entities", [])]
        said = limits_line(json_schema, field) if profile.state_limits else ""
        messages = [
            SystemMessage(ask["system"]),
            HumanMessage(user_prompt(ask, memory, json_schema, limits=said)),
        ]
        # the repairs of the profile (wargraph.models.profiles): none under the capable one
        names = ask.get("names") if profile.correct_names else None
        asked = instructions_of(ask) if profile.drop_echoes else ""
        last_error, cause = "", "unusable"
        for attempt in (1, 2):
            # capable: text over its limit is asked again once with the limit, then cut
            lengths = "fit" if not profile.reask_over_limit else "ask" if attempt == 1 else "cut"
            cuts: list[Cut] = []
            reply, error = self._call(ask, messages, bind, attempt, "text" if field else "json")
            if reply is None:
                # The endpoint failed every retry: there is no answer to re-ask about (a re-ask
                # would send the model an empty reply of its own and double the load).
                last_error, cause = error or "", "transport"
                break
            raw = str(reply.content)
            try:
                if field:
                    answer, fixes, dropped = plain_answer(
                        reply,
                        schema,
                        field,
                        names,
                        start=bind.get("answer_start", ""),
                        instructions=asked,
                        lengths=lengths,
                        cuts=cuts,
                        shape=profile.shape_plain,
                    )
                else:
                    answer, fixes, dropped = json_answer(
                        raw, schema, names, instructions=asked, lengths=lengths, cuts=cuts
                    )
                decision: Decision = {"value": answer.model_dump(), "source": "model"}
                if cuts:  # never a silent cut: where, how long, what was kept
                    self._trace(ask, "cut", cuts=cuts, output=decision["value"])
                    decision["note"] = "cut to the limit: " + ", ".join(
                        f"{c['field']} {c['chars']} -> {c['kept']} characters" for c in cuts
                    )
                if fixes or dropped:
                    # the raw output stays in the call's trace line; what was changed, here
                    self._trace(
                        ask,
                        "corrected",
                        corrections=fixes,
                        restated=dropped,
                        output=decision["value"],
                    )
                    notes = []
                    if fixes:
                        fixed = ", ".join(f"{f['written']} -> {f['name']}" for f in fixes)
                        notes.append(f"names corrected: {fixed}")
                    if dropped:
                        notes.append(f"{len(dropped)} sentence(s) restating the question left out")
                    decision["note"] = "; ".join([*notes, *filter(None, [decision.get("note")])])
                return decision
            except ValueError as err:
                last_error = str(err)
            # never recorded as the answer: the reason goes back to the model, and to the trace
            self._trace(ask, "rejected", attempt=attempt, reason=last_error, output=raw)
            messages = [
                *messages,
                AIMessage(raw),
                HumanMessage(f"That answer was not usable: {last_error}. {again}"),
            ]
        self._trace(ask, "fallback", cause=cause, reason=last_error, output=ask["fallback"])
        return {"value": copy.deepcopy(ask["fallback"]), "source": "fallback", "note": last_error}

    def _call(
        self, ask: Ask, messages: list, bind: dict, attempt: int, mode: str
    ) -> tuple[Any, str | None]:
        """One model call with transport retries and back-off; returns (reply, None) or
        (None, error). Raises ModelUnavailable when the model cannot load, or when this call
        makes `max_faults` failed calls in a row for the game."""
        retries = self.seat.get("retries")
        retries = int(retries if retries is not None else self.profile.retries)
        prompt = [{"role": m.type, "content": str(m.content)} for m in messages]
        game = current_thread_id()
        kept = self._cached(ask, messages, bind, attempt, mode, prompt)
        if kept is not None:
            streaks.answered(game)
            return kept, None
        error = ""
        for trial in range(retries + 1):
            start = time.perf_counter()
            try:
                with (
                    waiting(ask["role"], ask["phase"], int(ask.get("round") or 0), str(self.ref)),
                    endpoint_limit(self.ref),
                ):
                    start = time.perf_counter()  # the call's latency, not the wait for a slot
                    reply = self._model().invoke(messages, **bind)
                pt, ct = usage_of(reply)
                self._trace(
                    ask,
                    "call",
                    attempt=attempt,
                    mode=mode,
                    model=str(self.ref),
                    messages=prompt,
                    output=str(reply.content),
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    latency_s=round(time.perf_counter() - start, 4),
                )
                self._keep(ask, messages, bind, reply)
                streaks.answered(game)
                return reply, None
            except Exception as exc:  # endpoint faults of every kind end in the fallback
                error = fault_text(exc, self.ref)
                self._trace(
                    ask,
                    "fault",
                    attempt=attempt,
                    trial=trial,
                    model=str(self.ref),
                    messages=prompt,
                    error=error,
                    latency_s=round(time.perf_counter() - start, 4),
                )
                if isinstance(exc, ModelRefError):  # a model that cannot load never will
                    refused = isinstance(exc, ModelRefused)
                    self._stop(ask, game, str(exc), 1, load=True, refused=refused)
                if trial < retries:  # the wait a rate-limited endpoint asks for, else back-off
                    asked = retry_after_s(exc)
                    time.sleep(asked if asked is not None else min(0.25 * 2**trial, 4.0))
        failed = streaks.failed(game)
        if failed >= int(self.seat.get("max_faults", DEFAULT_MAX_FAULTS)):
            self._stop(ask, game, error, failed, load=False)
        return None, error

    def _cached(
        self, ask: Ask, messages: list, bind: dict, attempt: int, mode: str, prompt: list
    ) -> Any:
        """The answer the seat's model cache keeps for this very call (wargraph.models.cache),
        traced as a `cached` event (never a `call`: no cost figure counts it), or None. A cache
        that cannot be read is traced and the model asked afresh."""
        cache = self._cache(ask)
        if cache is None:
            return None
        try:
            found = cache.lookup(*call_keys(self.ref, self._model(), messages, bind))
        except (StoreError, ModelRefError) as exc:
            self._trace(ask, "cache-fault", error=str(exc))
            return None
        if not found:
            return None
        reply = getattr(found[0], "message", None)
        if reply is None:
            return None
        pt, ct = usage_of(reply)
        self._trace(
            ask,
            CACHED,
            cached=True,
            attempt=attempt,
            mode=mode,
            model=str(self.ref),
            messages=prompt,
            output=str(reply.content),
            saved_prompt_tokens=pt,
            saved_completion_tokens=ct,
        )
        return reply

    def _keep(self, ask: Ask, messages: list, bind: dict, reply: Any) -> None:
        cache = self._cache(ask)
        if cache is None:
            return
        try:
            keys = call_keys(self.ref, self._model(), messages, bind)
            cache.update(*keys, generations(reply))
        except StoreError as exc:  # the answer stands; only its reuse is lost
            self._trace(ask, "cache-fault", error=str(exc))

    def _cache(self, ask: Ask) -> ModelCache | None:
        try:
            return cache_for(self.seat)
        except StoreError as exc:
            self._trace(ask, "cache-fault", error=str(exc))
            return None

    def _stop(
        self, ask: Ask, game: str, reason: str, count: int, *, load: bool, refused: bool = False
    ) -> None:
        streaks.answered(game)  # a resume in this process counts afresh
        message = stop_message(game, reason, count, load=load, refused=refused)
        self._trace(ask, "stop", reason=message)
        raise ModelUnavailable(message, thread_id=game, trace_path=self.seat.get("trace_path"))


# The version of the interrupt payload a person's client receives (documented in README,
# "A person's seat"); raised when a field changes meaning or goes.
INTERRUPT_VERSION = 1
# The answer a server sends for a person when the phase's deadline passed (its value: the
# deadline); the seat's fallback answers, recorded with the source "deadline". A player's own
# answer may not carry it (`wargraph.server.seat_api` refuses it).
DEADLINE_ANSWER = "wargraph_deadline_passed"


class HumanDecider:
    """A person in the seat: `interrupt()` with the role's view, the question and the schema.

    An invalid answer comes back with the error and the seat stays open; nothing is lost. Each
    retry is a new interrupt, so on resume LangGraph replays the earlier answers in order."""

    def decide(self, ask: Ask, schema: type[BaseModel], *, memory: str = "") -> Decision:
        from langgraph.types import interrupt

        error = ""
        while True:
            payload = {
                "version": INTERRUPT_VERSION,
                "seat": ask["role"],
                "ask_id": ask["id"],
                "round": ask["round"],
                "phase": ask["phase"],
                "task": ask["task"],
                "instructions": ask["system"],
                "view": ask["context"],
                "memory": memory,
                "question": ask["question"],
                "schema": copy.deepcopy(flat_json_schema(schema)),
                "error": error,
            }
            answer = interrupt(payload)
            if isinstance(answer, dict) and DEADLINE_ANSWER in answer:
                return {"value": copy.deepcopy(ask["fallback"]), "source": "deadline"}
            try:
                value = parse_answer(answer, schema, cut=False).model_dump()
                return {"value": value, "source": "human"}
            except ValueError as err:
                error = str(err)


def decider_for(seat: Seat) -> ScriptedDecider | LLMDecider | HumanDecider | BotDecider:
    kind = seat.get("kind", "ai")
    if kind == "human":
        return HumanDecider()
    if is_bot(seat.get("model")):
        return BotDecider(str(seat["model"]).removeprefix(BOT_PREFIX), int(seat.get("seed", 0)))
    if kind == "scripted" or seat.get("model") == "scripted":
        return ScriptedDecider(int(seat.get("seed", 0)))
    return LLMDecider(seat)


def user_prompt(ask: Ask, memory: str, json_schema: dict[str, Any], *, limits: str = "") -> str:
    """Stable parts first (the view grows at its end), the answer's fields, the text limits
    (`limits`, the capable profile's), the question last. Private notes the view already shows
    (the seat's own plan, recorded as an event) are left out."""
    parts = [ask["context"]]
    # a capable seat's note is left out only when its view shows it whole
    whole = seat_profile(ask.get("seat") or {}).context_tokens is not None
    memory = unseen_notes(memory, ask["context"], whole=whole)
    if memory:
        parts.append("Your private notes from earlier (yours alone):\n" + memory)
    props = json_schema.get("properties", {})
    (first, spec), *more = list(props.items()) or [("answer", {})]
    # The question comes last, never a format line: small models repeat a closing instruction
    # as their answer ("This is a JSON object with the fields: ..."). Prose gets no format line
    # at all (the system prompt says what to write: src/wargraph/prompts/v1/player_system.txt).
    if more or spec.get("type") != "string":
        parts.append(f"Answer with one JSON object with the fields: {', '.join(props)}.")
    if limits:
        parts.append(limits)
    parts.append(ask["question"])
    return "\n\n".join(p for p in parts if p)


def view_fields(ask: Ask, profile: str) -> dict[str, Any]:
    """A prompt's trace fields beside its messages: the seat's profile and, when the table
    counted its view, what the view showed whole, shortened or left out (views.ViewTally)."""
    return {"profile": profile, **({"view": ask["view"]} if "view" in ask else {})}


def instructions_of(ask: Ask) -> str:
    """What the echo check counts as the ask's instructions: its system prompt and question,
    less the quoted context in them (lines "> ..."; a previous summary, messages): a model that
    keeps its summary unchanged writes its context, not its instructions."""
    question = "\n".join(
        line for line in ask["question"].splitlines() if not line.lstrip().startswith(">")
    )
    return f"{ask['system']}\n{question}"


def _where(ask: Ask) -> dict[str, Any]:
    return {
        "thread": current_thread_id(),
        "role": ask["role"],
        "node": ask["phase"],
        "task": ask["task"],
        "ask_id": ask["id"],
        "round": ask["round"],
    }
