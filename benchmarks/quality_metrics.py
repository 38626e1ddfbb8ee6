"""Play-quality metrics over one game's trace (`trace.jsonl`) and record (`record.json`).

Pure functions of those two files, so they run on any finished game, whichever model played it.
Each metric says how it decides, with its threshold, in its docstring; `game_quality` gathers
them for one game and `merge` sums games of one family and model.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import wargraph.seats.echoes as echoes
import wargraph.seats.names as names

# --- answers as text --------------------------------------------------------------------------


# Fields whose value is picked from options the question lists (a post-game choice, the
# Diplomacy send/pass choice and recipient): picking one is no echo of the instructions
CHOSEN = frozenset({"choice", "action", "to"})


def answer_text(output: Any, *, skip: frozenset[str] = frozenset()) -> str:
    """The words of an answer: a JSON answer's string values joined (less the fields in `skip`),
    prose as it is."""
    if isinstance(output, dict):
        return " ".join(answer_text(v, skip=skip) for k, v in output.items() if k not in skip)
    if isinstance(output, list):
        return " ".join(answer_text(v, skip=skip) for v in output)
    if not isinstance(output, str):
        return ""
    text = output.strip()
    if text.startswith("{"):
        try:
            return answer_text(json.loads(text, strict=False), skip=skip)
        except json.JSONDecodeError:
            pass
    return text


_words = echoes.words


def model_calls(trace: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answered calls, the last attempt of each ask (a re-ask replaces the answer)."""
    last: dict[str, dict[str, Any]] = {}
    for e in trace:
        if e.get("event") == "call":
            last[str(e.get("ask_id"))] = e
    return list(last.values())


def prompts(trace: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every prompt sent (model calls' first attempts, scripted and human seats' prompts)."""
    return [
        e
        for e in trace
        if e.get("event") in ("call", "scripted", "human") and e.get("attempt", 1) == 1
    ]


def _message(call: dict[str, Any], role: str) -> str:
    msgs = call.get("messages") or []
    return next((str(m.get("content", "")) for m in reversed(msgs) if m.get("role") == role), "")


# --- 1. instruction echo ------------------------------------------------------------------------

ECHO_SHARE = echoes.ECHO_SHARE


def instructions_of(call: dict[str, Any]) -> str:
    """What a call asked, not what it showed: the system prompt and the user turn's closing
    paragraphs that are not quoted data (lines starting with "> " or a "#" heading are data)."""
    user = _message(call, "human") or _message(call, "user")
    tail = []
    for para in reversed(user.split("\n\n")):
        lines = [ln for ln in para.splitlines() if not ln.startswith((">", "#"))]
        if not lines:
            break
        tail.insert(0, "\n".join(lines))
        if len(tail) == 2:
            break
    return _message(call, "system") + "\n" + "\n".join(tail)


def is_echo(answer: str, instructions: str) -> bool:
    """An answer that repeats its instructions (wargraph.seats.echoes: the format's or the length's
    words, ECHO_SHARE of its word triples, or one sentence of 5+ words mostly the instructions')."""
    return echoes.is_echo(answer, instructions)


# --- 2. side names spelled wrongly ------------------------------------------------------------

NAME_RATIO = names.NAME_RATIO  # difflib ratio at or above which a word is taken for a side's name


COMMON_ZIPF = names.RARE_ZIPF  # a word this frequent in English is a word, not a misspelt name


def misspelled_names(answer: str, sides: Iterable[str], known: Iterable[str]) -> list[str]:
    """Capitalised words of the answer that look like a side's name (difflib ratio >= NAME_RATIO
    against it, case-insensitive; for a word the language does not know, its stem less a
    demonym's ending counts too: "Azurlandian") but are neither the name, a word the prompt
    used, a form of the name ("Crimsonian", "Austrians", "German"; not "Azuristania":
    `wargraph.seats.names.is_form`), nor a common word of the language (Zipf frequency >=
    COMMON_ZIPF: "LAND" and "FANCY" are no misspelt England and France, "ENGELAND" is). Rarer
    known words still count ("Azura"): the measure is stricter than the correction, which
    leaves every real name alone."""
    sides = list(sides)
    seen = {w.lower() for w in known}
    wrong = []
    for word in re.findall(r"\b[A-Z][A-Za-z]{3,}\b", answer):
        if word.lower() in seen or any(names.is_form(word, n) for n in sides):
            continue
        if names.frequency(word) >= COMMON_ZIPF:
            continue
        near = names.ratio if names.is_ordinary(word) else names.nearness  # "English": a word
        if any(near(word, n) >= NAME_RATIO for n in sides):
            wrong.append(word)
    return wrong


def _seat_key(ident: str) -> tuple[str, ...]:
    """An ask's or event's id less its third part (the task or the event's kind: the ask
    "r1.adjudicate.adjudicate.control" made the event "r1.adjudicate.narration.control"); an
    event's key starts with its ask's ("r1.negotiate.message.FRANCE.x1" made ".x1.0")."""
    parts = ident.split(".")
    return tuple(parts[:2] + parts[3:])


def recorded_names(
    trace: list[dict[str, Any]], record: dict[str, Any], sides: Iterable[str]
) -> dict[str, Any]:
    """Side names spelled wrongly in what the record shows: the events a model's answer made
    (`data.source` "model"), each read against the words of the prompt its ask showed (the ask
    whose `_seat_key` the event's starts with, the longest); and the answers whose names the game corrected
    (`corrected` trace events: the raw output stays in the call's line)."""
    asked = {_seat_key(str(e.get("ask_id"))): e for e in model_calls(trace)}
    out: dict[str, Any] = {"recorded_answers": 0, "recorded_misspelled": 0}
    wrongs = []
    for e in record.get("events", []):
        if (e.get("data") or {}).get("source") != "model":
            continue
        eid = _seat_key(str(e.get("id", "")))
        ask = max((a for a in asked if eid[: len(a)] == a), key=len, default=())
        call = asked.get(ask, {})
        prompt = _message(call, "system") + "\n" + _message(call, "human")
        out["recorded_answers"] += 1
        wrong = misspelled_names(str(e.get("text", "")), sides, _words(prompt))
        if wrong:
            out["recorded_misspelled"] += 1
            wrongs.append(", ".join(wrong))
    out["corrected_answers"] = len(
        {e.get("ask_id") for e in trace if e.get("event") == "corrected" and e.get("corrections")}
    )
    out["recorded_examples"] = wrongs
    return out


# --- 3. on topic --------------------------------------------------------------------------------


def on_topic(answer: str, own: str, entities: Iterable[str]) -> bool:
    """An answer that names its own side or one of the scenario's entities (whole word,
    case-insensitive)."""
    low = answer.lower()
    return any(re.search(rf"\b{re.escape(x.lower())}\b", low) for x in [own, *entities] if x)


# --- 4. repeated blocks inside one prompt -------------------------------------------------------

BLOCK_CHARS = 30  # a repeated line shorter than this is not a block ("You are FRANCE.")
_LABEL = re.compile(r"^\(round [^)]*\)\s*")
_ELIDED = re.compile(r"^\(\d+ .* not shown\)$")
_KEY = re.compile(r"^[A-Za-z][\w /]{0,9}: ")  # "A LVP: ", "summary: " before a listed item


def repeated_blocks(prompt: str) -> list[str]:
    """Blocks a prompt shows twice (case-insensitive; quote marks and note labels such as
    "(round 2, diary)" taken off each line):
    - a "#" heading line that occurs twice;
    - a line of at least BLOCK_CHARS characters that occurs again, alone or inside another line;
    - a list line ("; " between at least two items) each of whose items, less a short key such
      as "A LVP: ", occurs elsewhere in the prompt: the same orders shown in two sections."""
    lines = [_LABEL.sub("", ln.lstrip("> ").strip()) for ln in prompt.splitlines()]
    flat = "\n".join(lines).lower()
    heads = Counter(ln.strip() for ln in prompt.splitlines() if ln.startswith("# "))
    found = [h for h, n in heads.items() if n > 1]
    for line in dict.fromkeys(lines):
        low = line.lower()
        if _ELIDED.match(line):  # "(2 earlier message(s) not shown)": a note, not a block
            continue
        if len(line) >= BLOCK_CHARS and flat.count(low) > 1:
            found.append(line)
            continue
        items = list_items(line)
        if len(items) > 1 and all(
            len(x) >= 4 and flat.count(x) > low.count(x) * flat.count(low) for x in items
        ):
            found.append(line)
    return found


def list_items(line: str) -> list[str]:
    """A list line's items ("; " between them), less a short key such as "RUSSIA 4: "."""
    return [_KEY.sub("", x).strip().lower() for x in line.split("; ")]


QUOTED_MIN = 8  # a quoted line this long or longer that an answer holds is the model's text


def quotes_an_answer(line: str, said: str) -> bool:
    """A quoted line of the prompt whose text ("> ", a cut's " …" and a note label taken off) a
    model's answer holds (`said`: the game's answers, lower case)."""
    if not line.startswith(">"):
        return False
    body = _LABEL.sub("", line.lstrip("> ").strip()).removesuffix("…").strip().lower()
    return len(body) >= QUOTED_MIN and body in said


def split_repeats(prompt: str, said: str) -> tuple[list[str], list[str]]:
    """(blocks the prompt's builder showed twice, blocks shown twice because a model wrote them):
    a block is the builder's when it is still shown twice once the quoted lines that hold a
    model's words are taken out. A message that copies part of a board line ("MOS SEV STP WAR")
    next to the board is the model's copy."""
    blocks = repeated_blocks(prompt)
    if not blocks:
        return [], []
    kept = "\n".join(ln for ln in prompt.splitlines() if not quotes_an_answer(ln, said))
    built = set(repeated_blocks(kept))
    return [b for b in blocks if b in built], [b for b in blocks if b not in built]


# --- 5. the phase a prompt names --------------------------------------------------------------

_SEASON = {"spring": "S", "fall": "F", "autumn": "F", "winter": "W"}
_LONG = re.compile(r"\b(spring|fall|autumn|winter)\s+(\d{4})\b", re.I)
_CODE = re.compile(r"\b([SFW])(\d{4})([MRA])\b")
_MOVE = re.compile(r"\bMove (\d+) of \d+\b")


def named_phase(prompt: str) -> str | None:
    """The first phase a Diplomacy prompt names, as season and year ("F1901"): "Fall 1901" or an
    engine code like "F1901M"; None when it names none."""
    long, code = _LONG.search(prompt), _CODE.search(prompt)
    found = [
        (m.start(), _SEASON[m.group(1).lower()] + m.group(2)) for m in [long] if m is not None
    ] + [(m.start(), m.group(1) + m.group(2)) for m in [code] if m is not None]
    return min(found)[1] if found else None


def named_move(prompt: str) -> int | None:
    """The move a crisis prompt's question names ("Move 2 of 2"), outside quoted lines (quoted
    answers may name other moves)."""
    m = _MOVE.search("\n".join(ln for ln in prompt.splitlines() if not ln.startswith(">")))
    return int(m.group(1)) if m else None


# --- 6-8. Diplomacy: holds, talks, diaries ------------------------------------------------------

TALK_CLAIM = re.compile(
    r"\b(agreed|agreement|promised?|proposed?|proposal|negotiat\w*|discuss\w*|talks?|told|"
    r"said|offered?|deal)\b",
    re.I,
)


def phases_by_round(record: dict[str, Any]) -> dict[int, str]:
    """Diplomacy: the engine phase played in each kit round (from the secretary's results)."""
    out = {}
    for e in record.get("events", []):
        d = e.get("data") or {}
        if e.get("kind") == "narration" and d.get("phase") and "orders" in d:
            out[int(e["round"])] = str(d["phase"])
    return out


def talkers(record: dict[str, Any]) -> dict[int, set[str]]:
    """Per round, the seats that sent or received a message (public messages reach everyone)."""
    out: dict[int, set[str]] = defaultdict(set)
    events = record.get("events", [])
    players = (record.get("scenario") or {}).get("players") or {}
    seats = set(record.get("roles") or players) | {
        e["author"] for e in events if e.get("kind") == "diary"
    }
    for e in events:
        if e.get("kind") != "message":
            continue
        r = int(e["round"])
        out[r].add(e["author"])
        aud = e.get("audience") or []
        out[r].update(seats if "*" in aud or "everyone" in aud else aud)
    return out


def hold_only(record: dict[str, Any]) -> tuple[int, int]:
    """Diplomacy: (order sets of movement phases that only hold, all such sets)."""
    only = total = 0
    for e in record.get("events", []):
        d = e.get("data") or {}
        if e.get("kind") != "narration" or not str(d.get("phase", "")).endswith("M"):
            continue
        for orders in (d.get("orders") or {}).values():
            if not orders:
                continue
            total += 1
            only += all(str(o).strip().endswith(" H") for o in orders)
    return only, total


def silent_diaries(record: dict[str, Any]) -> tuple[int, int, int]:
    """Diaries of seats that neither sent nor received a message that round: (those, of them
    claiming talks — TALK_CLAIM words in the summary —, of them answered by a model call)."""
    spoke = talkers(record)
    silent = claims = asked = 0
    for e in record.get("events", []):
        if e.get("kind") != "diary":
            continue
        if e["author"] in spoke.get(int(e["round"]), set()):
            continue
        silent += 1
        d = e.get("data") or {}
        claims += bool(TALK_CLAIM.search(str(d.get("summary", e.get("text", "")))))
        asked += d.get("source") in ("model", "fallback")
    return silent, claims, asked


# a claim denied in its own sentence ("Austria proposed nothing", "no talks with Italy")
_DENIED = re.compile(r"\b(no|not|nothing|never|none|silent|silence|without)\b|n't\b", re.I)


def _linked(events: list[dict[str, Any]], rnd: int, a: str, b: str) -> bool:
    """Whether `a` and `b` exchanged a message in round `rnd`: one wrote to the other, or wrote
    to everyone."""
    for e in events:
        if e.get("kind") != "message" or int(e.get("round", -1)) != rnd:
            continue
        aud = e.get("audience") or []
        public = "*" in aud or "everyone" in aud
        if (e.get("author") == a and (public or b in aud)) or (
            e.get("author") == b and (public or a in aud)
        ):
            return True
    return False


def talk_claims(record: dict[str, Any]) -> dict[str, Any]:
    """Diaries of every seat, read for talks they claim (TALK_CLAIM words in a sentence of the
    summary that does not deny them, `_DENIED`) with another seat named in that sentence:
    `diary_claims` such (sentence, seat) pairs; `misattributed_claims` those where the two
    exchanged no message that round (neither wrote to the other nor to everyone: "AUSTRIA
    proposed ..." when AUSTRIA sent the writer nothing); `false_talk_diaries` diaries with a
    misattributed claim or claiming talks in a round their writer neither sent nor received a
    message (`silent_diaries`), of `diaries`. Examples say who, when and what."""
    events = list(record.get("events", []))
    players = (record.get("scenario") or {}).get("players") or {}
    seats = set(players) | {e["author"] for e in events if e.get("kind") == "diary"}
    named = {s: re.compile(rf"\b{re.escape(str(s))}\b", re.I) for s in seats}
    spoke = talkers(record)
    out: dict[str, Any] = {
        "diaries": 0,
        "diary_claims": 0,
        "misattributed_claims": 0,
        "false_talk_diaries": 0,
    }
    examples: list[str] = []
    for e in events:
        if e.get("kind") != "diary":
            continue
        out["diaries"] += 1
        writer, rnd = e["author"], int(e["round"])
        d = e.get("data") or {}
        summary = str(d.get("summary", e.get("text", "")))
        false = writer not in spoke.get(rnd, set()) and bool(TALK_CLAIM.search(summary))
        for sentence in echoes.sentences(summary):
            if not TALK_CLAIM.search(sentence) or _DENIED.search(sentence):
                continue
            for other, pattern in sorted(named.items()):
                if other == writer or not pattern.search(sentence):
                    continue
                out["diary_claims"] += 1
                if not _linked(events, rnd, writer, other):
                    out["misattributed_claims"] += 1
                    false = True
                    examples.append(
                        f"{writer} ({d.get('phase', f'round {rnd}')}): {sentence.strip()[:100]!r}"
                        f" but {other} and {writer} exchanged nothing"
                    )
        out["false_talk_diaries"] += false
    out["examples"] = examples
    return out


# --- one game -----------------------------------------------------------------------------------


def negotiation(trace: list[dict[str, Any]], record: dict[str, Any]) -> dict[str, Any]:
    """Messages per seat per negotiation round (a round: one exchange of one game round; its
    seats: those asked for messages) and the rounds where every seat sent at least one."""
    asked: dict[tuple[int, str], set[str]] = defaultdict(set)
    for e in prompts(trace):
        if e.get("task") == "message":
            asked[(int(e["round"]), _exchange(e))].add(e["role"])
    sent: dict[tuple[int, str], Counter] = defaultdict(Counter)
    for e in record.get("events", []):
        if e.get("kind") == "message":
            d = e.get("data") or {}
            ex = str(d.get("negotiation_round", d.get("exchange", "")))
            sent[(int(e["round"]), ex)][e["author"]] += 1
    rounds = len(asked)
    pairs = sum(len(s) for s in asked.values())
    messages = sum(sum(sent.get(k, Counter()).values()) for k in asked)
    everyone = sum(all(sent.get(k, Counter())[s] for s in seats) for k, seats in asked.items())
    spoke = sum(sum(1 for s in seats if sent.get(k, Counter())[s]) for k, seats in asked.items())
    empty = sum(not sum(sent.get(k, Counter()).values()) for k in asked)
    silent = [
        f"{seat} in round {k[0]}, exchange {k[1]}: {_why_silent(trace, record, k, seat)}"
        for k, seats in sorted(asked.items())
        for seat in sorted(seats)
        if not sent.get(k, Counter())[seat]
    ]
    return {
        "negotiation_rounds": rounds,
        "seat_rounds": pairs,
        "messages": messages,
        "seat_rounds_with_message": spoke,
        "rounds_everyone_sent": everyone,
        "empty_rounds": empty,
        "silent": silent,
    }


def _why_silent(
    trace: list[dict[str, Any]], record: dict[str, Any], key: tuple[int, str], seat: str
) -> str:
    """Why a seat sent nothing in a negotiation round: its answer fell back, it chose silence,
    or its messages were refused (the press rules' reason)."""
    mine = [
        e
        for e in trace
        if e.get("task") == "message"
        and e.get("role") == seat
        and (int(e.get("round", 0)), _exchange(e)) == key
    ]
    if any(e.get("event") == "fallback" for e in mine):
        return "its answer fell back (no usable answer)"
    for e in reversed(mine):
        if e.get("event") == "call":
            try:
                # raw newlines in strings, as llama.cpp's grammar lets through (answer_text too)
                action = json.loads(e.get("output") or "{}", strict=False).get("action")
            except (ValueError, AttributeError):
                action = None
            if action:
                refused = [
                    str((v.get("data") or {}).get("reason"))
                    for v in record.get("events", [])
                    if (v.get("data") or {}).get("refused_message")
                    and seat in (v.get("audience") or [])
                    and int(v.get("round", 0)) == key[0]
                ]
                if refused:
                    return "its messages were refused: " + "; ".join(refused[:2])
                return f"it chose {action}"
    return "no answer found"


def _exchange(e: dict[str, Any]) -> str:
    """The exchange of a message ask, read from its id's last number (ids name it)."""
    nums = re.findall(r"\d+", str(e.get("ask_id", "")))
    return nums[-1] if nums else ""


ORDER_TASKS = ("orders", "revise")
COUNTS = (
    "answers",
    "echoes",
    "recorded_echoes",
    "misspelled",
    "recorded_answers",
    "recorded_misspelled",
    "corrected_answers",
    "text_answers",
    "on_topic",
    "prompts",
    "prompts_with_repeats",
    "prompts_with_copies",
    "phase_checked",
    "phase_right",
)


def echo_recorded(call: dict[str, Any], trace: list[dict[str, Any]]) -> bool:
    """Whether an echoing answer reached the record as it was: not when it was re-asked, nor
    when the decider left its restating sentences out (a `corrected` line with `restated`)."""
    ask, attempt = call.get("ask_id"), call.get("attempt")
    later = [e for e in trace if e.get("ask_id") == ask]
    if any(e.get("event") == "rejected" and e.get("attempt") == attempt for e in later):
        return False
    fixed = [e for e in later if e.get("event") == "corrected" and e.get("restated")]
    if not fixed:
        return True
    kept = answer_text(fixed[-1].get("output", ""), skip=CHOSEN)
    return is_echo(kept, instructions_of(call))


def game_quality(
    trace: list[dict[str, Any]],
    record: dict[str, Any],
    *,
    sides: list[str],
    entities: list[str],
    family: str,
) -> dict[str, Any]:
    """Every metric of one game, as counts (so games add up)."""
    phases = phases_by_round(record) if family == "diplomacy" else {}
    c: Counter = Counter()
    for key in COUNTS:
        c[key] += 0  # every count present, zero or not
    examples: dict[str, list[str]] = defaultdict(list)
    for call in model_calls(trace):
        text = answer_text(call.get("output", ""))
        prompt = _message(call, "system") + "\n" + _message(call, "human")
        c["answers"] += 1
        # orders are chosen from enums the prompt lists: an order cannot echo
        written = answer_text(call.get("output", ""), skip=CHOSEN)
        if call.get("task") not in ORDER_TASKS and is_echo(written, instructions_of(call)):
            c["echoes"] += 1
            examples["echoes"].append(text[:120])
            c["recorded_echoes"] += echo_recorded(call, trace)
        wrong = misspelled_names(text, sides, _words(prompt))
        if wrong:
            c["misspelled"] += 1
            examples["misspelled"].append(", ".join(wrong))
        if call.get("task") not in ORDER_TASKS and text.strip():
            c["text_answers"] += 1
            c["on_topic"] += on_topic(text, str(call.get("role", "")), entities)
    names = recorded_names(trace, record, sides)
    examples["recorded misspelled"] = names.pop("recorded_examples")
    c.update(names)
    examples["corrected"] = [
        f"{f.get('written')} -> {f.get('name')}"
        for e in trace
        if e.get("event") == "corrected"
        for f in e.get("corrections") or []
    ]
    said = " ".join(answer_text(e.get("output", "")) for e in model_calls(trace)).lower()
    for p in prompts(trace):
        prompt = _message(p, "system") + "\n" + _message(p, "human")
        c["prompts"] += 1
        # a block the model wrote twice (its answer repeating an earlier one) is its copy; the
        # rest the prompt's builder repeated
        built, copies = split_repeats(prompt, said)
        if built:
            c["prompts_with_repeats"] += 1
            examples["repeats"].append(built[0][:120])
        if copies:
            c["prompts_with_copies"] += 1
            examples["copies"].append(copies[0][:120])
        user = _message(p, "human")
        if family == "diplomacy":
            played = phases.get(int(p.get("round", 0)))
            if played:
                c["phase_checked"] += 1
                named = named_phase(user)
                if named == played[:5]:
                    c["phase_right"] += 1
                else:
                    examples["phase"].append(f"{played}: names {named}")
        elif p.get("task") in ("plan", "message", "adjudicate", "diary"):
            named = named_move(user)
            if named is not None:
                c["phase_checked"] += 1
                if named == int(p.get("round", 0)):
                    c["phase_right"] += 1
                else:
                    examples["phase"].append(f"move {p.get('round')}: names {named}")
    out: dict[str, Any] = dict(c)
    talks = negotiation(trace, record)
    examples["silent power-rounds"] = talks.pop("silent")  # why each seat sent nothing
    out.update(talks)
    if family == "diplomacy":
        out["hold_only_sets"], out["order_sets"] = hold_only(record)
        silent, claims, asked = silent_diaries(record)
        out.update(silent_diaries=silent, silent_diary_claims=claims, silent_diary_calls=asked)
        claimed = talk_claims(record)
        examples["misattributed talks"] = claimed.pop("examples")
        out.update(claimed)
    out["examples"] = {k: v[:5] for k, v in examples.items()}
    return out


def merge(games: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of several games added up; examples kept (up to five per kind)."""
    total: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for g in games:
        for k, v in g.items():
            if k == "examples":
                for kind, items in v.items():
                    examples[kind] = (examples[kind] + items)[:5]
            elif isinstance(v, int | float):
                total[k] += v
    return {**dict(total), "games": len(games), "examples": dict(examples)}


def share(part: float | None, whole: float | None) -> float | None:
    return None if not whole else (part or 0) / whole
