"""A person at a terminal fills in a seat's answer field by field (wargraph.seats.terminal_form), on
the schemas people meet: a choice by number or name, lists item by item, Enter for a default,
a field's mistake asked again at once, a pasted JSON line still a whole answer."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from wargraph.graphs.diplomacy.schemas import diary_schema, messages_schema
from wargraph.seats.agents import ReviewAnswer
from wargraph.seats.deciders import parse_answer
from wargraph.seats.schemas import flat_json_schema
from wargraph.seats.terminal_form import fill_in, pick
from wargraph.worlds import allocation_schema

POWERS = ["GLOBAL", "AUSTRIA", "ENGLAND", "GERMANY", "ITALY", "RUSSIA", "TURKEY"]


class Typed:
    """Answers the form's prompts from a list, and keeps what it was asked and told."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []
        self.said: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def fill(self, model: type[BaseModel]) -> Any:
        answer = fill_in(flat_json_schema(model), self.ask, self.said.append)
        assert not self.lines, f"lines left unread: {self.lines}"
        return answer


def people_messages(limit: int = 2) -> type[BaseModel]:
    return messages_schema({"recipients": POWERS, "limit": limit, "chars": 120, "people": True})


def test_messages_item_by_item_a_choice_by_the_start_of_its_name_or_its_number():
    typed = Typed("", "eng", "Keep the Channel empty.", "4", "Tyrolia stays empty.")
    answer = typed.fill(people_messages())
    assert answer == {
        "action": "send",  # Enter took the default
        "messages": [
            {"to": "ENGLAND", "text": "Keep the Channel empty."},
            {"to": "GERMANY", "text": "Tyrolia stays empty."},
        ],
    }
    assert parse_answer(answer, people_messages()).model_dump() == answer
    assert typed.prompts[0] == "action (1 send, 2 stay_silent) [send]: "
    assert typed.prompts[1] == (
        "messages 1, to (1 GLOBAL, 2 AUSTRIA, 3 ENGLAND, 4 GERMANY, 5 ITALY, 6 RUSSIA, 7 TURKEY): "
    )
    assert typed.prompts[2] == "messages 1, text (up to 120 characters): "
    assert len(typed.prompts) == 5  # the list stops when it is full (2)


def test_enter_at_an_items_first_field_ends_the_list_and_silence_is_a_choice():
    assert Typed("", "2", "Hold fast.", "").fill(people_messages()) == {
        "action": "send",
        "messages": [{"to": "AUSTRIA", "text": "Hold fast."}],
    }
    assert Typed("stay", "").fill(people_messages()) == {"action": "stay_silent", "messages": []}


def test_mistakes_are_asked_again_with_the_reason():
    too_long = "x" * 121
    typed = Typed("9", "s", "send", "x", "AUSTRIA", too_long, "", "Short.", "")
    answer = typed.fill(people_messages())
    assert answer == {"action": "send", "messages": [{"to": "AUSTRIA", "text": "Short."}]}
    said = "\n".join(typed.said)
    assert "action: '9' is none of the choices" in said  # out of range
    assert "action: 's' is none of the choices" in said  # send or stay_silent: ambiguous
    assert "messages 1, to: 'x' is none of the choices" in said
    assert "121 characters, the most is 120" in said
    assert "messages 1, text: some text is needed here." in said


def test_a_diary_with_relations_in_any_case():
    schema = diary_schema({"chars": 120, "others": ["ENGLAND", "GERMANY"]})
    typed = Typed("We talked with England.", "", "Hold Burgundy.", "ally", "3")
    answer = typed.fill(schema)
    assert answer == {
        "summary": "We talked with England.",
        "intent": "",
        "goals": "Hold Burgundy.",
        "ENGLAND": "Ally",
        "GERMANY": "Neutral",
    }
    assert parse_answer(answer, schema).model_dump() == answer


def test_many_or_long_choices_are_listed_one_per_line():
    class Action(BaseModel):
        action: Literal[tuple(f"declare war on the kingdom of {n}" for n in "ABCDEF")]  # type: ignore[valid-type]

    class Actions(BaseModel):
        actions: list[Action] = Field(max_length=2)

    typed = Typed("declare war on the kingdom of C", "6")
    assert typed.fill(Actions) == {
        "actions": [
            {"action": "declare war on the kingdom of C"},
            {"action": "declare war on the kingdom of F"},
        ]
    }
    assert typed.prompts == [
        "actions 1, action (number or name): ",
        "actions 2, action (number or name, listed above): ",
    ]
    assert len(typed.said) == 1 + 6  # the list's line, then the six choices once
    assert typed.said[1:3] == [
        "   1 declare war on the kingdom of A",
        "   2 declare war on the kingdom of B",
    ]


def test_a_persons_diary_keeps_each_relationship_on_enter():
    current = {"ENGLAND": "Friendly", "GERMANY": "Enemy"}
    people = diary_schema(
        {"chars": 120, "others": ["ENGLAND", "GERMANY"], "people": True, "current": current}
    )
    typed = Typed("Quiet week.", "", "", "", "4")
    assert typed.fill(people) == {
        "summary": "Quiet week.",
        "intent": "",
        "goals": "",
        "ENGLAND": "Friendly",
        "GERMANY": "Friendly",
    }
    assert typed.prompts[3].endswith("[Friendly]: ") and typed.prompts[4].endswith("[Enemy]: ")
    # a model's grammar still asks for every relationship (the current ones are people's only)
    model = diary_schema({"chars": 120, "others": ["ENGLAND", "GERMANY"], "current": current})
    assert {"ENGLAND", "GERMANY"} <= set(flat_json_schema(model)["required"])


def test_numbers_in_range_and_yes_or_no():
    class Plan(BaseModel):
        troops: int = Field(ge=0, le=10)
        share: float = 0.5
        public: bool

    typed = Typed("many", "11", "7", "", "maybe", "y")
    assert typed.fill(Plan) == {"troops": 7, "share": 0.5, "public": True}
    said = "\n".join(typed.said)
    assert "'many' is not a whole number" in said and "11 is out of range from 0 to 10" in said
    assert "answer yes or no" in said


def test_blotto_allocations_field_by_field_within_the_budget():
    schema = allocation_schema({"fronts": ["north", "south", "east"], "budget": 10})
    typed = Typed("5", "-1", "3", "2")
    answer = typed.fill(schema)
    assert answer == {"north": 5, "south": 3, "east": 2}
    assert parse_answer(answer, schema).model_dump() == answer
    assert typed.prompts[0] == "north (a whole number from 0 to 10): "
    assert typed.said == ["south: -1 is out of range from 0 to 10."]


def test_an_umpires_review_accepts_with_enter():
    typed = Typed("", "")
    assert typed.fill(ReviewAnswer) == {"accept": True, "text": ""}
    assert typed.prompts == ["accept (yes or no) [yes]: ", "text: "]


def test_a_json_line_pasted_at_the_first_field_is_the_whole_answer():
    line = '{"action": "stay_silent", "messages": []}'
    typed = Typed(line)
    assert typed.fill(people_messages()) == line
    # pasted later, it is text like any other
    assert Typed("", "eng", '{"a": 1}', "").fill(people_messages())["messages"][0]["text"] == (
        '{"a": 1}'
    )


def test_standard_input_ending_mid_form_is_an_end_of_file():
    with pytest.raises(EOFError):
        Typed("", "eng").fill(people_messages())


@pytest.mark.parametrize(
    ("line", "picked"),
    [
        ("2", "b"),
        ("B", "b"),
        ("abd", "abd"),
        ("abc", "abc"),
        ("ab", None),
        ("0", None),
        ("4", None),
    ],
)
def test_pick(line, picked):
    assert pick(line, ["abc", "b", "abd"]) == picked
