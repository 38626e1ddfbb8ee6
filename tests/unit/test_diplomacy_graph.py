"""The Diplomacy game graph on the real engine, with the scripted decider (random legal orders,
deterministic per seed) and, where a person is needed, human answers through interrupts."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

import wargraph.graphs.diplomacy.geography as G
import wargraph.graphs.diplomacy.graph as D
import wargraph.graphs.diplomacy.rules as W
import wargraph.graphs.diplomacy.schemas as S
from wargraph.evals.diplomacy import eval_diplomacy
from wargraph.graphs.diplomacy.budget import CONTEXT_BUDGETS
from wargraph.graphs.diplomacy.measures import game_score, relationship_series
from wargraph.graphs.diplomacy.world import DIPLOMACY
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import ScenarioError, load_scenario
from wargraph.kernel.table import Table
from wargraph.runs.records import RecordError, write_record
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace
from wargraph.seats.schemas import flat_json_schema, grammar_schema

CANARY = "CANARY-55e1-FRANCE-TO-ENGLAND-ONLY"


def scenario(*overrides: str):
    return load_scenario("diplomacy", list(overrides))


def run(tmp_path, *overrides: str, seed: int = 1, db: bool = False, name: str = "out"):
    """Play with the scripted decider; the records land in tmp_path/<name>."""
    return play(
        "diplomacy",
        overrides=list(overrides),
        context=GameContext(model="scripted", seed=seed),
        db=tmp_path / f"{name}.sqlite" if db else None,
        out_dir=tmp_path / name,
    )


def prompts(path, role: str, task: str) -> list[str]:
    return [
        c["messages"][-1]["content"]
        for c in read_trace(path)
        if c["role"] == role and c["task"] == task
    ]


def engine_phase_of_round(events: list[dict]) -> dict[int, str]:
    return {
        e["round"]: e["data"]["phase"]
        for e in events
        if e["kind"] == "narration" and "records" in e.get("data", {})
    }


# --- the scenario --------------------------------------------------------------------------------


def test_scenario_seats_the_seven_powers_and_takes_cli_overrides():
    sc = scenario("diplomacy.max_year=1903", "diplomacy.negotiation_rounds=1")
    assert list(sc.players) == list(W.POWERS)
    assert sc.diplomacy.max_year == 1903 and sc.diplomacy.negotiation_rounds == 1
    assert sc.control.name == "secretary"
    assert all(sc.players[p].persona and sc.players[p].goals for p in W.POWERS)
    lower = sc.model_dump()
    lower["players"] = {k.lower(): v for k, v in lower["players"].items()}
    assert list(load_scenario(lower).players) == list(W.POWERS)  # names are the engine's


@pytest.mark.parametrize(
    "override, message",
    [
        ("players.NARNIA={persona: x}", "unknown ['NARNIA']"),
        ("diplomacy.press=loud", "diplomacy.press"),
        ("diplomacy.max_year=1899", "diplomacy.max_year"),
        ("diplomacy.instructions.ATLANTIS=hi", "unknown power(s) ['ATLANTIS']"),
        ("diplomacy.negotiation_rounds=-1", "diplomacy.negotiation_rounds"),
    ],
)
def test_bad_scenarios_get_clear_errors(override, message):
    with pytest.raises(ScenarioError) as err:
        scenario(override)
    assert message in str(err.value)


def test_missing_power_is_named():
    data = scenario().model_dump()
    del data["players"]["ITALY"]
    with pytest.raises(ScenarioError, match=r"missing \['ITALY'\]"):
        load_scenario(data)


# --- the answer schemas -------------------------------------------------------------------------


def _random_until(kind: str, predicate=lambda saved, power, legal: True):
    """(saved, power) at the first phase of `kind` where a power's legal orders satisfy the
    predicate, in seeded random legal play (the engine decides what happens)."""
    for seed in range(8):
        rng = random.Random(seed)
        saved = W.new_game(game_id=f"g{seed}")
        while W.phase_info(saved).year <= 1906:
            info = W.phase_info(saved)
            game = W.load(W.current(saved))
            if info.type == kind:
                for power in info.powers_alive:
                    legal = W.legal_orders(game, power)
                    if legal and predicate(saved, power, legal):
                        return saved, power
            orders = {}
            for power in info.powers_alive:
                legal = W.legal_orders(game, power)
                answer = {k: rng.choice(v) for k, v in legal.items()}
                orders[power] = W.finalize_orders(game, power, answer, legal=legal)
            saved, _ = W.adjudicate(saved, orders)
    pytest.fail(f"no {kind} phase found")


def _phase_cases():
    opening = W.new_game(game_id="schema")
    return {
        "movement": (opening, "RUSSIA"),
        "retreat": _random_until("R"),
        "builds": _random_until("A", lambda s, p, legal: next(iter(legal)).startswith("build")),
        "disbands": _random_until("A", lambda s, p, legal: next(iter(legal)).startswith("disband")),
    }


@pytest.fixture(scope="module")
def phase_cases():
    return _phase_cases()


@pytest.mark.parametrize("kind", ["movement", "retreat", "builds", "disbands"])
def test_order_schema_is_the_legal_enum_for_every_phase_type(phase_cases, kind):
    saved, power = phase_cases[kind]
    legal = W.legal_orders(saved, power)
    model = S.orders_schema({"legal": legal})
    schema = flat_json_schema(model)
    expected = W.orders_json_schema(legal)
    expected.pop("title")
    assert schema == expected  # flat: one enum per unit or slot, nothing nested
    assert grammar_schema(schema) == schema
    answer = {k: opts[-1] for k, opts in legal.items()}
    assert model.model_validate(answer).model_dump() == answer
    key = next(iter(legal))
    with pytest.raises(ValidationError):
        model.model_validate({**answer, key: f"{key} - NOWHERE"})
    with pytest.raises(ValidationError):
        model.model_validate({k: v for k, v in answer.items() if k != key})
    # Every answer the schema allows passes the secretary whole.
    accepted, refused = W.check_answer(saved, power, answer, legal=legal)
    assert not refused and set(accepted) == set(legal)


def test_text_schemas_bound_lengths_in_the_grammar():
    diary = flat_json_schema(S.diary_schema({"others": ["ENGLAND", "ITALY"], "chars": 100}))
    assert diary["required"] == ["summary", "intent", "goals", "ENGLAND", "ITALY"]
    assert diary["properties"]["ITALY"]["enum"] == list(S.RELATIONS)
    assert diary["properties"]["summary"]["pattern"].endswith("{1,100}$")
    kept = grammar_schema(diary)["properties"]["summary"]
    assert "maxLength" not in kept and kept["pattern"]  # the grammar keeps the bound
    messages = flat_json_schema(
        S.messages_schema({"recipients": ["GLOBAL"], "limit": 1, "chars": 50})
    )
    item = messages["properties"]["messages"]["items"]
    assert item["properties"]["to"] == {"const": "GLOBAL", "type": "string"} or item["properties"][
        "to"
    ]["enum"] == ["GLOBAL"]
    assert messages["properties"]["messages"]["maxItems"] == 1
    cfg = scenario("diplomacy.diary_chars=200").diplomacy
    digest = flat_json_schema(S.digest_schema({"chars": S.digest_chars(cfg)}))
    assert digest["properties"]["digest"]["pattern"].endswith("{1,300}$")  # bounded, not empty
    long = flat_json_schema(S.digest_schema({"chars": 1000}))
    assert "pattern" not in long["properties"]["digest"]  # too long for llama.cpp: cut on parse


# --- press rules --------------------------------------------------------------------------------


def _press_table(press: str) -> Table:
    sc = load_scenario(
        "diplomacy",
        [f"diplomacy.press={press}", "diplomacy.message_chars=40", "diplomacy.max_messages=2"],
    )
    state = {"round": 1, "phase": "negotiate", "events": [], "world": {"diplomacy": W.new_game()}}
    return Table(sc, GameContext(), state, DIPLOMACY)


def test_press_accepts_by_wargraphs_press_rules():
    msgs = [
        {"to": "england", "text": "Channel stays empty?"},
        {"to": "FRANCE", "text": "note to self"},
        {"to": "GLOBAL", "text": "x" * 41},
        {"to": "NARNIA", "text": "hello"},
        {"to": "GLOBAL", "text": "Peace in our time."},
        {"to": "GERMANY", "text": "one too many"},
    ]
    press = DIPLOMACY.press
    ok, refused = press.accept(_press_table("full"), "FRANCE", msgs)
    assert ok == [("ENGLAND", "Channel stays empty?"), ("GLOBAL", "Peace in our time.")]
    reasons = {text: why for _, text, why in refused}
    assert "itself" in reasons["note to self"]
    assert "too long" in reasons["x" * 41]
    assert "not a power" in reasons["hello"]
    assert "at most 2" in reasons["one too many"]
    ok, refused = press.accept(_press_table("public"), "FRANCE", msgs[:1])
    assert not ok and "public press only" in refused[0][2]
    ok, refused = press.accept(_press_table("none"), "FRANCE", msgs[4:5])
    assert not ok and "no press" in refused[0][2]
    # eliminated powers receive nothing
    why = W.check_message("FRANCE", "ENGLAND", "hi", press="full", max_len=40, powers=["FRANCE"])
    assert why


def test_silence_is_an_explicit_choice_named_for_what_it_does():
    # "pass" read as "pass the message on": SmolLM2 chose it after writing a message, 7 of 14
    messages = flat_json_schema(S.messages_schema({"recipients": ["GLOBAL"], "chars": 50}))
    assert messages["properties"]["action"]["enum"] == ["send", "stay_silent"]
    # the choice first (made after the messages, it went against them), then the messages
    assert list(messages["properties"]) == messages["required"] == ["action", "messages"]
    assert messages["properties"]["messages"]["minItems"] == 1  # sending is the normal answer
    press = DIPLOMACY.press
    written = [{"to": "GLOBAL", "text": "Peace."}]
    assert press.said({"messages": written, "action": "send"}) == written
    assert press.said({"messages": written}) == written  # a person may leave the choice out
    assert press.said({"messages": written, "action": "stay_silent"}) == []
    assert press.said({"messages": written, "action": "pass"}) == []  # as saved games wrote it
    question = DIPLOMACY.press.question(_press_table("full"), "FRANCE", 1, ["GLOBAL", "ITALY"])
    assert "stay_silent" in question.question and "pass" not in question.question
    assert question.fallback == {"action": "stay_silent", "messages": []}


def test_public_press_and_limits_in_the_graph(tmp_path):
    result = run(
        tmp_path,
        "diplomacy.max_year=1901",
        "diplomacy.press=public",
        "diplomacy.max_messages=1",
        "diplomacy.message_chars=30",
        "diplomacy.negotiation_rounds=2",
        "rounds=1",
    )
    messages = [e for e in result.values["events"] if e["kind"] == "message"]
    assert messages and all(e["audience"] == ["*"] for e in messages)
    assert all(len(e["text"]) <= 30 for e in messages)
    per_round: dict[tuple, int] = {}
    for e in messages:
        key = (e["author"], e["data"]["negotiation_round"])
        per_round[key] = per_round.get(key, 0) + 1
    assert max(per_round.values()) == 1
    assert {e["data"]["negotiation_round"] for e in messages} <= {1, 2}
    calls = [c for c in read_trace(tmp_path / "out" / "trace.jsonl") if c["task"] == "message"]
    assert len(calls) == 14  # seven powers, two rounds
    assert "privately" not in calls[0]["messages"][-1]["content"]
    # the engine's saved game keeps the press (record.json holds it)
    saved_msgs = result.values["world"]["diplomacy"]["phases"][0]["messages"]
    assert [m["message"] for m in saved_msgs] == [e["text"] for e in messages]
    assert {m["recipient"] for m in saved_msgs} == {"GLOBAL"}


def test_no_press_sends_nothing_and_asks_nobody(tmp_path):
    result = run(tmp_path, "diplomacy.press=none", "rounds=1")
    assert not [e for e in result.values["events"] if e["kind"] == "message"]
    tasks = {c["task"] for c in read_trace(tmp_path / "out" / "trace.jsonl")}
    assert tasks == {"orders"}  # nothing was said: each diary entry is written by code
    diaries = [e for e in result.values["events"] if e["kind"] == "diary"]
    assert len(diaries) == 7 and {e["data"]["source"] for e in diaries} == {"code"}


def _answer_humans(graph, config, ctx, answer) -> list[dict]:
    """Drive a game whose human seats are answered by `answer(payload)`; returns the payloads."""
    seen = []
    payload: Any = None
    while True:
        graph.invoke(payload, config, context=ctx)
        waiting = graph.get_state(config).interrupts
        if not waiting:
            return seen
        seen += [w.value for w in waiting]
        payload = Command(resume={w.id: answer(w.value) for w in waiting})


def _human_game(*overrides: str, human: str = "FRANCE"):
    sc = scenario("rounds=1", *overrides)
    g = D.build(sc).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "h"}, "recursion_limit": 500}
    ctx = GameContext(model="scripted", seed=3, humans=[human])
    g.invoke({"scenario": sc.model_dump()}, config, context=ctx)
    return g, config, ctx


def _diary_answer() -> dict:
    return {
        "summary": "Talked to England.",
        "intent": "Hold.",
        "goals": "Spain.",
        **{p: "Friendly" for p in W.POWERS if p != "FRANCE"},
    }


def test_private_messages_reach_only_their_two_powers(tmp_path, monkeypatch):
    # who reads the message, not how much of it fits: the section's budget cuts long talks
    monkeypatch.setitem(CONTEXT_BUDGETS, "Your private talks this phase", 2000)
    trace = tmp_path / "trace.jsonl"
    sc = scenario("rounds=1", "diplomacy.negotiation_rounds=2")
    g = D.build(sc).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "p"}, "recursion_limit": 500}
    ctx = GameContext(model="scripted", seed=3, humans=["FRANCE"], trace_path=str(trace))

    def answer(payload):
        if payload["task"] == "message":
            return {"messages": [{"to": "ENGLAND", "text": f"Secret: {CANARY}"}]}
        if payload["task"] == "diary":
            return _diary_answer()
        legal = W.legal_orders(W.new_game(), "FRANCE")
        return {k: v[0] for k, v in legal.items()}

    g.invoke({"scenario": sc.model_dump()}, config, context=ctx)
    _answer_humans(g, config, ctx, answer)
    events = g.get_state(config).values["events"]
    sent = [e for e in events if e["kind"] == "message" and e["author"] == "FRANCE"]
    assert sent and all(e["audience"] == ["FRANCE", "ENGLAND"] for e in sent)
    seen_by = {c["role"] for c in read_trace(trace) if CANARY in json.dumps(c["messages"])}
    # England reads it in round 2 and in its diary and order prompts; the third powers never.
    assert seen_by == {"FRANCE", "ENGLAND"}


# --- the secretary round trip (a person types an illegal order; the schema would stop a model) ---


def test_secretary_sends_an_illegal_order_back_then_accepts_the_correction():
    g, config, ctx = _human_game("diplomacy.press=none")
    payloads: list[dict] = []

    def answer(payload):
        payloads.append(payload)
        if payload["task"] == "diary":
            return _diary_answer()
        if payload["task"] == "orders":
            return {"F BRE": "F BRE - MAO", "A MAR": "a mar-spa", "A PAR": "A PAR - MUN"}
        assert payload["task"] == "revise"
        return {"A PAR": "A PAR - BUR"}

    _answer_humans(g, config, ctx, answer)
    revise = [p for p in payloads if p["task"] == "revise"]
    assert len(revise) == 1
    assert list(revise[0]["schema"]["properties"]) == ["A PAR"]  # only the refused unit
    assert "A PAR - MUN" in revise[0]["question"] and "illegal order" in revise[0]["question"]
    assert "A PAR - BUR" in revise[0]["question"]  # the reason lists the legal orders
    values = g.get_state(config).values
    verdict = next(e for e in values["events"] if e["kind"] == "verdict")
    assert verdict["audience"] == ["FRANCE"] and verdict["data"]["status"] == "accepted"
    assert verdict["data"]["revisions"] == 1
    result = next(e for e in values["events"] if "records" in e.get("data", {}))
    assert sorted(result["data"]["orders"]["FRANCE"]) == [
        "A MAR - SPA",
        "A PAR - BUR",
        "F BRE - MAO",
    ]
    assert not any(r["invalid"] for r in result["data"]["records"])
    assert {"A BUR", "A SPA", "F MAO"} <= set(
        W.phase_info(values["world"]["diplomacy"]).units["FRANCE"]
    )


def test_after_the_retries_the_unit_holds_and_the_record_says_why():
    g, config, ctx = _human_game("diplomacy.press=none", "diplomacy.order_retries=2")
    tasks = []

    def answer(payload):
        tasks.append(payload["task"])
        if payload["task"] == "diary":
            return _diary_answer()
        if payload["task"] == "orders":
            return {"F BRE": "F BRE - MAO", "A MAR": "A MAR - SPA", "A PAR": "A PAR - MUN"}
        return {"A PAR": "A PAR - MUN"}  # the same illegal order again

    _answer_humans(g, config, ctx, answer)
    assert tasks.count("revise") == 2
    values = g.get_state(config).values
    verdict = next(e for e in values["events"] if e["kind"] == "verdict")
    assert verdict["data"]["status"] == "held" and verdict["data"]["revisions"] == 2
    assert "A PAR" in verdict["text"] and "hold" in verdict["text"]
    result = next(e for e in values["events"] if "records" in e.get("data", {}))
    assert "A PAR H" in result["data"]["orders"]["FRANCE"]
    invalid = [r for r in result["data"]["records"] if r["invalid"]]
    assert [(r["power"], r["order"]) for r in invalid] == [("FRANCE", "A PAR - MUN")]
    assert "CONVOYING UNIT MUST REACH COAST" in invalid[0]["reason"]
    assert not any(result["data"]["engine_errors"].values())
    assert "A PAR" in W.phase_info(values["world"]["diplomacy"]).units["FRANCE"]


# --- the order prompt, the diary and relationships ------------------------------------------------


@pytest.fixture(scope="module")
def game_1902(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("g1902")
    result = run(tmp, "diplomacy.max_year=1902", "diplomacy.negotiation_rounds=1", seed=5)
    return tmp, result


def test_order_prompt_shows_the_powers_view_and_unit_blocks(game_1902):
    tmp, result = game_1902
    prompt = prompts(tmp / "out" / "trace.jsonl", "FRANCE", "orders")[0]  # S1901M
    sc = scenario()
    opening = W.new_game()
    for part in (
        "# The board",
        "# You are FRANCE",
        "Your home centres: BRE, MAR, PAR",
        *(goal.rstrip(".") for goal in sc.players["FRANCE"].goals),
        "# Your diary (private)",
        "Relationships: AUSTRIA ",
        "# Your units",
    ):
        assert part in prompt, part
    for block in W.unit_blocks(opening, "FRANCE", n_foreign=2, n_centres=2):
        # every legal order, in compact form (the nearest units and centres as room allows)
        assert f"{block['unit']} ({block['name']})" in prompt
        assert G.compact_orders(block["unit"], block["legal_orders"]) in prompt
    # hand checks on the opening position
    assert "A PAR (Paris). Next to: BRE centre FRANCE with F BRE FRANCE" in prompt
    assert "S A MUN: BUR" in prompt and "A PAR S A MUN - BUR" not in prompt  # compact
    assert "give one order for each of your 3 units (F BRE, A MAR, A PAR)" in prompt
    # the game and the board come first and are the same for every power (KV cache reuse);
    # public messages read the same for every power, even for the power that spoke itself
    spoke = next(
        e for e in result.values["events"] if e["kind"] == "message" and e["audience"] == ["*"]
    )
    who = spoke["author"]
    calls = [
        c
        for c in read_trace(tmp / "out" / "trace.jsonl")
        if c["task"] == "orders" and c["round"] == spoke["round"]
    ]
    texts = {c["role"]: c["messages"][-1]["content"] for c in calls}
    head = texts[who].split("# Last phase")[0].split(f"# You are {who}")[0]
    assert head.startswith("# The game") and "# The board" in head
    assert all(t.startswith(head) for t in texts.values())

    def public(text: str) -> str:
        return text.split("# Public messages this phase\n")[1].split("\n\n")[0]

    assert f"{who} to everyone:" in public(texts[who])
    assert all(public(t) == public(texts[who]) for t in texts.values())
    # nothing of another power's own: its brief, goals or diary
    assert sc.players["TURKEY"].goals[0] not in prompt


def test_diary_entries_relationships_and_yearly_digest(game_1902):
    tmp, result = game_1902
    events = result.values["events"]
    diaries = [e for e in events if e["kind"] == "diary"]
    assert len(diaries) == 7 * 4  # four movement phases to 1902
    for e in diaries:
        assert e["audience"] == [e["author"]]
        rel = e["data"]["relationships"]
        assert set(rel) == set(W.POWERS) - {e["author"]}
        assert set(rel.values()) <= set(S.RELATIONS)
    digests = [e for e in events if e["kind"] == "diary_digest"]
    assert len(digests) == 7 and {d["data"]["through_year"] for d in digests} == {1901}
    assert all(d["data"]["phases"] == ["S1901M", "F1901M"] for d in digests)
    trace = tmp / "out" / "trace.jsonl"
    # The 1902 order prompts read the digest, not the 1901 entries it replaces (bounded).
    france_1901 = [e for e in diaries if e["author"] == "FRANCE" and e["data"]["year"] == 1901]
    digest = next(d for d in digests if d["author"] == "FRANCE")
    late = prompts(trace, "FRANCE", "orders")[-1]
    assert digest["text"] in late
    assert all(e["data"]["summary"] not in late for e in france_1901)
    # ... and the latest relationships
    last = [e for e in diaries if e["author"] == "FRANCE"][-1]["data"]["relationships"]
    assert "Relationships: " + ", ".join(f"{p} {r}" for p, r in last.items()) in late
    # Diaries stay private: no other power's prompt holds France's entry.
    for c in read_trace(trace):
        if c["role"] != "FRANCE":
            assert france_1901[0]["data"]["summary"] not in json.dumps(c["messages"])
    # The measures read them: outgoing relationship means per phase.
    series = relationship_series(
        [
            {
                "phase": e["data"]["phase"],
                "power": e["author"],
                "relationships": e["data"]["relationships"],
            }
            for e in diaries
        ]
    )
    assert series["phases"] == ["S1901M", "F1901M", "S1902M", "F1902M"]
    values = [S.RELATIONS.index(r) - 2 for r in last.values()]
    assert series["outgoing"]["FRANCE"]["F1902M"] == pytest.approx(sum(values) / 6)


def test_retreats_and_adjustments_skip_talks_and_diaries(game_1902):
    _, result = game_1902
    events = result.values["events"]
    phase_of = engine_phase_of_round(events)
    assert any(p.endswith("A") for p in phase_of.values())
    for e in events:
        if e["kind"] in ("message", "diary", "diary_digest"):
            assert phase_of[e["round"]].endswith("M")


def test_scores_measures_maps_and_eval(game_1902, tmp_path):
    tmp, result = game_1902
    saved = result.values["world"]["diplomacy"]
    score = next(e for e in result.values["events"] if e["phase"] == "analyze")
    assert score["data"]["scores"] == game_score(saved, 1902)
    centres = W.phase_info(saved).centers
    for p in W.POWERS:  # nobody is eliminated by 1902 here: 2 + centres
        assert score["data"]["scores"][p] == 2 + len(centres[p])
    out = tmp / "out"
    final = W.phase_info(saved).name
    # the game's folder holds the final position's map only: nothing is drawn during play
    assert sorted(p.stem for p in (out / "maps").glob("*.svg")) == [final]
    assert "<svg" in (out / "maps" / f"{final}.svg").read_text()
    measures = json.loads((out / "measures.json").read_text())
    assert measures["scores"] == score["data"]["scores"]
    assert measures["engine_errors"] == 0 and measures["orders"]["invalid"] == 0
    # the relationship chart is drawn on request (below), not at the end of every game
    assert not (out / "relationships.png").exists()
    summary = eval_diplomacy([out], tmp_path / "eval")
    assert summary["games"][0]["scores"] == measures["scores"]
    md = (tmp_path / "eval" / "diplomacy_eval.md").read_text()
    # a row each: scores, orders, reciprocity and aggression (AI_Diplomacy's), mean scores
    assert md.count("| FRANCE |") == 4 and "## Reciprocity and aggression per model" in md
    assert (tmp_path / "eval" / "relationships_1.png").stat().st_size > 1000
    # the export draws every phase of the record, on request
    played = list(engine_phase_of_round(result.values["events"]).values())
    exported = tmp_path / "eval" / "maps_1"
    assert sorted(p.stem for p in exported.glob("*.svg")) == sorted([*played, final])
    assert "<svg" in (exported / "S1901M.svg").read_text()
    bad = tmp_path / "bad"
    write_record({"events": [], "scenario": {}, "world": {}}, bad)
    with pytest.raises(RecordError, match="not a Diplomacy record"):
        eval_diplomacy([bad], tmp_path / "eval2")


# --- whole games ---------------------------------------------------------------------------------


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_full_game_to_1905_with_the_scripted_decider(tmp_path):
    start = time.perf_counter()
    result = run(tmp_path, "diplomacy.max_year=1905", db=True)
    elapsed = time.perf_counter() - start
    assert elapsed < 60, f"the game took {elapsed:.0f} s"
    assert result.finished and not result.values.get("error")
    saved = result.values["world"]["diplomacy"]
    assert W.phase_info(saved).name == "S1906M"
    played = list(engine_phase_of_round(result.values["events"]).values())
    assert played[0] == "S1901M" and played[-1].startswith(("F1905", "W1905"))
    assert {p[-1] for p in played} >= {"M", "A"}
    assert played == [p["name"] for p in saved["phases"][:-1]]  # one round per engine phase
    results = [e for e in result.values["events"] if "records" in e.get("data", {})]
    for e in results:
        assert not any(e["data"]["engine_errors"].values()), e["data"]["phase"]
        assert not any(r["invalid"] for r in e["data"]["records"])
    assert [p.name for p in (tmp_path / "out" / "maps").glob("*.svg")] == ["S1906M.svg"]
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    assert record["world"]["diplomacy"]["phases"][-1]["name"] == "S1906M"


@pytest.mark.parametrize("maps", ["final", "all", "none"])
def test_maps_are_drawn_after_play_never_during_it(tmp_path, monkeypatch, maps):
    import wargraph.graphs.diplomacy.render as render

    drawn: list[tuple[str, bool]] = []
    original = render.render_svg

    def counting(saved, phase=None, **kw):
        # the game is over when a map is drawn: the record already holds the final result
        drawn.append((phase, saved["phases"][-1]["name"]))
        return original(saved, phase, **kw)

    monkeypatch.setattr(render, "render_svg", counting)
    result = run(tmp_path, "diplomacy.max_year=1901", f"diplomacy.maps={maps}")
    saved = result.values["world"]["diplomacy"]
    names = [p["name"] for p in saved["phases"]]
    want = {"final": names[-1:], "all": names, "none": []}[maps]
    assert [phase for phase, _ in drawn] == want
    assert all(at == names[-1] for _, at in drawn)  # only from the finished game
    files = sorted(p.stem for p in (tmp_path / "out" / "maps").glob("*.svg"))
    assert files == sorted(want)


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_play_imports_no_evals(tmp_path):
    """Everything a game needs to play and debrief lives with the game: the measures written at
    its end too (a fresh interpreter, so no other test's imports count). The graph is played
    as the server plays it, without the runner: the runner checks the family's entry, which
    imports every module the entry names (its eval command included) to check it."""
    code = (
        "import sys; from langgraph.checkpoint.memory import InMemorySaver; "
        "from wargraph.kernel.context import GameContext; from wargraph.graphs.diplomacy.graph import build; "
        "sc = {'scenario': 'diplomacy', 'overrides': {'diplomacy.max_year': 1901, "
        "'diplomacy.diary': False, 'diplomacy.negotiation_rounds': 0}}; "
        "g = build('diplomacy').compile(checkpointer=InMemorySaver()); "
        f"ctx = GameContext(model='scripted', trace_path={str(tmp_path / 'trace.jsonl')!r}); "
        "v = g.invoke(sc, {'configurable': {'thread_id': 't'}}, context=ctx); "
        "assert v['done'], v.get('error'); "
        "print(sorted(m for m in sys.modules if m.startswith('wargraph.evals')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "measures.json").exists()  # the debrief did write the measures


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_same_seed_same_game_other_seed_differs(tmp_path):
    a = run(tmp_path, "diplomacy.max_year=1901", seed=4, name="a").values
    b = run(tmp_path, "diplomacy.max_year=1901", seed=4, name="b").values
    c = run(tmp_path, "diplomacy.max_year=1901", seed=9, name="c").values
    assert a["events"] == b["events"]
    assert a["world"] == b["world"]  # the engine's saved game too, to the last field
    assert a["events"] != c["events"]


def test_per_power_prompt_variant_and_instruction(tmp_path):
    run(
        tmp_path,
        "rounds=1",
        "diplomacy.negotiation_rounds=1",
        "players.FRANCE.prompt_variant=v2",
        "diplomacy.instructions.GERMANY=Offer Russia a deal over Sweden.",
    )
    calls = read_trace(tmp_path / "out" / "trace.jsonl")
    system = {c["role"]: c["messages"][0]["content"] for c in calls if c["task"] == "orders"}
    assert "ruthless" in system["FRANCE"] and "ruthless" not in system["ENGLAND"]
    france = next(c for c in calls if c["role"] == "FRANCE" and c["task"] == "orders")
    assert "Attack: move onto centres" in france["messages"][-1]["content"]  # v2 order question
    # The instruction is data in Germany's own prompts only, never in a system message.
    for c in calls:
        text = json.dumps(c["messages"])
        assert ("Offer Russia a deal" in text) == (c["role"] == "GERMANY")
        assert "Offer Russia a deal" not in c["messages"][0]["content"]
    german = next(c for c in calls if c["role"] == "GERMANY")["messages"][-1]["content"]
    assert "> Offer Russia a deal over Sweden." in german


def test_graph_exports_and_names_the_phases():
    nodes = set(D.graph.get_graph().nodes)
    assert {
        "negotiate",
        "summarize",
        "order",
        "secretary_validate",
        "adjudicate",
        "analyze",
    } <= nodes
    assert {f"agent_{p}" for p in W.POWERS} <= nodes
    with pytest.raises(ScenarioError, match="family"):
        D.build("azuristan_crimsonia")


def test_recipients_are_listed_in_an_order_drawn_per_seat_not_alphabetically():
    """Small models write to the first power listed: with the list alphabetical, AUSTRIA came
    first for everyone. The order is drawn per seat and phase (stable: a replay lists the same)."""
    press, powers = DIPLOMACY.press, list(W.POWERS)

    def table(press_rule: str = "full") -> Table:
        sc = load_scenario("diplomacy", [f"diplomacy.press={press_rule}"])
        world = {"diplomacy": W.new_game(game_id="recipients-test")}
        return Table(sc, GameContext(), {"round": 1, "events": [], "world": world}, DIPLOMACY)

    lists = {p: press.recipients(table(), p, powers) for p in powers}
    for p, listed in lists.items():
        assert listed[0] == "GLOBAL" and sorted(listed[1:]) == sorted(set(powers) - {p})
    firsts = [listed[1] for listed in lists.values()]
    assert len(set(firsts)) > 2, firsts  # not one power first for (nearly) every seat
    assert lists == {p: press.recipients(table(), p, powers) for p in powers}
    assert press.recipients(table("public"), "FRANCE", powers) == ["GLOBAL"]


def test_the_transcript_names_each_round_by_its_engine_phase(game_1902):
    """A Diplomacy reader thinks in S1901M, not "Round 7": the transcript's headings say both,
    as the game's page does; families that number their rounds keep the number alone."""
    from wargraph.runs.records import transcript

    tmp, result = game_1902
    text = (tmp / "out" / "transcript.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## Round")]
    assert headings[:4] == [
        "## Round 1 · S1901M",
        "## Round 2 · F1901M",
        "## Round 3 · W1901A",
        "## Round 4 · S1902M",
    ]
    crisis = {
        "scenario": {"title": "t", "family": "crisis"},
        "events": [{"round": 1, "phase": "order", "kind": "plan", "author": "a",
                    "audience": ["*"], "text": "x"}],
    }  # fmt: skip
    assert "## Round 1\n" in transcript(crisis)
