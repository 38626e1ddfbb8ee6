"""Model profiles (wargraph.models.profiles): chosen from the model reference, overridden by the scenario
and the run, kept with the game; what the capable profile does to a call and its answer."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

import wargraph.graphs.diplomacy.schemas as _diplomacy_schemas  # noqa: F401 (registers)
from tests.unit.test_deciders import ask
from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.table import Table
from wargraph.models.chat import ModelRef, parse_model_ref
from wargraph.models.profiles import (
    CAPABLE,
    SMALL,
    SMALL_GGUF_BYTES,
    ProfileError,
    default_profile,
    parse_role_profiles,
    plain_text_kwargs,
    seat_profile,
)
from wargraph.nodes.schemas import Plan
from wargraph.runs.runner import load_run, play
from wargraph.seats.deciders import LLMDecider

ENDPOINT = "openai:frontier@http://127.0.0.1:9/v1"
MARKDOWN = (
    "## Plan\n\nThe Italo-German talks go on; Azurland stays quiet.\n\n- Hold.\n- Talk.France.Go."
)
NAMES = {"sides": ["Azuristan", "Crimsonia"], "entities": []}


class Recording(GenericFakeChatModel):
    calls: list[dict] = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append({"stop": stop, "messages": [str(m.content) for m in messages], **kwargs})
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def decide(the_ask, *replies, tmp_path, schema=Plan, **seat):
    trace = tmp_path / "t.jsonl"
    model = Recording(messages=iter(AIMessage(r) for r in replies), calls=[])
    seat = {"model": ENDPOINT, "trace_path": str(trace), "retries": 0, **seat}
    out = LLMDecider(seat, model=model).decide(the_ask, schema)
    lines = [json.loads(x) for x in trace.read_text().splitlines()] if trace.exists() else []
    return out, lines, model.calls


# --- which profile ------------------------------------------------------------------------------


def test_the_profile_follows_the_model_reference(tmp_path):
    assert default_profile("embedded") == "small"
    assert default_profile("scripted") == "small"
    assert default_profile("bot:hold") == "small"
    assert default_profile("openai:gpt-4o-mini") == "capable"
    assert default_profile(ENDPOINT) == "capable"
    small, large = tmp_path / "small.gguf", tmp_path / "large.gguf"
    small.write_bytes(b"GGUF")
    with open(large, "wb") as f:  # sparse: the size of a 7B model, no disk used
        f.truncate(SMALL_GGUF_BYTES + 1)
    assert default_profile(f"gguf:{small}") == "small"
    assert default_profile(f"gguf:{large}") == "capable"
    assert default_profile(f"gguf:{tmp_path}/missing.gguf") == "small"


def test_a_seat_names_its_profile_or_takes_its_models():
    assert seat_profile({"model": "embedded"}) is SMALL
    assert seat_profile({"model": ENDPOINT}) is CAPABLE
    assert seat_profile({"model": ENDPOINT, "profile": "small"}) is SMALL
    with pytest.raises(ProfileError, match="expected one of small, capable"):
        seat_profile({"model": "embedded", "profile": "huge"})
    assert parse_role_profiles(["control=small", "azuristan = capable"]) == {
        "control": "small",
        "azuristan": "capable",
    }
    with pytest.raises(ProfileError, match="ROLE=PROFILE"):
        parse_role_profiles(["control"])


def test_the_run_overrides_the_scenario_which_overrides_the_model():
    sc = load_scenario("azuristan_crimsonia", ["players.azuristan.model_profile=capable"])
    state = {"spec": sc.model_dump(), "round": 1}
    seat = Table(sc, GameContext(model="embedded"), state).seat
    assert seat_profile(seat("azuristan")) is CAPABLE  # the scenario's
    assert seat_profile(seat("crimsonia")) is SMALL  # the embedded model's
    ctx = GameContext(model="embedded", profile="small", role_profiles={"crimsonia": "capable"})
    table = Table(sc, ctx, state)
    assert table.profile("azuristan") is SMALL  # the run's --profile
    assert table.profile("crimsonia") is CAPABLE  # the run's --role-profile
    # a scenario that names no profile is stored as before (records and fingerprints unchanged)
    assert "model_profile" not in load_scenario("azuristan_crimsonia").model_dump_json()


def test_resume_keeps_the_runs_profiles_and_timeout(tmp_path):
    ctx = GameContext(
        model="scripted", profile="capable", role_profiles={"control": "small"}, call_timeout=120
    )
    db = tmp_path / "g.sqlite"
    play("azuristan_crimsonia", overrides=["rounds=1"], context=ctx, db=db, thread_id="p1")
    _, stored = load_run(db, "p1")
    assert (stored.profile, stored.role_profiles, stored.call_timeout) == (
        "capable",
        {"control": "small"},
        120,
    )


def test_play_refuses_an_unknown_profile_in_one_line(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "g.sqlite")
    for args, said in (
        (["--profile", "huge"], "profile 'huge': expected one of small, capable"),
        (["--role-profile", "nobody=small"], "--role-profile 'nobody': no such role"),
        (["--role-profile", "control"], "expected ROLE=PROFILE"),
        (["--call-timeout", "0"], "--call-timeout 0: expected seconds above 0"),
    ):
        out = runner.invoke(
            app, ["play", "azuristan_crimsonia", "--model", "scripted", "--db", db, *args]
        )
        assert out.exit_code == 2 and said in " ".join(out.output.split()), out.output
        assert "Traceback" not in out.output
    assert not (tmp_path / "g.sqlite").exists()


# --- what a call gets ---------------------------------------------------------------------------


def test_capable_prose_has_no_stop_sequence_small_prose_keeps_its_own():
    ref = parse_model_ref(ENDPOINT)
    assert plain_text_kwargs(ref, 200, CAPABLE) == {}
    assert plain_text_kwargs(ref, 200) == {"stop": ["\n\n", "\n[", "\n>"]}  # small: as before
    local = plain_text_kwargs(ModelRef("embedded"), 500, CAPABLE)
    assert local == {"max_tokens": 500}  # a large GGUF: no stop, no cap, the model's penalty
    assert plain_text_kwargs(ModelRef("embedded"), 500)["max_tokens"] == 120


def test_a_capable_seat_waits_300_seconds_and_uses_more_tokens():
    decider = LLMDecider({"model": ENDPOINT})
    model = decider._model()
    assert model.request_timeout == 300.0 and model.max_tokens >= CAPABLE.min_tokens
    small = LLMDecider({"model": ENDPOINT, "profile": "small", "timeout": 45.0})._model()
    assert small.request_timeout == 45.0


def test_capable_prose_is_recorded_as_written_and_states_its_limit(tmp_path):
    out, trace, calls = decide(ask(names=NAMES), MARKDOWN, tmp_path=tmp_path)
    assert out == {"value": {"plan": MARKDOWN}, "source": "model"}
    assert calls[0]["stop"] is None and "answer_start" not in calls[0]
    assert "Write at most 1200 characters." in calls[0]["messages"][-1]
    assert [e["event"] for e in trace] == ["call"]
    # the small profile still repairs the same answer (names, Markdown cut by its stop upstream)
    small, trace, calls = decide(ask(names=NAMES), MARKDOWN, tmp_path=tmp_path, profile="small")
    assert "Azuristan stays quiet" in small["value"]["plan"] and calls[0]["stop"]
    assert "at most" not in calls[0]["messages"][-1]


def test_over_the_limit_is_asked_again_with_the_limit_then_cut_at_a_sentence_end(tmp_path):
    long = " ".join(["We hold the line."] * 80)  # 1,439 characters, the limit is 1,200
    out, trace, calls = decide(ask(), long, long, tmp_path=tmp_path)
    rejected = next(e for e in trace if e["event"] == "rejected")
    assert "1439 characters, over its limit of 1200" in rejected["reason"]
    assert "1439 characters, over its limit of 1200" in calls[1]["messages"][-1]
    plan = out["value"]["plan"]
    assert len(plan) <= 1200 and plan.endswith("We hold the line.") and long.startswith(plan)
    cut = next(e for e in trace if e["event"] == "cut")
    assert cut["cuts"] == [
        {"field": "plan", "chars": 1439, "limit": 1200, "kept": len(plan), "why": "limit"}
    ]
    assert "cut to the limit" in out["note"]
    # a re-asked answer within the limit is kept whole, with no cut
    out, trace, _ = decide(ask(), long, "We hold.", tmp_path=tmp_path / "x")
    assert out["value"] == {"plan": "We hold."} and "cut" not in [e["event"] for e in trace]


def test_an_over_long_message_is_cut_at_a_word_end_and_traced(tmp_path):
    the_ask = ask(
        "diplomacy_messages",
        schema_args={"recipients": ["GLOBAL", "ITALY"], "limit": 2, "chars": 1000},
        fallback={"action": "stay_silent", "messages": []},
    )
    from wargraph.seats.schemas import schema_for

    text = "Italo-German " + "friendship " * 100  # no sentence end: cut at a word end
    raw = json.dumps({"action": "send", "messages": [{"to": "ITALY", "text": text}]})
    out, trace, calls = decide(the_ask, raw, raw, tmp_path=tmp_path, schema=schema_for(the_ask))
    assert "messages[].text: at most 1000 characters" in calls[0]["messages"][-1]
    kept = out["value"]["messages"][0]["text"]
    assert len(kept) <= 1000 and kept.endswith("friendship") and text.startswith(kept)
    assert next(e for e in trace if e["event"] == "cut")["cuts"][0]["field"] == "messages[0].text"


def test_a_context_without_profile_fields_still_loads():
    old = {k: v for k, v in dataclasses.asdict(GameContext()).items() if "profile" not in k}
    assert GameContext(**old).profile is None


def test_capable_prose_keeps_fences_and_labels_and_reads_only_whole_json():
    from wargraph.seats.plaintext import as_written

    markdown = "Plan: hold.\n\n```\nA | B\n```\n\n{not json} and [a list]"
    assert as_written(f"\n {markdown} \n", "plan") == markdown
    assert as_written('{"plan": "We hold."}', "plan") == "We hold."
    assert as_written('```json\n{"plan": "We hold."}\n```', "plan") == "We hold."
    assert as_written('{"a": 1, "b": 2}', "plan") == '{"a": 1, "b": 2}'
    with pytest.raises(ValueError, match="held no text"):
        as_written(" 12 ... ", "plan")


def test_the_small_profile_cuts_to_the_limit_and_says_so(tmp_path):
    """The small profile still fits an over-long answer to its field at once (no re-ask: a
    135M model rarely does better asked again), but never silently: a `cut` trace line, which
    the record, the transcript and the page show ("cut to its limit")."""
    from wargraph.runs.records import mark_cut_answers, transcript

    long = " ".join(["We hold the line."] * 80)  # 1,439 characters, the limit is 1,200
    out, trace, calls = decide(ask(), long, tmp_path=tmp_path, profile="small")
    assert len(calls) == 1 and len(out["value"]["plan"]) == 1200
    (cut,) = [e for e in trace if e["event"] == "cut"]
    assert cut["cuts"] == [
        {"field": "plan", "chars": 1439, "limit": 1200, "kept": 1200, "why": "fit"}
    ]
    event = {"round": cut["round"], "author": cut["role"], "kind": "plan", "audience": ["*"],
             "text": out["value"]["plan"], "phase": "order"}  # fmt: skip
    record = {"scenario": {"title": "t"}, "events": mark_cut_answers([event], trace)}
    assert "cut to its limit: 1439 characters written, 1200 kept, limit 1200" in transcript(record)
    # an answer within its limit: nothing said
    out, trace, _ = decide(ask(), "We hold.", tmp_path=tmp_path / "x", profile="small")
    assert out["value"] == {"plan": "We hold."} and "cut" not in [e["event"] for e in trace]
