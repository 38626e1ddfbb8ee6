"""The play-quality metrics (benchmarks/quality_metrics.py) on hand-made traces and records:
each must flag what it measures and pass what it does not."""

from __future__ import annotations

import json

from benchmarks import quality_metrics as Q


def call(output: str, *, user: str = "", system: str = "", **fields) -> dict:
    return {
        "event": "call",
        "ask_id": fields.pop("ask_id", "a1"),
        "role": fields.pop("role", "azuristan"),
        "task": fields.pop("task", "plan"),
        "round": fields.pop("round", 1),
        "attempt": 1,
        "messages": [{"role": "system", "content": system}, {"role": "human", "content": user}],
        "output": output,
        **fields,
    }


PLAN_USER = (
    "> Azuristan and Crimsonia dispute Zafaristan.\n\n"
    "Move 1 of 2. Your side's actions in the next one year: what, who, what for. "
    "Two to four sentences.\n\nAnswer in plain text: the plan only, no JSON, no heading."
)


def test_an_answer_that_repeats_its_format_line_is_an_echo():
    c = call("The plan only, no JSON, no heading.", user=PLAN_USER)
    assert Q.is_echo(Q.answer_text(c["output"]), Q.instructions_of(c))
    c = call("Your side's actions in the next one year: what, who, what for.", user=PLAN_USER)
    assert Q.is_echo(Q.answer_text(c["output"]), Q.instructions_of(c))
    ok = call(
        "Azuristan sends envoys to the border and opens talks with Crimsonia.", user=PLAN_USER
    )
    assert not Q.is_echo(Q.answer_text(ok["output"]), Q.instructions_of(ok))


def test_an_instruction_restated_inside_a_plan_is_an_echo():
    # seen on SmolLM2: a plan, then the question's instruction as its second line
    plan = "Azuristan moves two brigades to the Zafaristan border to deter a raid."
    for second in (
        "In two to four sentences, the plan of Azuristan for the next year.",  # the length
        "Your side's actions in the next one year: what, who, what for.",  # the question
    ):
        c = call(plan + "\n" + second, user=PLAN_USER)
        assert Q.is_echo(Q.answer_text(c["output"]), Q.instructions_of(c)), second
    # a plan that uses a few of the question's words in its own sentences is no echo
    for ok in (
        plan,
        plan + " Crimsonia is told what the brigades are for: to hold the line, not to cross it.",
        "In the next year Azuristan opens talks with Crimsonia over Zafaristan's water.",
    ):
        c = call(ok, user=PLAN_USER)
        assert not Q.is_echo(Q.answer_text(c["output"]), Q.instructions_of(c)), ok


def test_quoted_context_is_not_an_instruction():
    # repeating the scenario (quoted data) is not an echo of the instructions
    c = call("Azuristan and Crimsonia dispute Zafaristan.", user=PLAN_USER)
    assert not Q.is_echo(Q.answer_text(c["output"]), Q.instructions_of(c))


def test_side_names_spelled_wrongly_are_found_and_forms_of_them_pass():
    sides = ["azuristan", "crimsonia"]
    known = Q._words(PLAN_USER)
    assert Q.misspelled_names("Azurland and Azunistiran mobilise.", sides, known) == [
        "Azurland",
        "Azunistiran",
    ]
    assert Q.misspelled_names("Azuranastan mobilises.", sides, known) == ["Azuranastan"]
    fine = "Azuristan and the Crimsonian volunteers meet in Zafaristan."
    assert Q.misspelled_names(fine, sides, known) == []
    powers = ["AUSTRIA", "GERMANY", "ITALY"]
    assert Q.misspelled_names("The German and Austrian armies; Italian fleets.", powers, []) == []
    assert Q.misspelled_names("Gemrany attacks Austira.", powers, []) == ["Gemrany", "Austira"]


def test_on_topic_names_its_side_or_an_entity():
    assert Q.on_topic("We hold Zafaristan.", "azuristan", ["Zafaristan"])
    assert Q.on_topic("Azuristan waits.", "azuristan", [])
    assert not Q.on_topic("The weather is nice today.", "azuristan", ["Zafaristan"])


def test_a_block_shown_twice_is_found():
    once = "# You are FRANCE\n> F1901M:\n> We agreed with England to keep the Channel empty.\n"
    assert Q.repeated_blocks(once) == []
    twice = (
        once
        + "\nYour private notes:\n> (round 3, diary) We agreed with England to keep the Channel empty."
    )
    assert "We agreed with England to keep the Channel empty." in Q.repeated_blocks(twice)
    assert Q.repeated_blocks("# The board\n> x\n# The board\n> y") == ["# The board"]
    assert Q.repeated_blocks("> short\n> short\n") == []  # under BLOCK_CHARS


def test_the_phase_a_prompt_names():
    assert Q.named_phase("# The game\n> Diplomacy, Spring 1901\n... F1901M") == "S1901"
    assert Q.named_phase("# The game: Diplomacy, Fall 1901 movement (F1901M)") == "F1901"
    assert Q.named_phase("Phase W1901A: adjustments") == "W1901"
    assert Q.named_phase("no phase here") is None
    assert Q.named_move("Move 2 of 2. Your side's actions") == 2
    assert Q.named_move("> In move 1, talks failed.\nMove 2 of 2. Write the plan") == 2


def diplomacy_record(messages: list[dict], diaries: list[dict], orders: dict) -> dict:
    events = [
        {
            "round": 1,
            "kind": "narration",
            "author": "secretary",
            "text": "",
            "audience": ["*"],
            "data": {"phase": "S1901M", "orders": orders},
        },
    ]
    players = {"FRANCE": {}, "ENGLAND": {}, "ITALY": {}}  # as record.json holds the scenario
    return {"scenario": {"players": players}, "events": messages + diaries + events}


def msg(author: str, to: list[str], ex: int = 1, rnd: int = 1) -> dict:
    return {
        "round": rnd,
        "kind": "message",
        "author": author,
        "text": "hi",
        "audience": to,
        "data": {"phase": "S1901M", "negotiation_round": ex},
    }


def test_negotiation_activity_counts_rounds_where_every_power_spoke():
    trace = [
        {"event": "call", "task": "message", "round": 1, "role": p, "ask_id": f"1.negotiate.{p}.1"}
        for p in ("FRANCE", "ENGLAND", "ITALY")
    ]
    quiet = Q.negotiation(trace, diplomacy_record([msg("FRANCE", ["*"])], [], {}))
    assert quiet["negotiation_rounds"] == 1 and quiet["rounds_everyone_sent"] == 0
    assert quiet["seat_rounds_with_message"] == 1 and quiet["messages"] == 1
    everyone = [msg("FRANCE", ["*"]), msg("ENGLAND", ["ITALY"]), msg("ITALY", ["*"])]
    loud = Q.negotiation(trace, diplomacy_record(everyone, [], {}))
    assert loud["rounds_everyone_sent"] == 1 and loud["empty_rounds"] == 0
    none = Q.negotiation(trace, diplomacy_record([], [], {}))
    assert none["empty_rounds"] == 1


def test_a_silent_power_round_says_why():
    def call(power: str, output: str, event: str = "call") -> dict:
        ident = f"1.negotiate.{power}.1"
        line = {"event": event, "task": "message", "round": 1, "role": power, "ask_id": ident}
        return {**line, "output": output} if output else line

    trace = [
        call("FRANCE", '{"action": "send", "messages": [{"to": "GLOBAL", "text": "hi"}]}'),
        call("ENGLAND", '{"action": "stay_silent", "messages": [{"to": "GLOBAL", "text": "x"}]}'),
        call("ITALY", "{not json"),
        call("ITALY", "", event="fallback"),
        call("RUSSIA", '{"action": "send", "messages": [{"to": "RUSSIA", "text": "me"}]}'),
    ]
    refused = {
        "round": 1,
        "kind": "verdict",
        "author": "secretary",
        "text": "not delivered",
        "audience": ["RUSSIA"],
        "data": {"refused_message": {"to": "RUSSIA"}, "reason": "a power cannot message itself"},
    }
    talks = Q.negotiation(trace, diplomacy_record([msg("FRANCE", ["*"])], [refused], {}))
    assert talks["silent"] == [
        "ENGLAND in round 1, exchange 1: it chose stay_silent",
        "ITALY in round 1, exchange 1: its answer fell back (no usable answer)",
        "RUSSIA in round 1, exchange 1: its messages were refused: a power cannot message itself",
    ]


def test_hold_only_orders_and_silent_diaries_claiming_talks():
    orders = {"FRANCE": ["A PAR H", "F BRE H"], "ITALY": ["A VEN - TRI", "F NAP H"]}
    assert Q.hold_only(diplomacy_record([], [], orders)) == (1, 2)
    diary = {
        "round": 1,
        "kind": "diary",
        "author": "ITALY",
        "text": "",
        "audience": ["ITALY"],
        "data": {"summary": "We agreed with France on Tyrolia.", "source": "model"},
    }
    rec = diplomacy_record([msg("FRANCE", ["ENGLAND"])], [diary], {})
    assert Q.silent_diaries(rec) == (1, 1, 1)  # ITALY heard nothing, yet claims an agreement
    rec = diplomacy_record([msg("FRANCE", ["*"])], [diary], {})
    assert Q.silent_diaries(rec) == (0, 0, 0)  # a public message reached ITALY


def test_the_benchmark_runs_on_scripted_games_and_prints_its_targets():
    from benchmarks import common, play_quality

    payload = play_quality.run(
        model="scripted", families=["crisis"], seeds=[0], write=False, show=False
    )
    total = payload["results"]["crisis"]["total"]
    assert total["games"] == 1 and total["prompts"] > 0
    assert total["prompts_with_repeats"] == 0
    assert total["phase_right"] == total["phase_checked"] > 0
    names = [t["name"] for t in payload["targets"]]
    assert any("echo" in n for n in names) and any("phase" in n for n in names)
    with common.console.capture() as captured:
        play_quality.show_tables(payload)
    assert "Play quality" in captured.get()


def test_a_bad_model_reference_is_one_line(capsys):
    import pytest

    from benchmarks import play_quality

    with pytest.raises(SystemExit) as exit_:
        play_quality.main(["--model", "nonsense:x", "--no-write"])
    assert exit_.value.code == 2
    assert "play_quality: model 'nonsense:x'" in capsys.readouterr().err


def test_an_option_picked_from_the_question_is_no_echo():
    user = "What was the final status of Zafaristan?\nOptions: part of Azuristan, independent"
    picked = call('{ "choice": "part of Azuristan"}', user=user, task="question", ask_id="q2")
    found = Q.game_quality([picked], {"events": []}, sides=[], entities=[], family="crisis")
    assert found["echoes"] == 0
    copied = call(
        '{"choice": "independent", "evidence": "What was the final status of Zafaristan?"}',
        user=user,
        task="question",
        ask_id="q2",
    )
    found = Q.game_quality([copied], {"events": []}, sides=[], entities=[], family="crisis")
    assert found["echoes"] == 1  # the evidence copies the question


BOARD = "# The board\n> RUSSIA 4: MOS SEV STP WAR; A MOS, F SEV, F STP/SC, A WAR\n"
ORDERS_Q = (
    "\nYou are RUSSIA. Give one order for each of your 4 units (A MOS, F SEV, F STP/SC, A WAR)."
)


def test_a_board_line_a_model_copied_into_a_message_is_its_copy_not_a_repeat():
    # seen on SmolLM2-135M (Diplomacy seed 2): RUSSIA's message copied part of a board line;
    # its order prompt quoted the message (cut to its budget) beside the board, and its question
    # lists the units: each item of the board line was then shown twice
    text = "S1901M, your home centres: MOS SEV STP WAR; A BUD TRI VIE; EDI LON LVP; F IND"
    talks = "\n# Your private talks this phase\nyou to FRANCE:\n> " + text[:50] + " …\n"
    prompt = BOARD + talks + ORDERS_Q
    board_line = "RUSSIA 4: MOS SEV STP WAR; A MOS, F SEV, F STP/SC, A WAR"
    assert board_line in Q.repeated_blocks(prompt)
    trace = [
        call(json.dumps({"messages": [{"to": "FRANCE", "text": text}]}), user=BOARD, ask_id="m1"),
        call("{}", user=prompt, ask_id="o1", task="orders"),
    ]
    found = Q.game_quality(trace, {"events": []}, sides=[], entities=[], family="crisis")
    assert (found["prompts_with_repeats"], found["prompts_with_copies"]) == (0, 1)
    # the same line shown twice by the prompt's builder is a repeat
    built = BOARD + "\n# Your units\n> MOS SEV STP WAR is yours\n" + ORDERS_Q
    trace[1] = call("{}", user=built, ask_id="o1", task="orders")
    found = Q.game_quality(trace, {"events": []}, sides=[], entities=[], family="crisis")
    assert (found["prompts_with_repeats"], found["prompts_with_copies"]) == (1, 0)
    assert Q.split_repeats(built, "") == ([board_line], [])


def test_an_invented_name_with_a_demonym_ending_is_misspelled_and_real_words_are_not():
    sides = ["Azuristan", "Crimsonia"]
    found = Q.misspelled_names("Azurlandian forces met Azura at Azurlander's farm.", sides, [])
    assert found == ["Azurlandian", "Azura", "Azurlander"]
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    assert Q.misspelled_names("The English and French fleets.", powers, []) == []


def test_common_words_near_a_name_are_no_misspelling_and_a_longer_name_is():
    # SmolLM2's Diplomacy messages: "LAND", "FANCY", "FINLAND" are words; "ENGELAND" is not
    powers = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
    found = Q.misspelled_names("LAND and FANCY to FINLAND; ENGELAND waits.", powers, [])
    assert found == ["ENGELAND"]
    crisis = Q.misspelled_names("Azuristania and Azuristanis", ["Azuristan", "Crimsonia"], [])
    assert crisis == ["Azuristania"]  # another name; "Azuristanis" is the name's plural


def diary(author: str, summary: str, rnd: int = 1) -> dict:
    return {
        "round": rnd,
        "kind": "diary",
        "author": author,
        "text": summary,
        "audience": [author],
        "data": {"summary": summary, "source": "model", "phase": "S1901M"},
    }


def test_every_powers_diary_is_read_for_talks_it_attributes_to_another_power():
    """Not only silent powers: FRANCE wrote to ENGLAND, yet its diary says ITALY proposed a
    deal (ITALY sent FRANCE nothing): misattributed. ENGLAND's claim about FRANCE is true."""
    messages = [msg("FRANCE", ["ENGLAND"]), msg("ENGLAND", ["FRANCE"])]
    diaries = [
        diary("FRANCE", "England agreed to a DMZ in the Channel. ITALY proposed an alliance."),
        diary("ENGLAND", "France and I agreed to keep the Channel empty."),
    ]
    claims = Q.talk_claims(diplomacy_record(messages, diaries, {}))
    assert claims["diaries"] == 2
    assert claims["diary_claims"] == 3  # FRANCE: England, Italy; ENGLAND: France
    assert claims["misattributed_claims"] == 1
    assert claims["false_talk_diaries"] == 1
    assert "ITALY and FRANCE exchanged nothing" in claims["examples"][0]
    # the existing silent-diary count sees none of it: both powers talked
    assert Q.silent_diaries(diplomacy_record(messages, diaries, {}))[1] == 0


def test_a_public_message_or_a_denial_is_no_misattribution_and_rounds_are_kept_apart():
    diaries = [diary("FRANCE", "Italy proposed a ceasefire to all.")]
    public = Q.talk_claims(diplomacy_record([msg("ITALY", ["*"])], diaries, {}))
    assert (public["diary_claims"], public["misattributed_claims"]) == (1, 0)
    denied = [diary("FRANCE", "Italy proposed nothing; no talks with England.")]
    none = Q.talk_claims(diplomacy_record([msg("FRANCE", ["ENGLAND"])], denied, {}))
    assert (none["diary_claims"], none["false_talk_diaries"]) == (0, 0)
    # a message of an earlier round does not back a claim about this one
    later = [diary("FRANCE", "England offered support in Belgium.", rnd=2)]
    old = Q.talk_claims(diplomacy_record([msg("ENGLAND", ["FRANCE"], rnd=1)], later, {}))
    assert old["misattributed_claims"] == 1
    # a silent writer's claim with no power named still counts as a false-talk diary
    silent = [diary("ITALY", "We agreed on a plan.")]
    alone = Q.talk_claims(diplomacy_record([msg("FRANCE", ["ENGLAND"])], silent, {}))
    assert (alone["diary_claims"], alone["false_talk_diaries"]) == (0, 1)
