"""Bounded prompts (issue #12): earlier rounds shortened, per-event caps, the setup never cut,
private notes the view already shows left out, the tabletop's older rounds in one line, and one
system prompt for every seat so a shared KV cache keeps the prompt's beginning."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from langgraph.checkpoint.memory import InMemorySaver

from wargraph.graphs.tabletop.graph import build
from wargraph.kernel.scenario import shipped_scenarios
from wargraph.kernel.state import make_event
from wargraph.kernel.views import (
    EVENT_CHARS,
    OLDER_EVENT_CHARS,
    quote,
    render_events,
    render_memory,
    shorten,
    unseen_notes,
)
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.deciders import user_prompt

LONG = " ".join(f"Sentence number {i} says something about the border." for i in range(40))


def event(round_: int, text: str, kind: str = "plan"):
    return make_event(round=round_, phase="order", kind=kind, author="a", text=text)


def quoted_text(block: str) -> str:
    return "\n".join(line[2:] for line in block.splitlines() if line.startswith("> "))


def test_shorten_cuts_at_a_sentence_end_and_says_so():
    assert shorten("Short.", 50) == "Short."
    cut = shorten(LONG, 120)
    assert len(cut) <= 120 and cut.endswith(". …")
    assert LONG.startswith(cut[:-2])
    # one endless sentence: cut at a word, still marked
    word = shorten("word " * 100, 60)
    assert len(word) <= 60 and word.endswith(" …")


def test_the_current_round_is_capped_earlier_rounds_more_the_setup_never():
    events = [event(0, LONG, "setting"), event(2, LONG), event(3, LONG)]
    blocks = render_events(events, current_round=3).split("\n[")
    setup, older, current = (quoted_text(b) for b in blocks)
    assert setup == LONG
    assert len(older) <= OLDER_EVENT_CHARS < len(current) <= EVENT_CHARS
    # without a round (the post-game record, other callers) nothing is cut
    assert LONG in render_events(events)


def test_notes_the_view_already_shows_are_left_out():
    mine = "We open talks through the border commission. " + LONG
    notes = render_memory(
        [
            {"text": f"(round 2, plan) > {mine}"},  # the model's text may open with a quote mark
            {"text": "(round 2, diary) Crimsonia cannot be trusted."},
        ]
    )
    context = render_events([event(2, mine)], current_round=3)  # shown, and shortened
    kept = unseen_notes(notes, context)
    assert "Crimsonia cannot be trusted" in kept and "border commission" not in kept
    ask = {"context": context, "question": "What now?"}
    prompt = user_prompt(ask, notes, {"properties": {"plan": {"type": "string"}}})
    assert prompt.count("border commission") == 1
    # a note the view does not show stays
    assert unseen_notes(notes, quote("something else")) == notes


def test_a_note_of_two_messages_is_shown_when_both_are():
    """A seat that sent two messages in one answer has one note of both ("text (to a); text (to
    b)"); its view shows them as two events, so the note is not repeated, unless one is missing."""
    first = "We hold the north pass this round; keep your troops off the ridge line."
    second = "Your bid for the coast is fair; we will not contest it."
    notes = render_memory([{"text": f"(round 1, press) {first} (to east); {second} (to west)"}])
    both = render_events([event(1, first, "message"), event(1, second, "message")], current_round=2)
    assert unseen_notes(notes, both) == ""
    one = render_events([event(1, first, "message")], current_round=2)
    assert unseen_notes(notes, one) == notes


def test_a_note_of_paragraphs_is_shown_when_its_event_is():
    """A capable model's entry in Markdown (a heading, blank lines): its note and its event, the
    same text, shortened in the view, match across the blank lines."""
    entry = (
        "## Assessment\n\nThe Italo-German understanding holds for now.\n\n- Keep talking. " + LONG
    )
    notes = render_memory([{"text": f"(round 1, diary) {entry}"}])
    shown = render_events([event(1, entry, "summary")], current_round=2)
    assert unseen_notes(notes, shown) == ""
    assert unseen_notes(notes, quote("something else")) == notes


HAIWIRE = yaml.safe_load(Path(shipped_scenarios()["haiwire"]).read_text())


def test_tabletop_keeps_the_last_round_and_one_line_for_the_rounds_before(scripted, tmp_path):
    data = copy.deepcopy(HAIWIRE)
    data["tabletop"].update({"injects_by_severity": {1: 6, 2: 6, 3: 6}, "die": 100, "success": 100})
    graph = build(data).compile(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"scenario": data}, {"configurable": {"thread_id": "t"}}, context=scripted(tmp_path)
    )
    injects = [e["text"] for e in out["events"] if e["kind"] == "inject"]
    assert len(injects) == 6
    calls = [c for c in read_trace(tmp_path / "trace.jsonl") if c["task"] in ("plan", "narrate")]
    by_round: dict[int, list[int]] = {}
    for c in calls:
        user = c["messages"][1]["content"]
        r = c["round"]
        by_round.setdefault(r, []).append(len(user))
        assert "Incident:" in user  # the incident card stays in view
        if r >= 3:
            assert f"[earlier, round{'s 1-' if r > 3 else ' '}{r - 2}:" in user
            assert injects[0].split(": ", 1)[1][:40] not in user  # round 1's inject left out
    mean = {r: sum(v) / len(v) for r, v in by_round.items()}
    assert mean[6] <= 1.1 * mean[3]  # growth stops after move 2


def test_every_seat_shares_one_system_prompt_and_the_view_opens_with_the_setting(tmp_path):
    from wargraph.kernel.context import GameContext

    trace = tmp_path / "trace.jsonl"
    play(
        "azuristan_crimsonia",
        overrides={"rounds": 2, "questions": []},
        context=GameContext(model="scripted", trace_path=str(trace)),
        db=None,
    )
    calls = [c for c in read_trace(trace) if c["event"] == "scripted"]
    assert {c["role"] for c in calls} == {"azuristan", "crimsonia", "control"}
    assert len({c["messages"][0]["content"] for c in calls}) == 1
    assert all(c["messages"][1]["content"].startswith("[round 0, setting from") for c in calls)
