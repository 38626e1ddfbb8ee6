"""Views sized to the model (issue 39): a capable seat's view shows texts whole within its
context budget and leaves whole items out, oldest first, saying so; every view's cuts are
counted (wargraph.kernel.views.ViewTally) and reach the record as view coverage; an answer cut
after a re-ask says so in its event; a note is left out only when its whole text is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wargraph.evals.judge import family_measures
from wargraph.kernel.context import GameContext
from wargraph.kernel.state import make_event
from wargraph.kernel.views import counting, estimate_tokens, render_events, unseen_notes
from wargraph.models.profiles import CAPABLE, SMALL
from wargraph.runs.records import mark_cut_answers, transcript, view_coverage
from wargraph.runs.runner import play

LONG = "We hold the line in the north and talk in the south. " * 8  # 424 characters


def _event(rnd: int, text: str, author: str = "north", kind: str = "plan") -> dict:
    return make_event(round=rnd, phase="act", kind=kind, author=author, text=text)


def test_the_small_view_shortens_older_rounds_and_counts_it():
    events = [_event(0, "The setting. " * 40), _event(1, LONG), _event(2, LONG)]
    with counting() as tally:
        text = render_events(events, current_round=2)
    assert LONG.strip() not in text  # both rounds shortened (300 / 160 characters)
    assert tally.items == 3 and tally.whole[0] == 1 and tally.shortened[0] == 2
    assert tally.shortened[1] == 2 * len(LONG.strip())


def test_a_capable_view_shows_every_text_whole_within_its_budget():
    events = [_event(0, "The setting."), _event(1, LONG), _event(2, LONG + "Round two.")]
    with counting() as tally:
        text = render_events(events, current_round=2, budget=CAPABLE.context_tokens)
    assert "> " + LONG.strip() in text and "Round two." in text
    assert tally.as_dict()["whole"] == {"items": 3, "chars": tally.chars}


def test_over_the_budget_whole_items_go_oldest_first_and_the_view_says_so():
    events = [_event(0, "The setting.")] + [_event(r, f"Round {r}. {LONG}") for r in (1, 2, 3)]
    one = estimate_tokens(render_events(events[-1:], budget=10**6))
    with counting() as tally:
        text = render_events(events, budget=one * 2 + 20)
    assert "The setting." in text  # never dropped
    assert "Round 1." not in text and "Round 2." in text and "Round 3." in text
    assert "(1 earlier item(s) of round(s) 1 not shown: over this seat's context budget)" in text
    assert tally.dropped == [1, len(events[1]["text"].strip())]
    assert tally.shortened == [0, 0]  # nothing shown in part
    assert estimate_tokens(text) <= one * 2 + 20 + estimate_tokens(text.splitlines()[2]) + 1


def test_a_note_counts_as_shown_only_whole_for_a_capable_seat():
    notes = "> (round 1, plan) " + LONG.strip()
    context = "> " + LONG[:200].strip() + " …"  # the view shows its opening only
    assert unseen_notes(notes, context) == ""  # the small profile's rule: opening words
    assert unseen_notes(notes, context, whole=True) == notes
    assert unseen_notes(notes, "> " + LONG.strip(), whole=True) == ""


def test_the_budget_is_the_profiles_unless_the_seat_names_one():
    assert SMALL.view_budget({"context_tokens": 50_000}) is None  # lean views stay lean
    assert CAPABLE.view_budget({}) == 16_000
    assert CAPABLE.view_budget({"context_tokens": 50_000}) == 50_000


def _trace_line(role: str, ask: str, whole: int, cut: int, dropped: int, **more) -> dict:
    return {
        "event": "call",
        "role": role,
        "ask_id": ask,
        "profile": "capable",
        "model": "openai:x",
        "view": {
            "items": 3,
            "chars": whole + cut + dropped,
            "whole": {"items": int(whole > 0), "chars": whole},
            "shortened": {"items": int(cut > 0), "chars": cut},
            "dropped": {"items": int(dropped > 0), "chars": dropped},
        },
        **more,
    }


def test_view_coverage_counts_each_ask_once_per_seat_and_game():
    trace = [
        _trace_line("a", "r1.a", 60, 30, 10),
        _trace_line("a", "r1.a", 60, 30, 10, attempt=2),  # a re-ask shows the same view
        _trace_line("b", "r1.b", 100, 0, 0),
    ]
    cover = view_coverage(trace)
    assert cover["per_seat"]["a"]["share"] == 0.6 and cover["per_seat"]["a"]["asks"] == 1
    assert cover["share"] == 0.8 and cover["dropped"] == {"items": 1, "chars": 10}
    measures, note = family_measures({"scenario": {}, "view_coverage": cover}, Path("-"))
    assert measures["view_coverage"] == 0.8 and note == ""


def test_an_answer_cut_after_a_reask_says_so_in_its_event_and_the_transcript():
    text = "We hold. We talk."
    event = _event(1, text, author="north")
    cut = {"field": "plan", "chars": 1439, "limit": 1200, "kept": 17, "why": "limit"}
    trace = [{"event": "cut", "role": "north", "round": 1, "cuts": [cut], "output": {"plan": text}}]
    events = mark_cut_answers([event], trace)
    assert events[0]["data"]["cut"] == cut and "cut" not in event.get("data", {})
    record = {"scenario": {"title": "T"}, "events": events}
    assert "cut after a re-ask: 1439 characters written, 17 kept, limit 1200" in transcript(record)


@pytest.fixture(scope="module")
def tight_diplomacy(tmp_path_factory) -> tuple[dict, list[dict]]:
    """Diplomacy to 1901 with scripted seats under the capable profile, FRANCE's view held to
    1,000 tokens (`context_tokens`, per role)."""
    out = tmp_path_factory.mktemp("tight")
    result = play(
        "diplomacy",
        overrides=["diplomacy.max_year=1901", "players.FRANCE.context_tokens=1000"],
        context=GameContext(model="scripted", seed=7, profile="capable"),
        db=None,
        thread_id="tight",
        out_dir=out,
    )
    trace = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines() if x]
    return result.record, trace


def test_a_tight_budget_drops_whole_messages_and_says_where_they_live(tight_diplomacy):
    record, trace = tight_diplomacy
    france = [c for c in trace if c["role"] == "FRANCE" and c.get("view")]
    told = [
        c
        for c in france
        if "of the talks not shown: over this seat's context budget" in c["messages"][1]["content"]
    ]
    assert told, "no FRANCE prompt said it left messages out"
    assert all(c["view"]["shortened"]["items"] == 0 for c in france)  # never a text in part
    cover = record["view_coverage"]["per_seat"]
    assert cover["FRANCE"]["dropped"]["items"] > 0 and cover["FRANCE"]["share"] < 1.0
    assert cover["ENGLAND"]["share"] == 1.0  # the others keep the profile's 16,000 tokens
    assert record["seats"]["FRANCE"]["profile"] == "capable"


def test_the_view_page_shows_a_cut_answer_and_the_coverage():
    from wargraph.view.payload import build_payload

    event = _event(1, "We hold. We talk.")
    cut = {"field": "plan", "chars": 1439, "limit": 1200, "kept": 17, "why": "limit"}
    trace = [_trace_line("north", "r1.act.plan.north", 60, 30, 10, round=1, node="act")]
    line = {"event": "cut", "role": "north", "round": 1, "cuts": [cut]}
    events = mark_cut_answers([event], [{**line, "output": {"plan": event["text"]}}])
    record = {
        "scenario": {"title": "T"},
        "events": events,
        "view_coverage": view_coverage(trace),
        "seats": {"north": {"profile": "capable", "models": ["openai:x"]}},
    }
    page = build_payload(record, trace, replay=False)
    assert page["events"][0]["cut"].startswith("cut after a re-ask: 1439 characters written")
    north, game = page["coverage"]
    assert north["seat"] == "north" and north["profile"] == "capable" and north["share"] == 0.6
    assert game["seat"] == "the game" and game["dropped"] == [1, 10]
