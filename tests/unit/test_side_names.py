"""Side names a small model misspells in prose ("Azurland" for Azuristan) are corrected in the
recorded answer, the trace keeps the raw output and the corrections, and words that only look
like a name (ordinary words, real countries, forms of the name, other entities) stay as written.
The misspellings are the ones issue #19 saw on SmolLM2-135M."""

from __future__ import annotations

import pytest

from benchmarks import quality_metrics as Q
from tests.unit.test_deciders import ask
from tests.unit.test_plain_text import decide
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.table import Table
from wargraph.nodes.schemas import Plan, choice_schema
from wargraph.seats.names import correct_names, display_name, meant_name, scenario_names
from wargraph.worlds import Question

SIDES = ["Azuristan", "Crimsonia"]
ENTITIES = ["Crimsonian", "Crimsonians", "Zafaristan"]
NAMES = {"sides": SIDES, "entities": ENTITIES}


@pytest.mark.parametrize(
    "word",
    [
        "Azurland",
        "Azunistiran",
        "Azuranastan",
        "Azuiristan",
        "Azunaria",
        "AZURLAND",
        "Azurlandian",  # the adjective of an invented name: its stem "Azurland" is near
        "Azurlander",
        "Azurlanders",
        "Azura",  # a rare name of the language, and Azuristan cut short
        "Azuristania",  # built on the name but another name (not a demonym or a plural)
        "AZURISTANIA",
    ],
)
def test_misspellings_seen_on_the_embedded_model_are_taken_for_the_side(word):
    assert meant_name(word, SIDES, ENTITIES) == "Azuristan"


@pytest.mark.parametrize(
    "word",
    [
        "Azure",  # an ordinary word, not near enough either
        "Crimson",  # an ordinary word (and the name's stem)
        "Crimsonian",  # a form of the name
        "Azuristani",
        "Zafaristan",  # another entity of the scenario
        "Zafarastan",  # near an entity, not a side
        "Austria",  # a real country
        "Armenia",
        "Azerbaijan",
        "Azuristan",  # the name itself
        "Azur",  # too short to judge
        "Azuristanis",  # a form of the name, with an ending
    ],
)
def test_words_that_only_look_like_a_side_stay_as_written(word):
    assert meant_name(word, SIDES, ENTITIES) is None


@pytest.mark.parametrize(
    "word",
    # demonyms, plurals and real names near a power's name: forms of it or words the language
    # knows well ("Engl" and "Germa" would be the names cut short: see the next test)
    ["English", "Englishmen", "French", "Prussian", "Prussia", "Russians", "Australia", "Italic"]
    + ["Russ", "Franc", "Frances", "Turks", "Austrians", "Ottomans", "AUGUSTA"],
)
def test_real_words_near_the_powers_stay_as_written(word):
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    assert meant_name(word, powers) is None


def test_misspelt_powers_seen_on_the_embedded_model_are_corrected_in_their_case():
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    assert meant_name("RUSIASES", powers) == "Russia" and meant_name("AUTREA", powers) == "Austria"
    assert meant_name("ENGELAND", powers) == "England"  # a rare word (Dutch), very near
    text = "RUSIASES and AUTREA hold; Germnay waits."
    assert correct_names(text, powers) == (
        "RUSSIA and AUSTRIA hold; Germany waits.",
        [
            {"written": "RUSIASES", "name": "RUSSIA"},
            {"written": "AUTREA", "name": "AUSTRIA"},
            {"written": "Germnay", "name": "Germany"},
        ],
    )


def test_a_name_built_on_a_sides_stem_is_that_side():
    assert meant_name("Crimsonland", SIDES, ENTITIES) == "Crimsonia"
    for form in ("Crimsonian", "Crimsonians", "Azuristani", "Azuristanis", "Azuristanian"):
        assert meant_name(form, SIDES, ENTITIES) is None


def test_an_invented_name_in_lower_case_is_written_as_the_scenario_spells_it():
    # SmolLM2: "bring Zafaristan into crimsonia's nuclear conflict"
    assert correct_names("into crimsonia's conflict, as crimsonia said", SIDES, ENTITIES) == (
        "into Crimsonia's conflict, as Crimsonia said",
        [{"written": "crimsonia", "name": "Crimsonia"}],
    )
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    assert correct_names("roast turkey in france", powers) == ("roast turkey in france", [])


def test_a_word_near_two_names_is_left_alone():
    assert meant_name("Azurastan", ["Azuristan"], ["Azurestan"]) is None
    assert meant_name("Azurastan", ["Azuristan"], []) == "Azuristan"


def test_prose_is_corrected_and_the_corrections_listed():
    text = (
        "Azuristan will fight Azurland, and the Azunistiran army guards Zafaristan; "
        "Azurland's allies wear crimson. Azure skies over Austria. Azurlandian forces and "
        "Azura (Azuristan) at the border of Azurlander's province."
    )
    fixed, fixes = correct_names(text, SIDES, ENTITIES)
    assert fixed == (
        "Azuristan will fight Azuristan, and the Azuristan army guards Zafaristan; "
        "Azuristan's allies wear crimson. Azure skies over Austria. Azuristan forces and "
        "Azuristan (Azuristan) at the border of Azuristan's province."
    )
    assert fixes == [
        {"written": "Azurland", "name": "Azuristan"},
        {"written": "Azunistiran", "name": "Azuristan"},
        {"written": "Azurlandian", "name": "Azuristan"},
        {"written": "Azura", "name": "Azuristan"},
        {"written": "Azurlander", "name": "Azuristan"},
    ]
    assert correct_names("azurland, lower case", SIDES, ENTITIES) == ("azurland, lower case", [])
    assert correct_names(text, [], []) == (text, [])


def test_the_names_come_from_the_scenario():
    sides, entities = scenario_names(load_scenario("azuristan_crimsonia"))
    assert sides == SIDES and "Zafaristan" in entities and "Azuristan" not in entities
    powers, _ = scenario_names(load_scenario("diplomacy"))
    assert "France" in powers and "Turkey" in powers
    assert display_name("AUSTRIA") == "Austria" and display_name("red_team") == "Red Team"
    assert meant_name("Germnay", powers) == "Germany"


# --- in the prose path -----------------------------------------------------------------------


def test_the_recorded_plan_is_corrected_and_the_trace_keeps_the_raw_output(tmp_path):
    raw = "Azurland will open talks with Crimsonia."
    out, trace, _ = decide(Plan, ask(names=NAMES), raw, tmp_path=tmp_path)
    assert out["value"] == {"plan": "Azuristan will open talks with Crimsonia."}
    assert out["source"] == "model" and "Azurland -> Azuristan" in out["note"]
    call = next(e for e in trace if e["event"] == "call")
    assert call["output"] == raw  # nothing hidden: the model's own words
    corrected = next(e for e in trace if e["event"] == "corrected")
    assert corrected["corrections"] == [{"written": "Azurland", "name": "Azuristan"}]
    assert corrected["output"] == out["value"]


def test_without_names_or_without_a_near_miss_nothing_changes(tmp_path):
    raw = "Azurland will open talks."
    out, trace, _ = decide(Plan, ask(), raw, tmp_path=tmp_path)
    assert out == {"value": {"plan": raw}, "source": "model"}
    out, trace, _ = decide(Plan, ask(names=NAMES), "Azuristan waits.", tmp_path=tmp_path)
    assert out == {"value": {"plan": "Azuristan waits."}, "source": "model"}
    assert not [e for e in trace if e["event"] == "corrected"]


def test_the_free_text_of_a_json_answer_is_corrected_and_its_choices_are_not(tmp_path):
    # an option that looks like a misspelling is the option the question offered
    options = ["Azurlandia", "no"]
    schema = choice_schema({"options": options})
    the_ask = ask("choice", schema_args={"options": options}, fallback={"choice": "no"})
    raw = '{"choice": "Azurlandia", "evidence": "Azurland mobilised."}'
    out, trace, _ = decide(schema, {**the_ask, "names": NAMES}, raw, tmp_path=tmp_path)
    assert out["value"] == {"choice": "Azurlandia", "evidence": "Azuristan mobilised."}
    assert out["source"] == "model" and "Azurland -> Azuristan" in out["note"]
    assert next(e for e in trace if e["event"] == "call")["output"] == raw
    corrected = next(e for e in trace if e["event"] == "corrected")
    assert corrected["corrections"] == [{"written": "Azurland", "name": "Azuristan"}]
    assert corrected["output"] == out["value"]
    # without names (a scripted or human seat's ask) the answer stays as written
    out, _, _ = decide(schema, the_ask, raw, tmp_path=tmp_path)
    assert out["value"]["evidence"] == "Azurland mobilised."


def test_diplomacy_messages_and_diaries_are_corrected_in_every_text_field(tmp_path):
    from wargraph.seats.schemas import schema_for

    powers, _ = scenario_names(load_scenario("diplomacy"))
    names = {"sides": powers, "entities": []}
    args = {"recipients": ["GLOBAL", "RUSSIA"], "limit": 2, "chars": 300}
    the_ask = ask("diplomacy_messages", schema_args=args, fallback={"messages": []}, names=names)
    raw = (
        '{"messages": [{"to": "RUSSIA", "text": "RUSIASES, take SEV."}, '
        '{"to": "GLOBAL", "text": "Germnay and AUTREA lie."}], "action": "send"}'
    )
    out, trace, _ = decide(schema_for(the_ask), the_ask, raw, tmp_path=tmp_path)
    assert out["value"]["messages"] == [
        {"to": "RUSSIA", "text": "RUSSIA, take SEV."},
        {"to": "GLOBAL", "text": "Germany and AUSTRIA lie."},
    ]
    corrected = next(e for e in trace if e["event"] == "corrected")
    assert [f["written"] for f in corrected["corrections"]] == ["RUSIASES", "Germnay", "AUTREA"]
    args = {"others": ["RUSSIA"], "chars": 240}
    the_ask = ask("diplomacy_diary", schema_args=args, fallback={}, names=names)
    raw = '{"summary": "Talked to Rusha.", "intent": "", "goals": "Beat Tukrey.", "RUSSIA": "Ally"}'
    out, _, _ = decide(schema_for(the_ask), the_ask, raw, tmp_path=tmp_path)
    assert out["value"] == {
        "summary": "Talked to Russia.",
        "intent": "",
        "goals": "Beat Turkey.",
        "RUSSIA": "Ally",
    }


def test_the_table_gives_model_seats_the_names_and_scripted_seats_nothing():
    sc = load_scenario("azuristan_crimsonia")
    state = {"round": 1, "phase": "order", "events": []}
    q = Question(task="plan", system="s", question="q", schema="plan", fallback={"plan": "x"})
    ai = Table(sc, GameContext(model="embedded"), state).ask_question("azuristan", q)
    assert ai["names"]["sides"] == SIDES and "Zafaristan" in ai["names"]["entities"]
    scripted = Table(sc, GameContext(model="scripted"), state).ask_question("azuristan", q)
    assert "names" not in scripted  # scripted asks, checkpoints and records stay as they were


# --- in the play-quality measure ----------------------------------------------------------------


def test_the_measure_counts_the_raw_output_and_the_record_apart():
    user = "> Azuristan and Crimsonia dispute Zafaristan.\n\nMove 1 of 2. What do you do?"
    raw = "Azurland will open talks."
    trace = [
        {**_call(raw, user), "ask_id": "r1.order.plan.azuristan"},
        {
            "event": "corrected",
            "ask_id": "r1.order.plan.azuristan",
            "corrections": [{"written": "Azurland", "name": "Azuristan"}],
        },
        {**_call("Crimsonia waits.", user), "ask_id": "r1.order.plan.crimsonia"},
    ]
    record = {
        "events": [
            _event("r1.order.plan.azuristan", "Azuristan will open talks."),
            _event("r1.order.plan.crimsonia", "Crimsonia waits."),
        ]
    }
    found = Q.game_quality(trace, record, sides=SIDES, entities=ENTITIES, family="crisis")
    assert (found["misspelled"], found["answers"]) == (1, 2)
    assert (found["recorded_misspelled"], found["recorded_answers"]) == (0, 2)
    assert found["corrected_answers"] == 1
    assert found["examples"]["corrected"] == ["Azurland -> Azuristan"]
    # a record that kept the misspelling is counted as such
    record["events"][0]["text"] = raw
    found = Q.game_quality(trace, record, sides=SIDES, entities=ENTITIES, family="crisis")
    assert found["recorded_misspelled"] == 1


def _call(output: str, user: str) -> dict:
    return {
        "event": "call",
        "role": "azuristan",
        "task": "plan",
        "round": 1,
        "attempt": 1,
        "messages": [{"role": "system", "content": ""}, {"role": "human", "content": user}],
        "output": output,
    }


def _event(eid: str, text: str) -> dict:
    return {"id": eid, "round": 1, "kind": "plan", "text": text, "data": {"source": "model"}}


def test_a_recorded_event_is_read_against_the_prompt_of_the_ask_that_made_it():
    # the narration's event id names its kind, its ask's id the task; the prompt's words
    # (Zafaristan, quoted in the context) are not misspellings
    user = "> Azuristan and Crimsonia dispute Zafaristan.\n\nMove 1 of 2. What happened?"
    trace = [{**_call("Zafaristan burns.", user), "ask_id": "r1.adjudicate.adjudicate.control"}]
    record = {"events": [_event("r1.adjudicate.narration.control", "Zafaristan burns.")]}
    found = Q.game_quality(trace, record, sides=SIDES, entities=ENTITIES, family="crisis")
    assert (found["recorded_misspelled"], found["recorded_answers"]) == (0, 1)
    record["events"][0]["id"] = "r1.somewhere.narration.other"  # no ask made it: no prompt words
    found = Q.game_quality(trace, record, sides=SIDES, entities=ENTITIES, family="crisis")
    assert found["recorded_misspelled"] == 1


# --- while sampling (local models) ----------------------------------------------------------------


def test_a_local_model_is_asked_to_keep_the_names_whole_and_a_server_is_not(tmp_path):
    from tests.unit.test_plain_text import recording
    from wargraph.seats.deciders import LLMDecider

    for ref, kept in (("embedded", SIDES + ENTITIES), ("openai:fake@http://127.0.0.1:9", None)):
        model = recording("Azuristan waits.")
        seat = {"model": ref, "trace_path": str(tmp_path / "t.jsonl"), "retries": 0}
        LLMDecider(seat, model=model).decide(ask(names=NAMES), Plan)
        assert model.calls[0].get("keep_names") == kept
    model = recording("Azuristan waits.")
    LLMDecider({"model": "embedded"}, model=model).decide(ask(), Plan)  # no names: none kept
    assert "keep_names" not in model.calls[0]


def test_each_question_gets_its_own_seed_and_the_same_question_the_same_one(tmp_path):
    # with one seed for every call, SmolLM2 opened its second plan with its first plan's words
    from tests.unit.test_plain_text import recording
    from wargraph.seats.deciders import LLMDecider

    model = recording(*["Azuristan waits."] * 3)
    decider = LLMDecider({"model": "embedded", "seed": 7}, model=model)
    for ask_id in ("r1.order.plan.a", "r2.order.plan.a", "r1.order.plan.a"):
        decider.decide(ask(id=ask_id), Plan)
    seeds = [c["seed"] for c in model.calls]
    assert seeds[0] != seeds[1] and seeds[0] == seeds[2]
    other = recording("Azuristan waits.")
    LLMDecider({"model": "embedded", "seed": 8}, model=other).decide(ask(), Plan)
    assert other.calls[0]["seed"] != seeds[0]  # another game seed, other draws
