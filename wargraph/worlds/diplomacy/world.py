"""Full-press Diplomacy as a World, on the DATC-compliant `diplomacy` engine: the scenario
(seven powers, the `diplomacy:` section), the answer schemas (one enum of legal orders per unit,
so a grammar-constrained model cannot give an illegal order) and `DiplomacyWorld`, the rules the
library's phases consult. One kit round is one engine phase (S1901M, F1901M, F1901R, W1901A ...);
retreats and adjustments have no talks and no diaries.

The graph state keeps only the engine's saved-game dict (`world["diplomacy"]`), never a `Game`
(not picklable, slow to copy); the engine at a phase is loaded once and shared by every step
that asks about it (`engine.position`). When a run has an output folder (the trace's folder), the
debrief writes `measures.json`, `measures.md`, `relationships.png` and the final map
(`maps/<PHASE>.svg`; `diplomacy.maps: all` draws every phase); all are pure functions of the
record, so resumes rewrite the same files. Nothing is drawn during play.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model, model_validator

from wargraph.bots import is_bot
from wargraph.deciders import register_schema
from wargraph.prompts import render_prompt
from wargraph.scenario import MemoryPolicy, Role, Scenario
from wargraph.state import EVERYONE, Event, make_event
from wargraph.table import Table
from wargraph.views import quote
from wargraph.worlds import base
from wargraph.worlds import diplomacy as W
from wargraph.worlds.base import NEGOTIATE, ORDER, SUMMARIZE, Check, Question
from wargraph.worlds.diplomacy import geography as G
from wargraph.worlds.diplomacy.budget import CONTEXT_BUDGETS, estimate_tokens, fit, fit_lines
from wargraph.worlds.diplomacy.orders import legal_orders_at

SECRETARY = "secretary"
RELATIONS: tuple[str, ...] = ("Enemy", "Unfriendly", "Neutral", "Friendly", "Ally")
# Every question keeps its answer in one private note (the seat's latest answer), but no prompt
# shows the notes: the view already renders the diary, its digest, this phase's talks and the
# last results, so the notes would only repeat them.
NOTE_SLOT = "latest"
MESSAGE_MIN_TOKENS = 24  # a message cut shorter than this says nothing


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
    maps: Literal["final", "all", "none"] = "final"
    """SVG maps written at the end of the game when the run has an output folder: the final
    position (final), every phase (all), or none. Never during play (a map costs more than a
    phase); `wargraph eval diplomacy` draws every phase of a record on request."""

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
    # The world's view is itself bounded (a yearly digest replaces old diary entries; only the
    # last phase's results and this phase's talks), so it reads from every visible event.
    memory: MemoryPolicy = "full"
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


ACTIONS = ("send", "pass")


def _messages_schema(args: dict[str, Any]) -> type[BaseModel]:
    """Sending is the normal answer: at least one message (to a power by name or GLOBAL), then
    `action`, send first. Passing is an explicit choice (`action: pass`; the messages are not
    sent): a schema whose shortest answer is an empty list is what a grammar-bound small model
    picks."""
    recipients = tuple(args.get("recipients") or (W.GLOBAL,))
    message = create_model(
        "Message",
        to=(Literal[recipients], ...),  # type: ignore[valid-type]
        text=text_field(int(args.get("chars", 300))),
    )
    limit = max(1, int(args.get("limit", 2)))

    def grammar_only(schema: dict[str, Any]) -> None:
        # the grammar asks for the choice and one message at least; a person (or a backend
        # without grammars) may leave `action` out (send) and give no message
        schema["required"] = ["messages", "action"]
        schema["properties"]["messages"]["minItems"] = 1

    return create_model(
        "Messages",
        __config__=ConfigDict(json_schema_extra=grammar_only),
        messages=(list[message], Field(default_factory=list, max_length=limit)),  # type: ignore[valid-type]
        action=(Literal[ACTIONS], "send"),  # type: ignore[valid-type]
    )


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


# --- the world ---------------------------------------------------------------------------------


def _dip(table: Table) -> DiplomacyScenario:
    s = table.scenario
    if not isinstance(s, DiplomacyScenario):
        raise TypeError(f"the diplomacy graph needs a diplomacy scenario, not {s.family!r}")
    return s


def _saved(table: Table) -> dict[str, Any]:
    return table.state["world"]["diplomacy"]


def _position(table: Table) -> W.Position:
    """The engine at the current phase: loaded once per position and shared by every step and
    seat that asks about it (`engine.position`), looked up once per step."""
    if "position" not in table.cache:
        table.cache["position"] = W.position(_saved(table))
    return table.cache["position"]


def _info(table: Table) -> W.PhaseInfo:
    """Where the game stands (read once per step)."""
    if "info" not in table.cache:
        table.cache["info"] = W.phase_info(_saved(table))
    return table.cache["info"]


def _legal(table: Table, power: str) -> dict[str, list[str]]:
    """A power's legal orders (computed once per position; this step's copy)."""
    legal = table.cache.setdefault("legal", {})
    if power not in legal:
        legal[power] = legal_orders_at(_position(table), power)
    return legal[power]


def _render_talk(events: list[Event], me: str | None, budget: int | None = None) -> str:
    """Messages as `FROM to TO:` followed by the quoted text (other powers' words are data).

    With a `budget` (tokens), each message is cut to an equal share of it (at least
    `MESSAGE_MIN_TOKENS`) and, when even that is too much, the newest messages are kept."""
    share = None
    if budget is not None and events:
        share = max(budget // len(events) - 8, MESSAGE_MIN_TOKENS)
    lines = []
    for e in events:
        to = "everyone" if EVERYONE in e["audience"] else e.get("data", {}).get("to", "?")
        who = "you" if e["author"] == me else e["author"]
        text = e["text"] if share is None else fit(e["text"], share)
        lines.append(f"{who} to {'you' if to == me else to}:\n{quote(text)}")
    if budget is None:
        return "\n".join(lines)
    kept: list[str] = []
    used = 0
    for line in reversed(lines):  # the newest first
        cost = estimate_tokens(line) + 1
        if kept and used + cost > budget:
            break
        kept.insert(0, line)
        used += cost
    dropped = len(lines) - len(kept)
    note = [f"({dropped} earlier message(s) not shown)"] if dropped else []
    return "\n".join(note + kept)


def relationships_of(seen: list[Event], power: str) -> dict[str, str]:
    """The power's latest relationships (Neutral toward everyone before its first entry)."""
    rel = {p: "Neutral" for p in W.POWERS if p != power}
    for e in seen:
        if e["kind"] == "diary" and e["author"] == power:
            rel.update(e.get("data", {}).get("relationships") or {})
    return rel


def diary_text(seen: list[Event], power: str, budget: int | None = None) -> str:
    """The power's diary as it reads it: the latest yearly digest, the entries since, its goals
    and relationships. Bounded: a digest replaces the entries of the years it covers; with a
    `budget` (tokens) the digest and the latest entry share it and earlier entries of the year
    are left to the next digest."""
    mine = [e for e in seen if e["author"] == power and e["kind"] in ("diary", "diary_digest")]
    digests = [e for e in mine if e["kind"] == "diary_digest"]
    through = digests[-1]["data"]["through_year"] if digests else 0
    entries = [e for e in mine if e["kind"] == "diary" and e["data"]["year"] > through]
    rel = relationships_of(seen, power)
    relations = "Relationships: " + ", ".join(f"{p} {r}" for p, r in rel.items())
    goals = entries[-1]["data"].get("goals", "") if entries else ""
    cut = (lambda text, _: text) if budget is None else fit
    room = 0 if budget is None else budget - estimate_tokens(relations) - 12
    if budget is not None and len(entries) > 1:
        entries = entries[-1:]  # the latest entry; the digest at the year's end covers the rest
    digest_room = room // 3 if entries else room
    goal_room = room // 6
    entry_room = room - (digest_room if digests else 0) - (goal_room if goals else 0)
    lines = []
    if digests:
        text = cut(digests[-1]["text"], digest_room)
        lines.append(f"Digest of your diary up to {through}:\n{quote(text)}")
    for e in entries:
        d = e["data"]
        text = d.get("summary", "")
        if d.get("intent"):
            text += f"\nIntent: {d['intent']}"
        lines.append(f"{d['phase']}:\n{quote(cut(text, max(entry_room // len(entries), 1)))}")
    if goals:
        lines.append(f"Your goals now:\n{quote(cut(goals, goal_room))}")
    lines.append(relations)
    return "\n".join(lines)


def _provinces(order: str) -> set[str]:
    return {w[:3] for w in order.split() if len(w) >= 3 and w[:3].isalpha() and w.isupper()}


def last_phase_text(event: Event, power: str, near: set[str], budget: int | None = None) -> str:
    """The last adjudication as it concerns `power`: its own orders and their results first,
    then other powers' orders that touch a province near it (`near`); orders elsewhere are only
    counted (the board shows where everything stands now). Within `budget`, the power's own
    line is cut last. Older records without order records: the full text."""
    d = event.get("data") or {}
    records = d.get("records")
    if records is None:
        return event["text"] if budget is None else fit(event["text"], budget)
    mine: list[str] = []
    others: dict[str, list[str]] = {}
    elsewhere = 0
    for r in records:
        result = "refused" if r.get("invalid") else r.get("result")
        text = f"{r['order']} ({result}{', by default' if r.get('defaulted') else ''})"
        if r["power"] == power:
            mine.append(text)
        elif _provinces(r["order"]) & near:
            others.setdefault(r["power"], []).append(text)
        else:
            elsewhere += 1
    head = f"{d.get('phase', '')}, yours: " + ("; ".join(mine) or "no orders")
    near_lines = [f"{p}: " + "; ".join(v) for p, v in sorted(others.items())]
    tail = [f"({elsewhere} orders elsewhere not shown)"] if elsewhere else []
    if budget is None:
        return "\n".join([head, *near_lines, *tail])
    room = budget - sum(estimate_tokens(t) + 1 for t in tail)
    head = fit(head, max(room - 1, 1))
    room -= estimate_tokens(head) + 1
    kept = fit_lines(near_lines, room, dropped="({n} more near you not shown)") if room > 0 else []
    return "\n".join([head, *kept, *tail])


def _room(section: str) -> int:
    """A section's budget less its heading and quote marks (the budget counts the whole section)."""
    return CONTEXT_BUDGETS[section] - estimate_tokens(f"# {section} (private)\n> ") - 2


def power_context(table: Table, power: str, seen: list[Event]) -> str:
    """The power's view, within a token budget per section (`budget.CONTEXT_BUDGETS`): the
    public game and board first (the same for every power, so llama.cpp reuses its KV cache
    across seats), then what stays put during the phase (the last results as they concern the
    power, its brief and guidance), then what grows (this phase's talks, the diary, notes).

    Built only from `seen` (view_for: the power's own and public events) and the public board."""
    s = _dip(table)
    pos = _position(table)
    budgets = CONTEXT_BUDGETS
    rnd = table.round
    setting = next((e for e in seen if e["kind"] == "setting"), None)
    results = [e for e in seen if e["kind"] == "narration" and e["phase"] == "adjudicate"]
    public = [e for e in seen if e["round"] == rnd and e["kind"] == "message"]
    private = [e for e in public if EVERYONE not in e["audience"]]
    public = [e for e in public if EVERYONE in e["audience"]]
    info = _info(table)
    # The header names the phase being played, from the engine: the scenario's title and setting
    # may name the opening season ("Diplomacy, Spring 1901"), which later phases contradict.
    parts = [f"# The game: Diplomacy, {phase_title(info)}"]
    if setting:
        parts[0] += "\n" + quote(setting["text"].partition("\n")[2] or setting["text"])
    board = pos.derived("board", G.render_board_compact)
    if estimate_tokens(board) > budgets["The board"]:  # not on the standard map: counts only
        board = pos.derived("board counts", lambda g: G.render_board_compact(g, units=False))
    parts.append("# The board\n" + quote(board))
    if results:
        near = pos.derived(("near", power), lambda g: G.near_provinces(g, power))
        text = last_phase_text(results[-1], power, near, _room("Last phase"))
        parts.append("# Last phase\n" + quote(text))
    brief = next((e for e in seen if e["kind"] == "brief" and e["audience"] == [power]), None)
    mine = f"# You are {power}\nYour home centres: {', '.join(sorted(info.homes.get(power, [])))}"
    if brief:
        mine += "\n" + quote(brief["text"])
    parts.append(mine)
    guidance = s.diplomacy.instructions.get(power, "").strip()
    if guidance:
        parts.append("# Guidance for you (from the scenario)\n" + quote(guidance))
    if public:
        # named by power even for its own: the same text for every seat
        talk = _render_talk(public, None, _room("Public messages this phase"))
        parts.append("# Public messages this phase\n" + talk)
    if private:
        talk = _render_talk(private, power, _room("Your private talks this phase"))
        parts.append("# Your private talks this phase\n" + talk)
    parts.append("# Your diary (private)\n" + diary_text(seen, power, _room("Your diary")))
    notes = [e for e in seen if e["round"] == rnd and e["kind"] == "verdict"]
    if notes:
        parts.append("# Notes from the secretary\n" + "\n".join(quote(e["text"]) for e in notes))
    return "\n\n".join(parts)


_SEASONS = {"S": "Spring", "F": "Fall", "W": "Winter"}
_KINDS = {"M": "movement", "R": "retreats", "A": "adjustments"}


def phase_title(info: W.PhaseInfo) -> str:
    """ "Fall 1901 movement (F1901M)": the engine's phase in words, then its code."""
    if info.is_done or not info.season:
        return f"the game is over ({info.name})"
    return f"{_SEASONS[info.season]} {info.year} {_KINDS.get(info.type, '')} ({info.name})"


UNITS_LEGEND = "Write each order in full, unit first: F ARM - ANK, F ARM S A CON - ANK, F ARM H."


def unit_blocks_text(table: Table, power: str) -> str:
    """Each unit with its legal orders (compact) and, room allowing, its nearest foreign units
    and centres: the most detail that fits the section's budget (order questions)."""
    n = _dip(table).diplomacy.nearest
    legal = _legal(table, power)
    budget = _room("Your units")

    def blocks(game: Any) -> str:
        found = W.unit_blocks(game, power, n_foreign=n, n_centres=n, legal=legal)
        if not found:
            return ""
        room = budget - estimate_tokens(UNITS_LEGEND) - 6
        lines = [G.unit_lines(b) for b in found]
        cost = {k: sum(estimate_tokens(x[k]) + 1 for x in lines) for k in lines[0]}
        for near, supports in ((True, True), (False, True), (False, False)):
            if cost["head"] + near * cost["near"] + cost["orders" if supports else "moves"] <= room:
                break
        text = "\n".join(G.render_unit_compact(x, near=near, supports=supports) for x in lines)
        if estimate_tokens(text) > room:  # even the least detail is too long: whole lines
            text = "\n".join(fit_lines(text.splitlines(), room))
        return UNITS_LEGEND + "\n" + text

    text = _position(table).derived(("blocks", power, n, budget), blocks)
    return "# Your units\n" + text if text else ""


def _talked(seen: list[Event], power: str, rnd: int) -> bool:
    """Whether the power sent or read a message this round (its view holds what reached it)."""
    return any(e["round"] == rnd and e["kind"] == "message" for e in seen)


def silent_diary(seen: list[Event], power: str, info: W.PhaseInfo) -> dict[str, Any]:
    """The diary answer of a phase with no messages, written by code: it says no talks took
    place and keeps the power's goals and relationships."""
    entries = [e for e in seen if e["kind"] == "diary" and e["author"] == power]
    goals = entries[-1]["data"].get("goals", "") if entries else ""
    value = {
        "summary": f"{info.name}: no messages were sent or received this phase.",
        "intent": "",
        "goals": goals,
        **relationships_of(seen, power),
    }
    return {"value": value, "source": "code"}


def game_id_for(scenario: DiplomacyScenario) -> str:
    if scenario.diplomacy.game_id:
        return scenario.diplomacy.game_id
    return "wargraph-" + hashlib.sha256(scenario.title.encode()).hexdigest()[:12]


def _undigested(seen: list[Event], power: str, year: int) -> list[Event]:
    """Diary entries of years before `year` that no digest covers yet."""
    mine = [e for e in seen if e["author"] == power]
    through = max(
        (e["data"]["through_year"] for e in mine if e["kind"] == "diary_digest"), default=0
    )
    return [e for e in mine if e["kind"] == "diary" and through < e["data"]["year"] < year]


def digest_chars(cfg: DiplomacyConfig) -> int:
    """The digest may be twice a diary summary, but stays short enough for a bounded grammar."""
    return max(cfg.diary_chars, min(2 * cfg.diary_chars, GRAMMAR_TEXT_LIMIT))


def _orders_tokens(legal: dict[str, list[str]]) -> int:
    chars = sum(len(k) + max((len(o) for o in opts), default=8) + 8 for k, opts in legal.items())
    return chars // 2 + 24


def _fallback_orders(table: Table, power: str, legal: dict[str, list[str]]) -> dict[str, str]:
    """The documented fallback: hold, disband when dislodged, waive builds, civil-disorder
    disbands (one per key, in key order)."""
    holds = W.hold_orders(_position(table).game, power, legal=legal)
    return dict(zip(legal, holds, strict=False))


def _bot_facts(table: Table, power: str, legal: dict[str, list[str]]) -> dict[str, Any] | None:
    """What a bot seat reads (wargraph.bots): its units with their nearest unowned centres and
    legal orders. Public board facts, and only on a bot's ask (a model's checkpoint stays lean)."""
    if not is_bot(table.seat(power).get("model")):
        return None
    blocks = _position(table).derived(
        ("bot", power), lambda game: W.unit_blocks(game, power, n_foreign=0, legal=legal)
    )
    return {"power": power, "phase_type": _info(table).type, "units": blocks}


def _legal_lists(legal: dict[str, list[str]]) -> str:
    """Adjustments have no unit blocks with legal orders: list the options of each slot."""
    return "\n" + "\n".join(f"{k}: {' | '.join(opts)}" for k, opts in legal.items())


def run_folder(table: Table) -> Path | None:
    """The run's output folder: where the runner puts the trace (None: no files are written)."""
    trace = table.context.trace_path
    return Path(trace).parent if trace else None


def write_map(saved: dict[str, Any], phase: str | None, folder: Path) -> Path:
    """`folder/maps/<PHASE>.svg` for one phase (default: the current one)."""
    return W.write_maps(saved, folder / "maps", [phase or W.phase_info(saved).name])[0]


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


class DiplomacyWorld(base.World):
    """The engine is the board and the secretary: press rules, legal orders, adjudication."""

    name = "diplomacy"
    secretary_name = SECRETARY
    everyone = W.GLOBAL
    order_task = "orders"
    give_up_status = "held"
    narrates = False

    def open(self, table: Table) -> dict[str, Any]:
        s = table.scenario
        assert isinstance(s, DiplomacyScenario)
        return {"world": {"diplomacy": W.new_game(game_id=game_id_for(s))}}

    def actors(self, table: Table, phase: str) -> list[str]:
        cfg = _dip(table).diplomacy
        info = _info(table)
        if phase == ORDER:
            return [p for p in info.powers_alive if _legal(table, p)]
        if info.type != "M":  # retreats and adjustments: no talks, no diary
            return []
        if phase == NEGOTIATE and not cfg.talks:
            return []
        if phase == SUMMARIZE and not cfg.diary:
            return []
        return list(info.powers_alive)

    def render_view(self, table: Table, role: str, events: list[Event]) -> str:
        return power_context(table, role, events)

    def system(self, table: Table, role: str) -> str:
        return render_prompt("diplomacy_system", table.variant(role))

    # --- negotiate ---------------------------------------------------------------------------

    def exchanges(self, table: Table) -> int:
        return _dip(table).diplomacy.negotiation_rounds

    def message_limit(self, table: Table) -> int:
        return _dip(table).diplomacy.max_messages

    def recipients(self, table: Table, speaker: str, speakers: list[str]) -> list[str]:
        others = [o for o in speakers if o != speaker]
        return [W.GLOBAL] + ([] if _dip(table).diplomacy.public_only else others)

    def message_question(
        self, table: Table, speaker: str, exchange: int, recipients: list[str]
    ) -> Question:
        cfg = _dip(table).diplomacy
        v = table.variant(speaker)
        others = [r for r in recipients if r != W.GLOBAL]
        return Question(
            task=self.message_task,
            system=self.system(table, speaker),
            context=table.view_text(speaker),
            question=render_prompt(
                "diplomacy_negotiate_question",
                v,
                power=speaker,
                phase=_info(table).name,
                round=exchange,
                rounds=cfg.negotiation_rounds,
                limit=cfg.max_messages,
                chars=cfg.message_chars,
                recipients=", ".join(recipients),
                private=""
                if cfg.public_only
                else f" to one power privately ({', '.join(others)}) or",
            ),
            schema="diplomacy_messages",
            schema_args={
                "recipients": recipients,
                "limit": cfg.max_messages,
                "chars": cfg.message_chars,
            },
            fallback={"action": "pass", "messages": []},
            scripted={"action": "send"},  # scripted games talk as before (benchmarks compare)
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=cfg.max_messages * (cfg.message_chars + 16) + 16,
        )

    def address(self, table: Table, to: str) -> str:
        return to.strip().upper()

    def check_message(self, table: Table, sender: str, to: str, text: str) -> str | None:
        cfg = _dip(table).diplomacy
        alive = list(_info(table).powers_alive)
        return W.check_message(
            sender, to, text, press=cfg.press, max_len=cfg.message_chars, powers=alive
        )

    def message_data(self, table: Table, exchange: int) -> dict[str, Any]:
        return {"phase": _info(table).name, "negotiation_round": exchange}

    def delivered(self, table: Table, sent: list[tuple[str, str, str]]) -> dict[str, Any]:
        # the engine's saved game keeps the press too (record.json holds it)
        return {"diplomacy": W.add_messages(_saved(table), sent)} if sent else {}

    # --- summarize: diary entries and the yearly digest ------------------------------------

    def diary_questions(self, table: Table, writer: str) -> list[tuple[str, Question]]:
        cfg = _dip(table).diplomacy
        info = _info(table)
        seen = table.view(writer, policy="full")  # its own diary, whatever the policy
        v = table.variant(writer)
        others = [o for o in W.POWERS if o != writer]
        diary = Question(
            task="diary",
            system=self.system(table, writer),
            context=table.view_text(writer),
            question=render_prompt(
                "diplomacy_diary_question",
                v,
                power=writer,
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
                **relationships_of(seen, writer),
            },
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=2 * cfg.diary_chars + 10 * len(others) + 30,
        )
        # Nothing said to or by this power: the entry says so by code (`diary_events`); a model
        # asked to summarise talks that did not happen invents them.
        out = [("", diary)] if _talked(seen, writer, table.round) else []
        entries = _undigested(seen, writer, info.year)
        if entries:
            out.append(("", self._digest_question(table, writer, entries, seen)))
        return out

    def _digest_question(
        self, table: Table, power: str, entries: list[Event], seen: list[Event]
    ) -> Question:
        cfg = _dip(table).diplomacy
        v = table.variant(power)
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
        question = render_prompt(
            "diplomacy_digest_question", v, power=power, years=", ".join(map(str, years))
        )
        return Question(
            task="digest",
            system=self.system(table, power),
            context=table.view_text(power),
            question="\n\n".join(parts) + "\n\n" + question,
            schema="diplomacy_digest",
            schema_args={"chars": chars},
            fallback={"digest": fallback or "Nothing to note."},
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=chars + 20,
        )

    def diary_events(
        self, table: Table, writer: str, answers: dict[str, dict[str, Any]]
    ) -> list[Event]:
        info = _info(table)
        events: list[Event] = []
        digest = answers.get("digest")
        if digest:
            entries = _undigested(table.view(writer, policy="full"), writer, info.year)
            events.append(
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="diary_digest",
                    author=writer,
                    text=digest["value"]["digest"],
                    audience=[writer],
                    data={
                        "through_year": max(e["data"]["year"] for e in entries),
                        "phases": [e["data"]["phase"] for e in entries],
                        "source": digest["source"],
                    },
                )
            )
        d = answers.get("diary") or silent_diary(table.view(writer, policy="full"), writer, info)
        value = d["value"]
        rel = {o: value.get(o, "Neutral") for o in W.POWERS if o != writer}
        text = value["summary"]
        if value.get("intent"):
            text += f"\nIntent: {value['intent']}"
        events.append(
            make_event(
                round=table.round,
                phase=table.phase,
                kind="diary",
                author=writer,
                text=text,
                audience=[writer],
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
        return events

    # --- order and secretary_validate ------------------------------------------------------

    def _orders_question(
        self,
        table: Table,
        power: str,
        legal: dict[str, list[str]],
        *,
        task: str,
        refused: dict[str, Any] | None = None,
        attempt: int = 0,
    ) -> Question:
        s = _dip(table)
        v = table.variant(power)
        info = _info(table)
        people = str(table.seat(power).get("kind", "ai")) == "human"
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
        blocks = unit_blocks_text(table, power)
        return Question(
            task=task,
            system=self.system(table, power),
            context=table.view_text(power),
            question=(blocks + "\n\n" if blocks else "")
            + question
            + (_legal_lists(legal) if info.type == "A" else ""),
            schema="diplomacy_orders_text" if people else "diplomacy_orders",
            schema_args={"legal": legal},
            fallback=_fallback_orders(table, power, legal),
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=_orders_tokens(legal),
            facts=_bot_facts(table, power, legal),
        )

    def order_question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        legal = _legal(table, actor)
        return self._orders_question(table, actor, legal, task=self.order_task)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return dict(value)

    def order_events(self, table, actor, proposal, source, *, team=None) -> list:
        return []  # the orders are recorded with their results when the engine adjudicates

    def max_revisions(self, table: Table) -> int:
        return _dip(table).diplomacy.order_retries

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        """The engine checks the orders on a copy of the phase."""
        legal = _legal(table, actor)
        accepted, refused = W.check_answer(_saved(table), actor, proposal, legal=legal)
        return Check(
            accepted=accepted,
            reasons=[f"{k}: {o or 'no order'}: {why}" for k, (o, why) in refused.items()],
            detail={k: list(v) for k, v in refused.items()},
        )

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        legal = _legal(table, actor)
        refused = {k: tuple(v) for k, v in (check.detail or {}).items()}
        sub = {k: legal[k] for k in refused if k in legal}
        return self._orders_question(
            table, actor, sub, task="revise", refused=refused, attempt=attempt
        )

    def revised(self, table: Table, actor: str, proposal: Any, value: dict[str, Any]) -> Any:
        return {**proposal, **value}

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        """After the retries the unit holds (dislodged units disband, builds are waived)."""
        held = "; ".join(f"{k} ({o or 'no order'}: {why})" for k, (o, why) in check.detail.items())
        return check.accepted, held

    def verdict_events(self, table, actor, status, attempts, note, trail) -> list:
        if status == self.give_up_status:
            text = (
                f"After {attempts} revision(s) the secretary still refused: {note}. "
                "Those units hold (dislodged units disband, builds are waived)."
            )
        elif attempts:
            text = f"The secretary accepted your orders after {attempts} revision(s)."
        else:
            return []
        return [
            self.verdict(
                table, actor, text, {"status": status, "revisions": attempts, "trail": trail}
            )
        ]

    # --- adjudicate: the engine processes the phase ---------------------------------------

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        from wargraph.evals.diplomacy import records_from_results

        s = _dip(table)
        saved = _saved(table)
        w = table.state.get("world") or {}
        game = _position(table).game
        info = W.phase_info(saved)
        final = {}
        for p in info.powers_alive:
            legal = _legal(table, p)
            if legal:
                final[p] = W.finalize_orders(game, p, proposals.get(p) or {}, legal=legal)
        new, results = W.adjudicate(saved, final)
        status = w.get("status") or {}
        invalid = {
            p: [tuple(x) for x in (t[-1].get("detail") or {}).values()]
            for p, t in (w.get("trail") or {}).items()
            if status.get(p) == self.give_up_status
        }
        records = records_from_results(results, {p: v for p, v in invalid.items() if v})
        after = W.phase_info(new)
        centres = {p: len(after.centers.get(p, [])) for p in W.POWERS}
        events: list[Event] = [
            make_event(
                round=table.round,
                phase=table.phase,
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
                    "sources": {
                        p: [t["source"] for t in v] for p, v in (w.get("trail") or {}).items()
                    },
                },
            )
        ]
        done = after.is_done or after.year > s.diplomacy.max_year
        update: dict[str, Any] = {"world": {"diplomacy": new}, "events": events}
        if done:
            why = (
                "the game is over"
                if after.is_done
                else f"the last year ({s.diplomacy.max_year}) is played"
            )
            events.append(
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="narration",
                    author=SECRETARY,
                    text=f"The game ends after {info.name}: {why}.",
                    key="end",
                    data={"final_phase": after.name},
                )
            )
            update["done"] = True
        return update

    # --- after the game --------------------------------------------------------------------

    def debrief(self, table: Table) -> dict[str, Any]:
        """Game scores for the record; the measures' files when the run has an output folder."""
        from wargraph.evals.diplomacy import game_measures, write_measures
        from wargraph.records import build_record

        s = _dip(table)
        record = build_record(dict(table.state), thread_id="", trace_path=table.context.trace_path)
        measures = game_measures(record)
        folder = run_folder(table)
        if folder is not None:
            write_measures(measures, folder)
            saved = _saved(table)
            phases = {"final": [W.phase_info(saved).name], "all": None, "none": []}
            W.write_maps(saved, folder / "maps", phases[s.diplomacy.maps])
        scores = measures["scores"]
        text = f"Game scores (max year {s.diplomacy.max_year}): " + ", ".join(
            f"{p} {v:g}" for p, v in sorted(scores.items(), key=lambda x: -x[1])
        )
        return {
            "events": [
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="narration",
                    author=SECRETARY,
                    text=text,
                    data={"scores": scores, "centres": measures["centres"]},
                )
            ]
        }

    def measures(self, record: dict[str, Any]) -> dict[str, Any]:
        from wargraph.evals.diplomacy import game_measures

        return game_measures(record)
