"""`view_for`: the only way an agent's context is built; information asymmetry lives here."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from wargraph.kernel.scenario import Scenario
from wargraph.kernel.state import EVERYONE, Event, GameState


def can_see(event: Event, groups: set[str]) -> bool:
    audience = event.get("audience") or [EVERYONE]
    return EVERYONE in audience or bool(groups.intersection(audience))


def visible_events(events: Iterable[Event], groups: set[str]) -> list[Event]:
    return [e for e in events if can_see(e, groups)]


def apply_memory(events: list[Event], policy: str, current_round: int) -> list[Event]:
    """full: everything; last_round: setup + last round + this round; diary: setup + this round."""
    if policy == "full":
        return events
    keep_from = current_round - 1 if policy == "last_round" else current_round
    return [e for e in events if e["round"] == 0 or e["round"] >= keep_from]


def view_for(
    state: GameState,
    role: str,
    scenario: Scenario,
    *,
    policy: str | None = None,
) -> list[Event]:
    """The events `role` may see (its own, its teams', public ones), cut by its memory policy.
    `policy="record"` is the whole record, for the control's questions after the game."""
    if policy == "record":
        return list(state.get("events", []))
    groups = scenario.groups_of(role)
    try:
        role_policy = scenario.role(role).memory
    except KeyError:
        role_policy = None
    chosen = policy or role_policy or scenario.memory
    seen = visible_events(state.get("events", []), groups)
    return apply_memory(seen, chosen, state.get("round", 1))


def quote(text: str) -> str:
    """Text from agents and scenario files is data: quote every line so it cannot pose as ours."""
    lines = str(text).splitlines() or [""]
    return "\n".join("> " + line for line in lines)


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")


def header_field(value: Any) -> str:
    """A name or kind in a header line: a plain word as it is, anything else as a JSON string,
    so a space, newline, `]` or `,` in it cannot end the header or pose as another field."""
    text = str(value)
    return text if _PLAIN.fullmatch(text) else json.dumps(text)


ESTIMATE_MARGIN = 1.1
_PIECE = re.compile(r"[A-Za-z]+|\d|[^\sA-Za-z\d]")  # words, digits one by one, signs
_CODE = re.compile(r"\b[A-Z]{3,}\b")  # province and power codes: BUD 2 tokens, AUSTRIA 4
_LONG = re.compile(r"[A-Za-z]{9,}")  # long words split


@lru_cache(maxsize=8192)
def estimate_tokens(text: str) -> int:
    """Tokens of `text`, estimated from its pieces (words, digits, signs) with a margin. It is
    calibrated on the embedded model's tokenizer (SmolLM2), which splits words more finely than
    the large vocabularies of capable models, so it errs high for them: a view sized by it stays
    under the budget in the model's own tokens. wargraph cannot load a tokenizer for whatever
    model plays; `benchmarks/diplomacy_lean.py` counts the real tokens of the embedded model.
    Cached: the same messages and diary texts are measured for every seat and step."""
    pieces = len(_PIECE.findall(text))
    pieces += sum((len(c) + 1) // 2 - 1 for c in _CODE.findall(text))
    pieces += sum(len(w) // 9 for w in _LONG.findall(text) if not w.isupper())
    return math.ceil(ESTIMATE_MARGIN * pieces) + text.count("\n")


@dataclass
class ViewTally:
    """What one view shows of the texts it is given (events, diary entries, goals): counted
    while the view is rendered (`counting`) and sent with the ask to the trace, so no cut in a
    view is silent. `whole`: shown as written; `shortened`: shown in part; `dropped`: left out."""

    items: int = 0
    chars: int = 0
    whole: list[int] = field(default_factory=lambda: [0, 0])  # [items, characters]
    shortened: list[int] = field(default_factory=lambda: [0, 0])
    dropped: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, text: str, shown: str | None) -> None:
        n = len(str(text).strip())
        if not n:
            return
        self.items += 1
        self.chars += n
        kind = (
            self.dropped
            if shown is None
            else self.whole
            if str(shown).strip() == str(text).strip()
            else self.shortened
        )
        kind[0] += 1
        kind[1] += n

    def add_counts(self, other: ViewTally) -> None:
        self.items += other.items
        self.chars += other.chars
        for mine, theirs in (
            (self.whole, other.whole),
            (self.shortened, other.shortened),
            (self.dropped, other.dropped),
        ):
            mine[0] += theirs[0]
            mine[1] += theirs[1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "chars": self.chars,
            "whole": {"items": self.whole[0], "chars": self.whole[1]},
            "shortened": {"items": self.shortened[0], "chars": self.shortened[1]},
            "dropped": {"items": self.dropped[0], "chars": self.dropped[1]},
        }


_TALLY: ContextVar[ViewTally | None] = ContextVar("view_tally", default=None)


@contextmanager
def counting() -> Iterator[ViewTally]:
    """Count the texts the views rendered inside the block show whole, shortened or not."""
    tally = ViewTally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def count_again(counted: ViewTally) -> None:
    """A view rendered and counted before is given again: its counts go to the current tally."""
    tally = _TALLY.get()
    if tally is not None and tally is not counted:
        tally.add_counts(counted)


def shown(text: str, as_shown: str | None) -> None:
    """A view shows `text` as `as_shown` (None: left out); counted when a view is counted."""
    tally = _TALLY.get()
    if tally is not None:
        tally.add(text, as_shown)


# Per-event caps in a view (characters; ~4 per token). The setup (round 0: setting, briefs) is
# never cut. The current round is shown nearly whole (a plan of three short sentences fits); earlier rounds
# by their opening sentences, so a view holding the last round stops growing after move 2 however
# long the model's answers are.
EVENT_CHARS = 300
OLDER_EVENT_CHARS = 160


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters: at the last sentence end inside the limit,
    else at a word boundary, marked with an ellipsis (the reader must know it was cut)."""
    text = str(text).strip()
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    ends = [head.rfind(p) for p in (". ", "! ", "? ", ".\n")]
    end = max(ends)
    if end >= limit // 3:
        return head[: end + 1] + " …"
    space = head.rfind(" ")
    return (head[:space] if space >= limit // 3 else head).rstrip() + " …"


def render_events(
    events: list[Event],
    *,
    empty: str = "(nothing yet)",
    current_round: int | None = None,
    budget: int | None = None,
) -> str:
    """Events as header lines with their quoted text. With `budget` (tokens; the capable
    profile's view), every text whole and, when they do not all fit, the oldest rounds' events
    left out whole (the setup never) with a line saying how many. Else with `current_round`
    (the small profile's lean view), texts are capped: this round's at EVENT_CHARS, earlier
    rounds' at OLDER_EVENT_CHARS, the setup never. Each text is counted (`shown`)."""
    if not events:
        return empty
    if budget is not None:
        return _render_within(events, budget)
    blocks = []
    for e in events:
        text = e["text"]
        if current_round is not None and int(e["round"] or 0) > 0:
            older = int(e["round"]) < current_round
            text = shorten(text, OLDER_EVENT_CHARS if older else EVENT_CHARS)
        shown(e["text"], text)
        blocks.append(_event_block(e, text))
    return "\n".join(blocks)


def _event_block(e: Event, text: str) -> str:
    to = "" if EVERYONE in e["audience"] else " to " + ", ".join(map(header_field, e["audience"]))
    kind, author = header_field(e["kind"]), header_field(e["author"])
    return f"[round {header_field(e['round'])}, {kind} from {author}{to}]\n{quote(text)}"


def left_out(n: int, where: str) -> str:
    """The line a view shows for the whole items it left out for room (never a silent cut)."""
    return f"({n} earlier item(s) {where} not shown: over this seat's context budget)"


def _render_within(events: list[Event], budget: int) -> str:
    blocks = [_event_block(e, e["text"]) for e in events]
    costs = [estimate_tokens(b) + 1 for b in blocks]
    used = sum(costs)
    keep = [True] * len(events)
    # oldest first: events are in the order they happened, the setup (round 0) always kept
    for i, e in enumerate(events):
        if used <= budget:
            break
        if int(e["round"] or 0) > 0:
            keep[i] = False
            used -= costs[i]
    out = []
    gone = [e for e, k in zip(events, keep, strict=True) if not k]
    for e, block, k in zip(events, blocks, keep, strict=True):
        shown(e["text"], e["text"] if k else None)
        if k:
            out.append(block)
    if gone:
        rounds = sorted({int(e["round"]) for e in gone})
        where = f"of round(s) {rounds[0]}" + (f"-{rounds[-1]}" if len(rounds) > 1 else "")
        note = left_out(len(gone), where) + "; your own answers of those rounds are in your notes"
        out.insert(sum(1 for e in events if int(e["round"] or 0) == 0), note)  # after the setup
    return "\n".join(out)


def render_memory(memory: list[dict[str, Any]], *, limit: int = 6) -> str:
    """The agent's private notes (diary entries), newest last, bounded in number."""
    if not memory:
        return ""
    return "\n".join(quote(m.get("text", "")) for m in memory[-limit:])


_NOTE_START = re.compile(r"\n(?=> \(round )")  # render_memory: each note opens with its label
_LABEL = re.compile(r"^\(round [^)]*\)\s*")
# a message's recipients after its text in a note ("text (to south)", `agents.answer_text`),
# which the view shows in the event's header instead
_ADDRESSED = re.compile(r" \(to [^()]*\)(?=;|$)")
_MESSAGE_END = re.compile(r" \(to [^()]*\)(?:; |$)")  # where each message of a note ends
_OPENING = 60  # characters of a note that identify it (a shortened event keeps more)


def _flat(text: str) -> str:
    """Text without quote marks at line starts and with its whitespace collapsed, so a note and
    the same words quoted (and perhaps shortened) in a view compare equal."""
    return " ".join(line.lstrip("> ").strip() for line in text.splitlines()).strip()


def unseen_notes(notes: str, context: str, *, whole: bool = False) -> str:
    """The rendered notes (`render_memory`) without those whose text the context already shows:
    a seat's plan or narrative is also an event in its view. With `whole` (the capable
    profile) a note counts as shown only when its whole text is in the context; else (the small
    profile's lean view, which shortens events) when its opening words are. A note of several
    messages ("text (to a); text (to b)") is shown when each message is: each is an event."""
    if not notes:
        return notes
    shown = " ".join(_flat(context).split())
    return "\n".join(note for note in _NOTE_START.split(notes) if not _is_shown(note, shown, whole))


def _is_shown(note: str, shown: str, whole: bool = False) -> bool:
    # whitespace folded as in `shown`: a note of paragraphs (a capable model's Markdown) flattens
    # its blank lines to double spaces, and then never matched its own event
    body = " ".join(_LABEL.sub("", _flat(note)).lstrip("> ").split())
    pieces = _MESSAGE_END.split(body) if _ADDRESSED.search(body) else [body]
    openings = [p.strip() if whole else p.strip()[:_OPENING].strip() for p in pieces]
    openings = [o for o in openings if o]
    return not openings or all(o in shown for o in openings)
