"""Choices wargraph did not write reach llama.cpp's grammar only in a form it can carry (issue
40, item 4): llama-cpp-python's own converter (`json_schema_to_gbnf`) writes a grammar that
`grammar_problem` accepts for every choice, the answer maps back to the choice as written, and
the grammar a double quote used to break is caught before llama.cpp sees it."""

from __future__ import annotations

import json

import pytest

from wargraph.nodes.schemas import choice_schema, record_quotes
from wargraph.seats.deciders import validate_value
from wargraph.seats.schemas import flat_json_schema, grammar_problem, grammar_schema

HOSTILE = ['The "Big Bang" Theory', "C:\\games\\run", "tab\there", 'end"', 'say \\"no\\"']


def gbnf(schema: dict) -> str:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema))


def test_the_converter_breaks_on_a_quote_and_the_check_says_so():
    raw = flat_json_schema(choice_schema({"options": ['The "Big Bang" Theory', "no"]}))
    assert grammar_problem(gbnf(raw))  # what llama.cpp would have crashed on


@pytest.mark.parametrize("text", HOSTILE)
def test_every_choice_reaches_the_grammar_in_a_form_it_carries(text):
    context = f"> {text}\n> another line\n"
    model = choice_schema({"options": [text, "no"], "quotes": record_quotes(context)})
    sent = grammar_schema(flat_json_schema(model))
    assert grammar_problem(gbnf(sent)) is None
    # the model answers in the grammar's spelling; the answer is the choice as written
    choice = sent["properties"]["choice"]["enum"][0]
    evidence = sent["properties"]["evidence"]["enum"][1]
    answer = validate_value({"choice": choice, "evidence": evidence}, model)
    assert answer.choice == text and answer.evidence == text.strip()


def test_the_checker_accepts_plain_grammars_and_refuses_broken_ones():
    assert grammar_problem('root ::= "{" space "}"\nspace ::= " "?') is None
    assert grammar_problem('root ::= "a" b') == "rule root: no rule called 'b'"
    assert grammar_problem('root ::= "unclosed') is not None
    assert grammar_problem('space ::= " "?') == "no root rule"
