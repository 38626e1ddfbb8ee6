"""What a power sees: its context rendered within a token budget per section (the board, the
last phase as it concerns the power, its brief, this phase's talks, its diary) and the blocks of
its units with their legal orders that an order question shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wargraph.graphs.diplomacy.engine as engine
import wargraph.graphs.diplomacy.geography as G
from wargraph.graphs.diplomacy.budget import CONTEXT_BUDGETS, estimate_tokens, fit, fit_lines
from wargraph.graphs.diplomacy.phase import info_of, legal_of, position_of
from wargraph.graphs.diplomacy.scenario import diplomacy_scenario
from wargraph.kernel.state import EVERYONE, Event
from wargraph.kernel.views import counting, left_out, quote, shown

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

# Every question keeps its answer in one private note (the seat's latest answer), but no prompt
# shows the notes: the view already renders the diary, its digest, this phase's talks and the
# last results, so the notes would only repeat them.
NOTE_SLOT = "latest"
MESSAGE_MIN_TOKENS = 24  # a message cut shorter than this says nothing


def render_talk(events: list[Event], me: str | None, budget: int | None = None) -> str:
    """Messages as `FROM to TO:` followed by the quoted text (other powers' words are data).

    With a `budget` (tokens), each message is cut to an equal share of it (at least
    `MESSAGE_MIN_TOKENS`) and, when even that is too much, the newest messages are kept."""
    share = None
    if budget is not None and events:
        share = max(budget // len(events) - 8, MESSAGE_MIN_TOKENS)
    lines: list[str] = []
    shown_texts: list[str] = []
    for e in events:
        to = "everyone" if EVERYONE in e["audience"] else e.get("data", {}).get("to", "?")
        who = "you" if e["author"] == me else e["author"]
        text = e["text"] if share is None else fit(e["text"], share)
        lines.append(f"{who} to {'you' if to == me else to}:\n{quote(text)}")
        shown_texts.append(text)
    if budget is None:
        for e, text in zip(events, shown_texts, strict=True):
            shown(e["text"], text)
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
    for i, (e, text) in enumerate(zip(events, shown_texts, strict=True)):
        shown(e["text"], text if i >= dropped else None)
    note = [f"({dropped} earlier message(s) not shown)"] if dropped else []
    return "\n".join(note + kept)


def relationships_of(seen: list[Event], power: str) -> dict[str, str]:
    """The power's latest relationships (Neutral toward everyone before its first entry)."""
    rel = {p: "Neutral" for p in engine.POWERS if p != power}
    for e in seen:
        if e["kind"] == "diary" and e["author"] == power:
            rel.update(e.get("data", {}).get("relationships") or {})
    return rel


def diary_text(seen: list[Event], power: str, budget: int | None = None) -> str:
    """The power's diary as it reads it: the latest yearly digest, the entries since, its goals
    and relationships. Bounded: a digest replaces the entries of the years it covers; with a
    `budget` (tokens; the small profile's) the digest and the latest entry share it, the goals
    are shown whole when they fit a third of it, and earlier entries of the year are left to
    the next digest. Without one (the capable profile's) every text is whole."""
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
        for e in entries[:-1]:  # the digest at the year's end covers them
            shown(_entry_text(e), None)
        entries = entries[-1:]
    digest_room = room // 3 if entries else room
    # goals a few words long are shown whole (up to half the room): cut to a sixth of it they
    # said nothing ("FRANCE diary goals …")
    goal_room = 0
    if goals:
        need = estimate_tokens(goals)
        goal_room = room // 6 if need <= room // 6 else min(need, room // 2)
    entry_room = room - (digest_room if digests else 0) - goal_room
    lines = []
    if digests:
        text = cut(digests[-1]["text"], digest_room)
        shown(digests[-1]["text"], text)
        lines.append(f"Digest of your diary up to {through}:\n{quote(text)}")
    for e in entries:
        text = cut(_entry_text(e), max(entry_room // len(entries), 1))
        shown(_entry_text(e), text)
        lines.append(f"{e['data']['phase']}:\n{quote(text)}")
    if goals:
        text = cut(goals, goal_room)
        shown(goals, text)
        lines.append(f"Your goals now:\n{quote(text)}")
    lines.append(relations)
    return "\n".join(lines)


def _entry_text(entry: Event) -> str:
    d = entry["data"]
    text = str(d.get("summary", ""))
    if d.get("intent"):
        text += f"\nIntent: {d['intent']}"
    return text


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
    """The power's view: the public game and board first (the same for every power, so
    llama.cpp reuses its KV cache across seats), then what stays put during the phase (the last
    results as they concern the power, its brief and guidance), then what grows (the talks, the
    diary, notes). Under the small profile each section within its token budget
    (`budget.CONTEXT_BUDGETS`); under the capable one every text whole within the seat's
    context budget (`whole_context`).

    Built only from `seen` (view_for: the power's own and public events) and the public board."""
    budget = table.view_budget(power)
    if budget is not None:
        return whole_context(table, power, seen, budget)
    pos = position_of(table)
    budgets = CONTEXT_BUDGETS
    rnd = table.round
    results = [e for e in seen if e["kind"] == "narration" and e["phase"] == "adjudicate"]
    public = [e for e in seen if e["round"] == rnd and e["kind"] == "message"]
    private = [e for e in public if EVERYONE not in e["audience"]]
    public = [e for e in public if EVERYONE in e["audience"]]
    parts = [_game_header(table, seen)]
    board = pos.derived("board", G.render_board_compact)
    if estimate_tokens(board) > budgets["The board"]:  # not on the standard map: counts only
        board = pos.derived("board counts", lambda g: G.render_board_compact(g, units=False))
    parts.append("# The board\n" + quote(board))
    if results:
        near = pos.derived(("near", power), lambda g: G.near_provinces(g, power))
        text = last_phase_text(results[-1], power, near, _room("Last phase"))
        parts.append("# Last phase\n" + quote(text))
    parts += _about(table, power, seen)
    for e in _previous_talks(seen, rnd):  # counted: the lean view leaves the last phase's out
        shown(e["text"], None)
    if public:
        # named by power even for its own: the same text for every seat
        talk = render_talk(public, None, _room("Public messages this phase"))
        parts.append("# Public messages this phase\n" + talk)
    if private:
        talk = render_talk(private, power, _room("Your private talks this phase"))
        parts.append("# Your private talks this phase\n" + talk)
    parts.append("# Your diary (private)\n" + diary_text(seen, power, _room("Your diary")))
    parts += _secretary(seen, rnd)
    return "\n\n".join(parts)


def _game_header(table: Table, seen: list[Event]) -> str:
    # The header names the phase being played, from the engine: the scenario's title and setting
    # may name the opening season ("Diplomacy, Spring 1901"), which later phases contradict.
    setting = next((e for e in seen if e["kind"] == "setting"), None)
    head = f"# The game: Diplomacy, {phase_title(info_of(table))}"
    if setting:
        head += "\n" + quote(setting["text"].partition("\n")[2] or setting["text"])
    return head


def _about(table: Table, power: str, seen: list[Event]) -> list[str]:
    """The power's own section (home centres, brief) and the scenario's guidance for it."""
    info = info_of(table)
    brief = next((e for e in seen if e["kind"] == "brief" and e["audience"] == [power]), None)
    mine = f"# You are {power}\nYour home centres: {', '.join(sorted(info.homes.get(power, [])))}"
    if brief:
        mine += "\n" + quote(brief["text"])
    out = [mine]
    guidance = diplomacy_scenario(table).diplomacy.instructions.get(power, "").strip()
    if guidance:
        out.append("# Guidance for you (from the scenario)\n" + quote(guidance))
    return out


def _secretary(seen: list[Event], rnd: int) -> list[str]:
    notes = [e for e in seen if e["round"] == rnd and e["kind"] == "verdict"]
    return (
        ["# Notes from the secretary\n" + "\n".join(quote(e["text"]) for e in notes)]
        if notes
        else []
    )


def _previous_talks(seen: list[Event], rnd: int) -> list[Event]:
    """The messages of the last earlier phase that had talks (a winter's adjustments have none)."""
    earlier = [e for e in seen if e["kind"] == "message" and 0 < e["round"] < rnd]
    last = max((e["round"] for e in earlier), default=None)
    return [e for e in earlier if e["round"] == last]


def whole_context(table: Table, power: str, seen: list[Event], budget: int) -> str:
    """The capable profile's view: the board, the last results in full, the power's brief, every
    message to or from it of this phase and the previous one, its diary (digest, the entries
    since, goals) whole. Over `budget` tokens, whole messages are left out oldest first, then
    diary entries before the latest, and the view says how many and where they live."""
    rnd = table.round
    pos = position_of(table)
    results = [e for e in seen if e["kind"] == "narration" and e["phase"] == "adjudicate"]
    fixed = [
        _game_header(table, seen),
        "# The board\n" + quote(pos.derived("board", G.render_board_compact)),
    ]
    if results:
        fixed.append("# Last phase\n" + quote(results[-1]["text"]))
    fixed += _about(table, power, seen)
    before = _previous_talks(seen, rnd)
    now = [e for e in seen if e["round"] == rnd and e["kind"] == "message"]
    mine = [e for e in seen if e["author"] == power and e["kind"] in ("diary", "diary_digest")]
    digests = [e for e in mine if e["kind"] == "diary_digest"]
    through = digests[-1]["data"]["through_year"] if digests else 0
    entries = [e for e in mine if e["kind"] == "diary" and e["data"]["year"] > through]
    # what may give way, oldest first; the latest diary entry, the digest and the goals never do
    droppable = before + now + entries[:-1]
    cost = {id(e): estimate_tokens(e["text"]) + 8 for e in droppable}

    def render(kept: list[Event]) -> list[str]:
        keep = {id(e) for e in kept}
        parts = list(fixed)
        gone_talk = sum(1 for e in before + now if id(e) not in keep)
        gone_diary = sum(1 for e in entries[:-1] if id(e) not in keep)
        if gone_talk:
            parts.append(left_out(gone_talk, "of the talks") + "; your diary entries tell them")
        if before:
            phase = _phase_of(results, before[0]["round"])
            parts += _talk_sections(
                [e for e in before if id(e) in keep], power, f" ({phase})", "previous phase"
            )
        parts += _talk_sections([e for e in now if id(e) in keep], power, "", "this phase")
        gone = {id(e) for e in entries[:-1] if id(e) not in keep}
        diary = diary_text([e for e in seen if id(e) not in gone], power)
        if gone_diary:
            diary = (
                left_out(gone_diary, "of your diary") + "; your next digest keeps them\n" + diary
            )
        parts.append("# Your diary (private)\n" + diary)
        return parts + _secretary(seen, rnd)

    kept = list(droppable)
    with counting():  # a trial render: only the view as sent is counted
        # by parts: the board, results and brief are the same texts for every ask of the phase
        # (estimate_tokens caches them), so only what changed is measured again
        used = sum(estimate_tokens(part) + 2 for part in render(kept))
    while used > budget and kept:
        used -= cost[id(kept[0])]
        kept.pop(0)
    for e in droppable:
        if all(e is not k for k in kept):
            shown(e["text"] if e["kind"] == "message" else _entry_text(e), None)
    return "\n\n".join(render(kept))


def _phase_of(results: list[Event], rnd: int) -> str:
    """The engine phase of a round, from its adjudication (the round number if none)."""
    found = next((e for e in results if e["round"] == rnd), None)
    data = (found.get("data") if found else None) or {}
    return str(data.get("phase") or f"round {rnd}")


def _talk_sections(messages: list[Event], power: str, label: str, when: str) -> list[str]:
    public = [e for e in messages if EVERYONE in e["audience"]]
    private = [e for e in messages if EVERYONE not in e["audience"]]
    out = []
    if public:
        out.append(f"# Public messages {when}{label}\n" + render_talk(public, None))
    if private:
        out.append(f"# Your private talks {when}{label}\n" + render_talk(private, power))
    return out


_SEASONS = {"S": "Spring", "F": "Fall", "W": "Winter"}
_KINDS = {"M": "movement", "R": "retreats", "A": "adjustments"}


def phase_title(info: engine.PhaseInfo) -> str:
    """ "Fall 1901 movement (F1901M)": the engine's phase in words, then its code."""
    if info.is_done or not info.season:
        return f"the game is over ({info.name})"
    return f"{_SEASONS[info.season]} {info.year} {_KINDS.get(info.type, '')} ({info.name})"


UNITS_LEGEND = "Write each order in full, unit first: F ARM - ANK, F ARM S A CON - ANK, F ARM H."


def units_plan(table: Table, power: str) -> tuple[str, int]:
    """Every unit of the power with its orders, always (a seat cannot order a unit its prompt
    leaves out), and the step of detail used (0: the most). Within the section's budget the most
    detail that fits; over it, other powers' detail gives way first: the nearest foreign units,
    then the places next to each unit (with their occupants), and last the unit's support and
    convoy orders (counted, its holds and moves listed). The board, the same text for every
    power (a shared prompt prefix), is left whole. Even the least detail keeps every unit, over
    the budget if need be. The section's budget is the small profile's; a capable seat's is its
    context budget."""
    n = diplomacy_scenario(table).diplomacy.nearest
    legal = legal_of(table, power)
    # a capable seat's view budget holds the most detail (its neighbours, nearest foreign units)
    budget = table.view_budget(power) or _room("Your units")

    def plan(game: Any) -> tuple[str, int]:
        found = G.unit_blocks(game, power, n_foreign=n, n_centres=n, legal=legal)
        if not found:
            return "", 0
        room = budget - estimate_tokens(UNITS_LEGEND) - 6
        lines = [G.unit_lines(b) for b in found]
        for x in lines:
            x["unit"] = x["head"].split(". Next to:", 1)[0]
        cost = {k: sum(estimate_tokens(x[k]) + 1 for x in lines) for k in lines[0]}
        # (near, the unit's line with or without its neighbours, orders or moves only)
        ladder = [
            (True, "head", "orders"),
            (False, "head", "orders"),
            (False, "unit", "orders"),
            (False, "unit", "moves"),
        ]
        step = ladder[-1]  # the least detail, over budget if even that does not fit
        for rung in ladder:
            if cost[rung[1]] + rung[0] * cost["near"] + cost[rung[2]] <= room:
                step = rung
                break
        near, head, orders = step
        text = "\n".join(
            "\n".join(y for y in (x[head], x["near"] if near else "", x[orders]) if y)
            for x in lines
        )
        return UNITS_LEGEND + "\n" + text, ladder.index(step)

    return position_of(table).derived(("units plan", power, n, budget), plan)


def unit_blocks_text(table: Table, power: str) -> str:
    """Each unit with its legal orders (compact) and, room allowing, its nearest foreign units
    and centres (order questions): see `units_plan`. No unit is ever left out."""
    text, _ = units_plan(table, power)
    return "# Your units\n" + text if text else ""
