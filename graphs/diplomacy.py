"""Full-press Diplomacy as a LangGraph game, on the DATC-compliant `diplomacy` engine.

One kit round is one engine phase (S1901M, F1901M, F1901R, W1901A, ...):

    negotiate (R rounds of messages, all powers at once) -> summarize (private diary entries:
    summary, intent, goals, relationships; older entries digested each spring) -> order (one
    enum of legal orders per unit, so a grammar-constrained model cannot give an illegal order)
    -> secretary_validate (the engine checks the orders on a copy of the phase; refused orders
    go back with the reason, then the unit holds) -> adjudicate (the engine processes the phase)

Retreat and adjustment phases skip negotiation and diaries. The game stops after
`diplomacy.max_year` or when the engine says it is over; the `score` end phase writes the
measures. The graph state keeps only the engine's saved-game dict (`world["diplomacy"]`), never
a `Game` (not picklable, slow to copy); each step loads the engine from it once (a few ms).

Outputs: when the run has an output folder (the folder of its trace file, as the runner sets it),
`adjudicate` writes `maps/<PHASE>.svg` (the engine's renderer: the position at the start of the
phase with its orders) and `score` writes `measures.json`, `measures.md` and
`relationships.png`. Both are pure functions of the record and idempotent, so a resumed or
replayed game rewrites the same files; `wargraph eval diplomacy` rebuilds them from a record.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.graph import StateGraph
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model, model_validator

from wargraph.deciders import Ask, register_schema
from wargraph.graphkit import build_game
from wargraph.prompts import render_prompt
from wargraph.scenario import Role, Scenario, ScenarioError, load_scenario
from wargraph.state import CLEAR, EVERYONE, Event, GameState, make_event
from wargraph.table import Table
from wargraph.views import quote
from wargraph.worlds import diplomacy as W

DEFAULT_SCENARIO = "diplomacy"
RELATIONS: tuple[str, ...] = ("Enemy", "Unfriendly", "Neutral", "Friendly", "Ally")
SECRETARY = "secretary"


# --- the scenario ------------------------------------------------------------------------------


class DiplomacyConfig(BaseModel):
    """The `diplomacy:` section of a scenario."""

    model_config = ConfigDict(extra="forbid")

    negotiation_rounds: int = Field(default=2, ge=0, le=10)
    """Rounds of messages before each movement phase (0: no press)."""
    press: Literal["full", "public", "none"] = "full"
    """full: public and private messages; public: to GLOBAL only; none: no messages."""
    max_messages: int = Field(default=2, ge=0, le=10)
    """Messages per power per negotiation round."""
    message_chars: int = Field(default=200, ge=20, le=2000)
    """Longest message, in characters (longer ones are cut)."""
    max_year: int = Field(default=1905, ge=1901, le=1940)
    """Last year played (its winter adjustments included)."""
    order_retries: int = Field(default=2, ge=0, le=5)
    """How often the secretary sends refused orders back before the unit holds."""
    diary_chars: int = Field(default=160, ge=40, le=2000)
    """Longest diary summary (intent and goals get half of it; the yearly digest up to double)."""
    instructions: dict[str, str] = Field(default_factory=dict)
    """Extra guidance for one power (e.g. a persuasion method), shown in its prompts as data."""
    diary: bool = True
    """Write diary entries before orders (off: orders only, e.g. for quick benchmarks)."""
    nearest: int = Field(default=2, ge=0, le=10)
    """Nearest foreign units and unowned centres listed in each unit block."""
    game_id: str = ""
    """The engine's game id (default: derived from the title, so records are reproducible)."""

    @property
    def public_only(self) -> bool:
        return self.press == "public"

    @property
    def talks(self) -> bool:
        return self.press != "none" and self.negotiation_rounds > 0 and self.max_messages > 0


class DiplomacyScenario(Scenario):
    """Seven powers as `players` (AUSTRIA ... TURKEY); per-power model and prompt variant are the
    role's `model` and `prompt_variant`; the engine is the secretary (never asked)."""

    family: str = "diplomacy"
    rounds: int = Field(default=200, ge=1, le=200)  # engine phases at most; max_year stops first
    control: Role = Field(default_factory=lambda: Role(name=SECRETARY))
    diplomacy: DiplomacyConfig = Field(default_factory=DiplomacyConfig)

    @model_validator(mode="before")
    @classmethod
    def _upper_powers(cls, data: Any) -> Any:
        """Power names are the engine's (upper case); `france` in a file means FRANCE."""
        if isinstance(data, dict) and isinstance(data.get("players"), dict):
            data = {**data, "players": {str(k).upper(): v for k, v in data["players"].items()}}
        return data

    @model_validator(mode="after")
    def _seven_powers(self) -> DiplomacyScenario:
        have, want = set(self.players), set(W.POWERS)
        if have != want:
            missing, extra = sorted(want - have), sorted(have - want)
            detail = "; ".join(
                part
                for part in (
                    f"missing {missing}" if missing else "",
                    f"unknown {extra}" if extra else "",
                )
                if part
            )
            raise ValueError(f"players: Diplomacy seats exactly the seven powers ({detail})")
        unknown = sorted(set(self.diplomacy.instructions) - want)
        if unknown:
            raise ValueError(f"diplomacy.instructions: unknown power(s) {unknown}")
        if self.teams:
            raise ValueError("teams: Diplomacy has no teams (each power is one seat)")
        return self

    @property
    def powers(self) -> list[str]:
        return list(W.POWERS)


# --- answer schemas (flat: llama.cpp grammars hold) -------------------------------------------


def _orders_schema(args: dict[str, Any]) -> type[BaseModel]:
    """One field per unit (or build/disband slot) whose value must be one of its legal orders:
    exactly `orders_json_schema(legal)` (an enum per key, even for a single option)."""
    legal: dict[str, list[str]] = args.get("legal") or {}
    fields: dict[str, Any] = {}
    for key, opts in legal.items():
        options = tuple(opts) or (f"{key} H",)
        kind = Annotated[
            Literal[options],  # type: ignore[valid-type]
            WithJsonSchema({"type": "string", "enum": list(options)}),
        ]
        fields[key] = (kind, ...)
    return create_model("Orders", __config__=ConfigDict(extra="forbid"), **fields)


def _orders_text_schema(args: dict[str, Any]) -> type[BaseModel]:
    """For people: one free-text order per unit or slot, checked by the secretary (the engine),
    which sends refused orders back with the reason."""
    legal: dict[str, list[str]] = args.get("legal") or {}
    fields = {key: (str, Field(default="", max_length=80)) for key in legal}
    return create_model("OrdersText", __config__=ConfigDict(extra="forbid"), **fields)


# The kernel leaves string lengths out of the grammar (llama.cpp's grammar parser fails on long
# bounded repeats), so a small model rambles until max_tokens and its JSON is cut off. Short texts
# carry an equivalent pattern instead, which llama.cpp turns into a bounded rule: the answer ends
# in time and stays valid JSON. Parsing still cuts to maxLength (for people and other backends).
GRAMMAR_TEXT_LIMIT = 300


def text_field(max_chars: int, *, min_chars: int = 1) -> tuple[type, Any]:
    extra = None
    if max_chars <= GRAMMAR_TEXT_LIMIT:
        extra = {"pattern": f'^[^"\\\\\\n]{{{min_chars},{max_chars}}}$'}
    return (str, Field(min_length=min_chars, max_length=max_chars, json_schema_extra=extra))


def _messages_schema(args: dict[str, Any]) -> type[BaseModel]:
    recipients = tuple(args.get("recipients") or (W.GLOBAL,))
    message = create_model(
        "Message",
        to=(Literal[recipients], ...),  # type: ignore[valid-type]
        text=text_field(int(args.get("chars", 300))),
    )
    limit = int(args.get("limit", 2))
    return create_model("Messages", messages=(list[message], Field(max_length=limit)))  # type: ignore[valid-type]


def _diary_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Summary first: the agent keeps the first text field as its private note."""
    chars = int(args.get("chars", 240))
    fields: dict[str, Any] = {
        "summary": text_field(chars),
        "intent": text_field(max(40, chars // 2), min_chars=0),
        "goals": text_field(max(40, chars // 2), min_chars=0),
    }
    for other in args.get("others") or []:  # every field required: the grammar asks for all
        fields[other] = (Literal[RELATIONS], ...)  # type: ignore[valid-type]
    return create_model("Diary", **fields)


def _digest_schema(args: dict[str, Any]) -> type[BaseModel]:
    return create_model("Digest", digest=text_field(int(args.get("chars", 480))))


register_schema("diplomacy_orders", _orders_schema)
register_schema("diplomacy_orders_text", _orders_text_schema)
register_schema("diplomacy_messages", _messages_schema)
register_schema("diplomacy_diary", _diary_schema)
register_schema("diplomacy_digest", _digest_schema)


# --- helpers -----------------------------------------------------------------------------------


def _dip(table: Table) -> DiplomacyScenario:
    s = table.scenario
    if not isinstance(s, DiplomacyScenario):
        raise TypeError(f"the diplomacy graph needs a diplomacy scenario, not {s.family!r}")
    return s


def _saved(table: Table) -> dict[str, Any]:
    return table.state["world"]["diplomacy"]


def _world(table: Table) -> dict[str, Any]:
    return dict(table.state.get("world") or {})


def _with_tokens(ask: Ask, need: int) -> Ask:
    """Give an answer room to finish (a cut-off JSON object is invalid and costs a re-ask): the
    caps assume the worst case of one token per character of the bounded texts."""
    seat = dict(ask.get("seat") or {})
    seat["max_tokens"] = max(int(seat.get("max_tokens") or 0), need)
    ask["seat"] = seat  # type: ignore[typeddict-item]
    return ask


def _seat_kind(table: Table, power: str) -> str:
    return str(table.seat(power).get("kind", "ai"))


def _render_talk(events: list[Event], me: str | None) -> str:
    """Messages as `FROM to TO:` followed by the quoted text (other powers' words are data)."""
    lines = []
    for e in events:
        to = "everyone" if EVERYONE in e["audience"] else e.get("data", {}).get("to", "?")
        who = "you" if e["author"] == me else e["author"]
        lines.append(f"{who} to {'you' if to == me else to}:\n{quote(e['text'])}")
    return "\n".join(lines)


def relationships_of(seen: list[Event], power: str) -> dict[str, str]:
    """The power's latest relationships (Neutral toward everyone before its first entry)."""
    rel = {p: "Neutral" for p in W.POWERS if p != power}
    for e in seen:
        if e["kind"] == "diary" and e["author"] == power:
            rel.update(e.get("data", {}).get("relationships") or {})
    return rel


def diary_text(seen: list[Event], power: str) -> str:
    """The power's diary as it reads it: the latest yearly digest, the entries since, its goals
    and relationships. Bounded: a digest replaces the entries of the years it covers."""
    mine = [e for e in seen if e["author"] == power and e["kind"] in ("diary", "diary_digest")]
    digests = [e for e in mine if e["kind"] == "diary_digest"]
    through = digests[-1]["data"]["through_year"] if digests else 0
    lines = []
    if digests:
        lines.append(f"Digest of your diary up to {through}:\n{quote(digests[-1]['text'])}")
    entries = [e for e in mine if e["kind"] == "diary" and e["data"]["year"] > through]
    for e in entries:
        d = e["data"]
        text = d.get("summary", "")
        if d.get("intent"):
            text += f"\nIntent: {d['intent']}"
        lines.append(f"{d['phase']}:\n{quote(text)}")
    if entries and entries[-1]["data"].get("goals"):
        lines.append(f"Your goals now:\n{quote(entries[-1]['data']['goals'])}")
    rel = relationships_of(seen, power)
    lines.append("Relationships: " + ", ".join(f"{p} {r}" for p, r in rel.items()))
    return "\n".join(lines)


def power_context(table: Table, power: str, game: Any, *, blocks: bool = False) -> str:
    """The power's view, public parts first (the same for every power, so llama.cpp reuses its
    KV cache across seats), then its own: brief, guidance, diary, private talks, unit blocks.

    Built only from `table.view` (view_for: the power's own and public events), so it holds
    public messages, the power's own conversations, its diary and the board — nothing else."""
    s = _dip(table)
    seen = table.view(power, policy="full")
    rnd = table.round
    setting = next((e for e in seen if e["kind"] == "setting"), None)
    results = [e for e in seen if e["kind"] == "narration" and e["phase"] == "adjudicate"]
    public = [e for e in seen if e["round"] == rnd and e["kind"] == "message"]
    private = [e for e in public if EVERYONE not in e["audience"]]
    public = [e for e in public if EVERYONE in e["audience"]]
    parts = []
    if setting:
        parts.append("# The game\n" + quote(setting["text"]))
    parts.append("# The board\n" + quote(W.render_board(game)))
    if results:
        parts.append("# Last phase\n" + quote(results[-1]["text"]))
    if public:
        # named by power even for its own, so this part is the same for every seat
        parts.append("# Public messages this phase\n" + _render_talk(public, None))
    brief = next((e for e in seen if e["kind"] == "brief" and e["audience"] == [power]), None)
    info = W.phase_info(game)
    mine = f"# You are {power}\nYour home centres: {', '.join(sorted(info.homes.get(power, [])))}"
    if brief:
        mine += "\n" + quote(brief["text"])
    parts.append(mine)
    guidance = s.diplomacy.instructions.get(power, "").strip()
    if guidance:
        parts.append("# Guidance for you (from the scenario)\n" + quote(guidance))
    parts.append("# Your diary (private)\n" + diary_text(seen, power))
    notes = [e for e in seen if e["round"] == rnd and e["kind"] == "verdict"]
    if private:
        parts.append("# Your private talks this phase\n" + _render_talk(private, power))
    if notes:
        parts.append("# Notes from the secretary\n" + "\n".join(quote(e["text"]) for e in notes))
    if blocks:
        n = s.diplomacy.nearest
        text = "\n".join(
            W.render_unit_block(b) for b in W.unit_blocks(game, power, n_foreign=n, n_centres=n)
        )
        if text:
            parts.append("# Your units\n" + text)
    return "\n\n".join(parts)


# --- setup -------------------------------------------------------------------------------------


def game_id_for(scenario: DiplomacyScenario) -> str:
    if scenario.diplomacy.game_id:
        return scenario.diplomacy.game_id
    return "wargraph-" + hashlib.sha256(scenario.title.encode()).hexdigest()[:12]


def opening(scenario: Scenario, update: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(scenario, DiplomacyScenario)
    saved = W.new_game(game_id=game_id_for(scenario))
    return {"world": {"diplomacy": saved, "negotiation_round": 0}}


# --- negotiate ---------------------------------------------------------------------------------


def _messages_id(table: Table, power: str, k: int) -> str:
    return f"r{table.round}.negotiate.messages.{power}.n{k}"


def accept_messages(
    sender: str,
    messages: list[dict[str, Any]],
    *,
    press: str,
    limit: int,
    chars: int,
    alive: list[str],
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """wargraph's press rules (the engine does not enforce them): returns the accepted
    `(recipient, text)` and the refused `(recipient, text, reason)`; at most `limit` are kept."""
    ok: list[tuple[str, str]] = []
    refused: list[tuple[str, str, str]] = []
    for m in messages:
        to, text = str(m.get("to", "")), str(m.get("text", "")).strip()
        reason = W.check_message(sender, to, text, press=press, max_len=chars, powers=alive)  # type: ignore[arg-type]
        if reason is None and len(ok) >= limit:
            reason = f"at most {limit} message(s) per round"
        if reason:
            refused.append((to, text, reason))
        else:
            ok.append((to.upper(), text))
    return ok, refused


def negotiate(state: GameState, table: Table) -> dict[str, Any]:
    s = _dip(table)
    cfg = s.diplomacy
    saved = _saved(table)
    info = W.phase_info(saved)
    if info.type != "M":
        return {"next": "order"}  # retreats and adjustments: no talks, no diary
    if not cfg.talks:
        return {}  # no press: straight to the diary
    k = int(_world(table).get("negotiation_round", 0)) + 1
    if k > cfg.negotiation_rounds:
        return {"world": {"negotiation_round": 0}}
    alive = list(info.powers_alive)
    ids = {p: _messages_id(table, p, k) for p in alive}
    missing = [p for p in alive if ids[p] not in table.pending]
    if missing:
        game = W.load(W.current(saved))
        asks = []
        for p in missing:
            others = [o for o in alive if o != p]
            recipients = [W.GLOBAL] + ([] if cfg.public_only else others)
            v = table.variant(p)
            ask = table.ask(
                p,
                "messages",
                key=f"n{k}",
                system=render_prompt("diplomacy_system", v),
                context=power_context(table, p, game),
                question=render_prompt(
                    "diplomacy_negotiate_question",
                    v,
                    power=p,
                    phase=info.name,
                    round=k,
                    rounds=cfg.negotiation_rounds,
                    limit=cfg.max_messages,
                    chars=cfg.message_chars,
                    recipients=", ".join(recipients),
                    private=""
                    if cfg.public_only
                    else f" or to one power privately ({', '.join(others)})",
                ),
                schema="diplomacy_messages",
                schema_args={
                    "recipients": recipients,
                    "limit": cfg.max_messages,
                    "chars": cfg.message_chars,
                },
                fallback={"messages": []},
            )
            asks.append(_with_tokens(ask, cfg.max_messages * (cfg.message_chars + 16) + 16))
        return {"asks": asks}

    events: list[Event] = []
    sent: list[tuple[str, str, str]] = []
    for p in alive:
        decision = table.pending[ids[p]]
        ok, refused = accept_messages(
            p,
            list(decision["value"].get("messages") or []),
            press=cfg.press,
            limit=cfg.max_messages,
            chars=cfg.message_chars,
            alive=alive,
        )
        for i, (to, text) in enumerate(ok):
            events.append(
                make_event(
                    round=table.round,
                    phase="negotiate",
                    kind="message",
                    author=p,
                    text=text,
                    audience=[EVERYONE] if to == W.GLOBAL else [p, to],
                    data={
                        "to": to,
                        "phase": info.name,
                        "negotiation_round": k,
                        "source": decision["source"],
                    },
                    key=f"n{k}.{i}",
                )
            )
            sent.append((p, to, text))
        for i, (to, text, reason) in enumerate(refused):
            events.append(
                make_event(
                    round=table.round,
                    phase="negotiate",
                    kind="verdict",
                    author=SECRETARY,
                    text=f"Your message to {to or '?'} was not delivered: {reason}.",
                    audience=[p],
                    data={"refused_message": {"to": to, "text": text}, "reason": reason},
                    key=f"{p}.n{k}.{i}",
                )
            )
    world: dict[str, Any] = {"negotiation_round": k}
    if sent:  # the engine's saved game keeps the press too (record.json holds it)
        world["diplomacy"] = W.add_messages(saved, sent)
    return {"events": events, "world": world, "pending": {CLEAR: True}, "next": "negotiate"}


# --- summarize: diary entries and the yearly digest --------------------------------------------


def _diary_id(table: Table, power: str) -> str:
    return f"r{table.round}.summarize.diary.{power}"


def _digest_id(table: Table, power: str) -> str:
    return f"r{table.round}.summarize.digest.{power}"


def _undigested(seen: list[Event], power: str, year: int) -> list[Event]:
    """Diary entries of years before `year` that no digest covers yet."""
    mine = [e for e in seen if e["author"] == power]
    through = max(
        (e["data"]["through_year"] for e in mine if e["kind"] == "diary_digest"), default=0
    )
    return [e for e in mine if e["kind"] == "diary" and through < e["data"]["year"] < year]


def summarize(state: GameState, table: Table) -> dict[str, Any]:
    s = _dip(table)
    cfg = s.diplomacy
    if not cfg.diary:
        return {}
    saved = _saved(table)
    info = W.phase_info(saved)
    alive = list(info.powers_alive)
    seen = {p: table.view(p, policy="full") for p in alive}
    to_digest = {p: _undigested(seen[p], p, info.year) for p in alive}
    wanted = [(p, _diary_id(table, p)) for p in alive]
    wanted += [(p, _digest_id(table, p)) for p in alive if to_digest[p]]
    missing = [(p, i) for p, i in wanted if i not in table.pending]
    if missing:
        game = W.load(W.current(saved))
        asks = []
        for p, ask_id in missing:
            v = table.variant(p)
            if ask_id == _digest_id(table, p):
                asks.append(_digest_ask(table, p, to_digest[p], seen[p], v))
                continue
            others = [o for o in W.POWERS if o != p]
            ask = table.ask(
                p,
                "diary",
                system=render_prompt("diplomacy_system", v),
                context=power_context(table, p, game),
                question=render_prompt(
                    "diplomacy_diary_question",
                    v,
                    power=p,
                    phase=info.name,
                    others=", ".join(others),
                    relations=", ".join(RELATIONS),
                ),
                schema="diplomacy_diary",
                schema_args={"others": others, "chars": cfg.diary_chars},
                fallback={
                    "summary": f"{info.name}: nothing new to note.",
                    "intent": "",
                    "goals": "",
                    **relationships_of(seen[p], p),
                },
                memory_slot="diary",
            )
            asks.append(_with_tokens(ask, 2 * cfg.diary_chars + 10 * len(others) + 30))
        return {"asks": asks}

    events: list[Event] = []
    for p in alive:
        if to_digest[p]:
            d = table.pending[_digest_id(table, p)]
            through = max(e["data"]["year"] for e in to_digest[p])
            events.append(
                make_event(
                    round=table.round,
                    phase="summarize",
                    kind="diary_digest",
                    author=p,
                    text=d["value"]["digest"],
                    audience=[p],
                    data={
                        "through_year": through,
                        "phases": [e["data"]["phase"] for e in to_digest[p]],
                        "source": d["source"],
                    },
                )
            )
        d = table.pending[_diary_id(table, p)]
        value = d["value"]
        rel = {o: value.get(o, "Neutral") for o in W.POWERS if o != p}
        text = value["summary"]
        if value.get("intent"):
            text += f"\nIntent: {value['intent']}"
        events.append(
            make_event(
                round=table.round,
                phase="summarize",
                kind="diary",
                author=p,
                text=text,
                audience=[p],
                data={
                    "phase": info.name,
                    "year": info.year,
                    "summary": value["summary"],
                    "intent": value.get("intent", ""),
                    "goals": value.get("goals", ""),
                    "relationships": rel,
                    "source": d["source"],
                },
            )
        )
    return {"events": events, "pending": {CLEAR: True}}


def digest_chars(cfg: DiplomacyConfig) -> int:
    """The digest may be twice a diary summary, but stays short enough for a bounded grammar."""
    return max(cfg.diary_chars, min(2 * cfg.diary_chars, GRAMMAR_TEXT_LIMIT))


def _digest_ask(table: Table, power: str, entries: list[Event], seen: list[Event], v: str) -> Ask:
    cfg = _dip(table).diplomacy
    digests = [e for e in seen if e["kind"] == "diary_digest" and e["author"] == power]
    parts = []
    if digests:
        parts.append("Your earlier digest:\n" + quote(digests[-1]["text"]))
    parts.append(
        "Diary entries to digest:\n"
        + "\n".join(f"{e['data']['phase']}:\n{quote(e['text'])}" for e in entries)
    )
    years = sorted({e["data"]["year"] for e in entries})
    chars = digest_chars(cfg)
    fallback = " ".join(e["data"]["summary"] for e in entries)[:chars]
    ask = table.ask(
        power,
        "digest",
        system=render_prompt("diplomacy_system", v),
        context=f"# You are {power}\n" + "\n\n".join(parts),
        question=render_prompt(
            "diplomacy_digest_question",
            v,
            power=power,
            years=", ".join(map(str, years)),
        ),
        schema="diplomacy_digest",
        schema_args={"chars": chars},
        fallback={"digest": fallback or "Nothing to note."},
        memory_slot="diary_digest",
    )
    return _with_tokens(ask, chars + 20)


# --- order ------------------------------------------------------------------------------------


def _orders_id(table: Table, power: str) -> str:
    return f"r{table.round}.order.orders.{power}"


def _revise_id(table: Table, power: str, attempt: int) -> str:
    return f"r{table.round}.secretary_validate.revise.{power}.a{attempt}"


def _orders_tokens(legal: dict[str, list[str]]) -> int:
    chars = sum(len(k) + max((len(o) for o in opts), default=8) + 8 for k, opts in legal.items())
    return chars // 2 + 24


def _fallback_orders(game: Any, power: str, legal: dict[str, list[str]]) -> dict[str, str]:
    """The documented fallback: hold, disband when dislodged, waive builds, civil-disorder
    disbands (one per key, in key order)."""
    return dict(zip(legal, W.hold_orders(game, power), strict=False))


def _orders_ask(
    table: Table,
    power: str,
    game: Any,
    legal: dict[str, list[str]],
    *,
    task: str = "orders",
    key: str = "",
    refused: dict[str, tuple[str, str]] | None = None,
    attempt: int = 0,
) -> Ask:
    s = _dip(table)
    v = table.variant(power)
    info = W.phase_info(game)
    people = _seat_kind(table, power) == "human"
    if refused:
        lines = "\n".join(f"{k}: {o or '(none)'}: {why}" for k, (o, why) in refused.items())
        question = render_prompt(
            "diplomacy_revise_question",
            v,
            power=power,
            phase=info.name,
            refused=quote(lines),
            keys=", ".join(legal),
            attempt=attempt,
            limit=s.diplomacy.order_retries,
        )
    else:
        question = render_prompt(
            f"diplomacy_orders_question_{info.type}",
            v,
            power=power,
            phase=info.name,
            keys=", ".join(legal),
            count=len(legal),
        )
    ask = table.ask(
        power,
        task,
        key=key,
        system=render_prompt("diplomacy_system", v),
        context=power_context(table, power, game, blocks=True),
        question=question + (_legal_lists(legal) if info.type == "A" else ""),
        schema="diplomacy_orders_text" if people else "diplomacy_orders",
        schema_args={"legal": legal},
        fallback=_fallback_orders(game, power, legal),
        memory_slot="orders",
    )
    return _with_tokens(ask, _orders_tokens(legal))


def _legal_lists(legal: dict[str, list[str]]) -> str:
    """Adjustments have no unit blocks with legal orders: list the options of each slot."""
    return "\n" + "\n".join(f"{k}: {' | '.join(opts)}" for k, opts in legal.items())


def order(state: GameState, table: Table) -> dict[str, Any]:
    saved = _saved(table)
    game = W.load(W.current(saved))
    info = W.phase_info(game)
    legal = {p: W.legal_orders(game, p) for p in info.powers_alive}
    acting = [p for p in info.powers_alive if legal[p]]
    missing = [p for p in acting if _orders_id(table, p) not in table.pending]
    if missing:
        return {"asks": [_orders_ask(table, p, game, legal[p]) for p in missing]}
    answers = {p: dict(table.pending[_orders_id(table, p)]["value"]) for p in acting}
    sources = {p: table.pending[_orders_id(table, p)]["source"] for p in acting}
    return {
        "world": {
            "orders": answers,
            "attempts": {p: 0 for p in acting},
            "status": {p: "pending" for p in acting},
            "trail": {p: [{"orders": answers[p], "source": sources[p]}] for p in acting},
            "invalid": {},
        },
        "pending": {CLEAR: True},
    }


# --- secretary_validate: the engine checks each power's orders on a copy of the phase ------------


def secretary_validate(state: GameState, table: Table) -> dict[str, Any]:
    s = _dip(table)
    retries = s.diplomacy.order_retries
    saved = _saved(table)
    w = _world(table)
    orders = {p: dict(v) for p, v in (w.get("orders") or {}).items()}
    attempts = dict(w.get("attempts") or {})
    status = dict(w.get("status") or {})
    trail = {p: list(v) for p, v in (w.get("trail") or {}).items()}
    invalid = {p: list(v) for p, v in (w.get("invalid") or {}).items()}
    if not orders:
        return {}
    game = W.load(W.current(saved))

    for p in orders:  # take in revisions of refused orders
        if status[p] == "revising":
            decision = table.pending.get(_revise_id(table, p, attempts[p]))
            if decision:
                orders[p].update(decision["value"])
                trail[p].append({"orders": dict(decision["value"]), "source": decision["source"]})
                status[p] = "pending"

    asks = []
    for p in orders:
        if status[p] != "pending":
            continue
        legal = W.legal_orders(game, p)
        accepted, refused = W.check_answer(saved, p, orders[p], legal=legal)
        trail[p][-1]["refused"] = {k: list(v) for k, v in refused.items()}
        if not refused:
            orders[p] = accepted
            status[p] = "accepted"
        elif attempts[p] < retries:
            attempts[p] += 1
            sub = {k: legal[k] for k in refused}
            asks.append(
                _orders_ask(
                    table,
                    p,
                    game,
                    sub,
                    task="revise",
                    key=f"a{attempts[p]}",
                    refused=refused,
                    attempt=attempts[p],
                )
            )
            status[p] = "revising"
        else:
            # After the retries the unit holds (disbands, waives): the record says why.
            orders[p] = accepted
            invalid[p] = [[o, why] for o, why in refused.values()]
            status[p] = "held"

    world = {
        "orders": orders,
        "attempts": attempts,
        "status": status,
        "trail": trail,
        "invalid": invalid,
    }
    if asks:
        return {"asks": asks, "world": world}
    events = [
        _verdict_event(table, p, attempts[p], status[p], trail[p])
        for p in orders
        if attempts[p] or status[p] == "held"
    ]
    return {"world": world, "events": events, "pending": {CLEAR: True}}


def _verdict_event(table: Table, power: str, attempts: int, status: str, trail: list) -> Event:
    if status == "held":
        last = trail[-1].get("refused", {})
        held = "; ".join(f"{k} ({o or 'no order'}: {why})" for k, (o, why) in last.items())
        text = (
            f"After {attempts} revision(s) the secretary still refused: {held}. "
            "Those units hold (dislodged units disband, builds are waived)."
        )
    else:
        text = f"The secretary accepted your orders after {attempts} revision(s)."
    return make_event(
        round=table.round,
        phase="secretary_validate",
        kind="verdict",
        author=SECRETARY,
        text=text,
        audience=[power],
        data={"status": status, "revisions": attempts, "trail": trail},
        key=power,
    )


# --- adjudicate ---------------------------------------------------------------------------------


def run_folder(table: Table) -> Path | None:
    """The run's output folder: where the runner puts the trace (None: no files are written)."""
    trace = table.context.trace_path
    return Path(trace).parent if trace else None


def write_map(saved: dict[str, Any], phase: str | None, folder: Path) -> Path:
    name = phase or W.phase_info(saved).name
    path = folder / "maps" / f"{name}.svg"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(W.render_svg(saved, phase), encoding="utf-8")
    return path


def _results_text(phase: str, results: dict[str, Any], centres: dict[str, int]) -> str:
    lines = [f"{phase} adjudicated."]
    for power, recs in sorted(results["orders"].items()):
        shown = [
            f"{r['order']} ({r['outcome']}{', by default' if r['defaulted'] else ''})"
            for r in recs
            if r["type"] != "waive"
        ]
        if shown:
            lines.append(f"{power}: " + "; ".join(shown))
    lines.append("Centres: " + ", ".join(f"{p} {n}" for p, n in centres.items() if n))
    lines.append(f"Next: {results['next_phase']}")
    return "\n".join(lines)


def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    from wargraph.evals.diplomacy import records_from_results

    s = _dip(table)
    saved = _saved(table)
    w = _world(table)
    game = W.load(W.current(saved))
    info = W.phase_info(game)
    accepted = w.get("orders") or {}
    final = {}
    for p in info.powers_alive:
        legal = W.legal_orders(game, p)
        if legal:
            final[p] = W.finalize_orders(game, p, accepted.get(p) or {}, legal=legal)
    new, results = W.adjudicate(saved, final)
    invalid = {p: [tuple(x) for x in v] for p, v in (w.get("invalid") or {}).items() if v}
    records = records_from_results(results, invalid)
    after = W.phase_info(new)
    centres = {p: len(after.centers.get(p, [])) for p in W.POWERS}
    events: list[Event] = [
        make_event(
            round=table.round,
            phase="adjudicate",
            kind="narration",
            author=SECRETARY,
            text=_results_text(info.name, results, centres),
            data={
                "phase": info.name,
                "next_phase": results["next_phase"],
                "orders": final,
                "records": records,
                "engine_errors": results["errors"],
                "centres": centres,
                # who answered each attempt: model, fallback, human, scripted
                "sources": {p: [t["source"] for t in v] for p, v in (w.get("trail") or {}).items()},
            },
        )
    ]
    done = after.is_done or after.year > s.diplomacy.max_year
    folder = run_folder(table)
    if folder is not None:
        write_map(new, info.name, folder)
        if done:
            write_map(new, None, folder)
    update: dict[str, Any] = {
        "world": {
            "diplomacy": new,
            "orders": {},
            "attempts": {},
            "status": {},
            "trail": {},
            "invalid": {},
            "negotiation_round": 0,
        },
        "events": events,
        "pending": {CLEAR: True},
    }
    if done:
        why = (
            "the game is over"
            if after.is_done
            else f"the last year ({s.diplomacy.max_year}) is played"
        )
        events.append(
            make_event(
                round=table.round,
                phase="adjudicate",
                kind="narration",
                author=SECRETARY,
                text=f"The game ends after {info.name}: {why}.",
                key="end",
                data={"final_phase": after.name},
            )
        )
        update["done"] = True
    return update


# --- score (after the game) --------------------------------------------------------------------


def score(state: GameState, table: Table) -> dict[str, Any]:
    """Game scores for the record; the measures' files when the run has an output folder."""
    from wargraph.evals.diplomacy import game_measures, write_measures
    from wargraph.records import build_record

    s = _dip(table)
    trace = table.context.trace_path
    record = build_record(dict(table.state), thread_id="", trace_path=trace)
    measures = game_measures(record)
    folder = run_folder(table)
    if folder is not None:
        write_measures(measures, folder)
    scores = measures["scores"]
    text = (
        "Game scores (max year "
        + str(s.diplomacy.max_year)
        + "): "
        + ", ".join(f"{p} {v:g}" for p, v in sorted(scores.items(), key=lambda x: -x[1]))
    )
    return {
        "events": [
            make_event(
                round=table.round,
                phase="score",
                kind="narration",
                author=SECRETARY,
                text=text,
                data={"scores": scores, "centres": measures["centres"]},
            )
        ]
    }


# --- the graph ---------------------------------------------------------------------------------


def build(scenario: DiplomacyScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> StateGraph:
    """negotiate -> summarize -> order -> secretary_validate -> adjudicate, one engine phase per
    round, until the max year or the game's end; then `score`."""
    sc = load_scenario(scenario)
    if not isinstance(sc, DiplomacyScenario):
        raise ScenarioError(
            f"family: the diplomacy graph needs family 'diplomacy' (got {sc.family!r})"
        )
    return build_game(
        {
            "negotiate": negotiate,
            "summarize": summarize,
            "order": order,
            "secretary_validate": secretary_validate,
            "adjudicate": adjudicate,
        },
        roster=list(sc.roles),
        end={"score": score},
        opening=opening,
    )


builder = build()
graph = builder.compile()


# --- critical state analysis (used by wargraph.replay) ------------------------------------------

_PHASE_NAME = re.compile(r"[SFW]\d{4}[MRA]")


def _engine_phase(values: dict[str, Any]) -> str | None:
    saved = (values.get("world") or {}).get("diplomacy")
    return W.phase_info(saved).name if saved else None


def checkpoint_label(values: dict[str, Any]) -> str | None:
    return _engine_phase(values)


def critical_state(phase: str) -> Callable[[Any], bool]:
    """The start of engine phase `phase` (e.g. F1903M): the checkpoint where the engine is at that
    phase and the graph is about to run its `negotiate`."""
    name = phase.strip().upper()
    if not _PHASE_NAME.fullmatch(name):
        raise ValueError(
            f"--phase {phase!r}: expected an engine phase such as S1901M, F1903M, F1903R or W1903A"
        )

    def holds(snap: Any) -> bool:
        return tuple(snap.next or ()) == ("negotiate",) and _engine_phase(snap.values) == name

    return holds


def replay_stop(start: dict[str, Any], values: dict[str, Any], phases: int) -> bool:
    """Stop at the start of the first movement phase after at least `phases` engine phases were
    played from the fork (so a fall movement includes its retreats and adjustments), or at the end."""
    if values.get("done"):
        return True
    if values.get("next") != "negotiate" or values.get("asks"):
        return False
    first, now = _engine_phase(start), _engine_phase(values)
    if not first or not now or now == first or not now.endswith("M"):
        return False
    names = [p["name"] for p in values["world"]["diplomacy"]["phases"]]
    played = names[names.index(first) : names.index(now)] if first in names else []
    return len(played) >= phases


def _new_events(start: dict[str, Any], end: dict[str, Any]) -> list[Event]:
    seen = {e["id"] for e in start.get("events", [])}
    return [e for e in end.get("events", []) if e["id"] not in seen]


def replay_outcome(start: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """What a replayed stretch produced: orders per phase, centres (and their change), each
    power's relationship labels and shifts (Enemy -2 ... Ally +2), messages sent."""
    new = _new_events(start, end)
    before = W.phase_info(start["world"]["diplomacy"])
    after = W.phase_info(end["world"]["diplomacy"])
    orders = {
        e["data"]["phase"]: e["data"]["orders"]
        for e in new
        if e["kind"] == "narration" and "records" in (e.get("data") or {})
    }
    centres = {p: len(after.centers.get(p, [])) for p in W.POWERS}
    value = {r: i - 2 for i, r in enumerate(RELATIONS)}
    relations: dict[str, dict[str, Any]] = {}
    for p in W.POWERS:
        old = relationships_of(start.get("events", []), p)
        mine = [e for e in new if e["kind"] == "diary" and e["author"] == p]
        if not mine:
            continue
        now = relationships_of(start.get("events", []) + mine, p)
        relations[p] = {
            o: {"label": now[o], "shift": value.get(now[o], 0) - value.get(old[o], 0)} for o in now
        }
    return {
        "phases": list(orders),
        "orders": orders,
        "centres": centres,
        "centre_change": {p: centres[p] - len(before.centers.get(p, [])) for p in W.POWERS},
        "relationships": relations,
        "messages": {
            p: sum(e["kind"] == "message" and e["author"] == p for e in new) for p in W.POWERS
        },
    }


def replay_summary(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The distribution over runs: how often each order was given (first replayed phase), centres
    (mean, min, max, counts), relationship labels and mean shifts, messages sent."""
    n = len(outcomes)
    if not n:
        return {"runs": 0}
    orders: dict[str, dict[str, dict[str, int]]] = {}
    for o in outcomes:
        first = o["phases"][0] if o["phases"] else None
        for power, given in (o["orders"].get(first) or {}).items():
            for order in given:
                unit = order if order == "WAIVE" else " ".join(order.split()[:2])
                slot = orders.setdefault(power, {}).setdefault(unit, {})
                slot[order] = slot.get(order, 0) + 1
    centres = {}
    for p in W.POWERS:
        vals = [o["centres"][p] for o in outcomes]
        counts: dict[str, int] = {}
        for v in vals:
            counts[str(v)] = counts.get(str(v), 0) + 1
        centres[p] = {"mean": sum(vals) / n, "min": min(vals), "max": max(vals), "counts": counts}
    relations: dict[str, dict[str, Any]] = {}
    for p in W.POWERS:
        for other in W.POWERS:
            rows = [
                o["relationships"][p][other]
                for o in outcomes
                if other in o["relationships"].get(p, {})
            ]
            if not rows:
                continue
            labels: dict[str, int] = {}
            for r in rows:
                labels[r["label"]] = labels.get(r["label"], 0) + 1
            relations.setdefault(p, {})[other] = {
                "mean_shift": sum(r["shift"] for r in rows) / len(rows),
                "labels": labels,
            }
    messages = {p: sum(o["messages"][p] for o in outcomes) / n for p in W.POWERS}
    return {
        "runs": n,
        "orders": orders,
        "centres": centres,
        "relationships": relations,
        "messages": messages,
    }
