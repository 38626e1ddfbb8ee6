"""`view_for`: the only way an agent's context is built; information asymmetry lives here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
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
) -> str:
    """Events as header lines with their quoted text. With `current_round`, texts are capped:
    this round's at EVENT_CHARS, earlier rounds' at OLDER_EVENT_CHARS, the setup never."""
    if not events:
        return empty
    blocks = []
    for e in events:
        to = (
            ""
            if EVERYONE in e["audience"]
            else " to " + ", ".join(map(header_field, e["audience"]))
        )
        kind, author = header_field(e["kind"]), header_field(e["author"])
        head = f"[round {header_field(e['round'])}, {kind} from {author}{to}]"
        text = e["text"]
        if current_round is not None and int(e["round"] or 0) > 0:
            older = int(e["round"]) < current_round
            text = shorten(text, OLDER_EVENT_CHARS if older else EVENT_CHARS)
        blocks.append(f"{head}\n{quote(text)}")
    return "\n".join(blocks)


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


def unseen_notes(notes: str, context: str) -> str:
    """The rendered notes (`render_memory`) without those whose text the context already shows:
    a seat's plan or narrative is also an event in its view, often shortened there, so a note
    counts as shown when its opening words are in the context. A note of several messages
    ("text (to a); text (to b)") is shown when each message is: each is an event of its own."""
    if not notes:
        return notes
    shown = " ".join(_flat(context).split())
    return "\n".join(note for note in _NOTE_START.split(notes) if not _is_shown(note, shown))


def _is_shown(note: str, shown: str) -> bool:
    # whitespace folded as in `shown`: a note of paragraphs (a capable model's Markdown) flattens
    # its blank lines to double spaces, and then never matched its own event
    body = " ".join(_LABEL.sub("", _flat(note)).lstrip("> ").split())
    pieces = _MESSAGE_END.split(body) if _ADDRESSED.search(body) else [body]
    openings = [p.strip()[:_OPENING].strip() for p in pieces]
    openings = [o for o in openings if o]
    return not openings or all(o in shown for o in openings)
