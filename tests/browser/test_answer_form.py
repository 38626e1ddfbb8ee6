"""The answer form a person fills in on the seat page (src/wargraph/web/common.js `buildForm`), in real
headless Chromium, for the schemas people get: a Diplomacy power's messages as rows (recipient,
text) instead of a JSON box, read back into an answer the game's own model accepts; a half-filled
row and a JSON field's bad text are errors that name the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser.test_play_in_browsers import _shot
from wargraph.graphs.diplomacy.schemas import messages_schema, orders_text_schema
from wargraph.seats.schemas import flat_json_schema

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

WEB = Path(__file__).resolve().parents[2] / "src" / "wargraph" / "web"
ARGS = {"recipients": ["GLOBAL", "FRANCE", "ITALY"], "limit": 2, "chars": 200, "people": True}


@pytest.fixture
def form_page(browser, tmp_path):
    """A page holding the shipped style and script and a form for `schema` (set by `show`)."""
    page_file = tmp_path / "form.html"
    page_file.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>{(WEB / 'style.css').read_text()}</style></head>"
        "<body><div class='card' style='max-width:640px'><form id='form'></form></div>"
        f"<script>{(WEB / 'common.js').read_text()}</script></body></html>"
    )
    context = browser.new_context(viewport={"width": 900, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())

    def show(schema: dict, prefill: dict | None = None) -> None:
        page.evaluate(
            """([schema, prefill]) => {
              window.built = WG.buildForm(schema, prefill);
              document.getElementById('form').replaceChildren(...window.built.fields);
            }""",
            [schema, prefill],
        )

    yield page, show
    context.close()
    assert not errors, errors


def read(page) -> dict:
    """The form's answer, or {"error": message} as the page would show it."""
    return page.evaluate(
        "() => { try { return window.built.read(); } catch (e) { return {error: e.message}; } }"
    )


def test_diplomacy_messages_are_rows_a_person_fills_in(form_page, tmp_path):
    page, show = form_page
    model = messages_schema(ARGS)
    show(flat_json_schema(model))
    assert page.locator("textarea.json").count() == 0, "no JSON box for the messages"
    # one row to start, a second on "Add another", none beyond the limit of 2
    assert page.locator("fieldset.list-row").count() == 1
    page.click("text=Add another")
    assert page.locator("fieldset.list-row").count() == 2
    assert page.locator("text=Add another").is_hidden()
    options = page.locator("#field-messages-1-to option").all_inner_texts()
    assert options == ["— choose —", "GLOBAL", "FRANCE", "ITALY"]
    assert page.locator("#field-action").input_value() == "send"  # the default, preselected

    page.select_option("#field-messages-1-to", "FRANCE")
    page.fill("#field-messages-1-text", 'Support me into "Burgundy" and I stay out of Piedmont.')
    _shot(page, tmp_path, "diplomacy-message-form")
    answer = read(page)
    assert answer == {
        "action": "send",
        "messages": [
            {"to": "FRANCE", "text": 'Support me into "Burgundy" and I stay out of Piedmont.'}
        ],
    }  # the second row, left empty, is not sent
    parsed = model.model_validate(answer)
    assert [(m.to, m.text) for m in parsed.messages] == [("FRANCE", answer["messages"][0]["text"])]

    page.fill("#field-messages-2-text", "All powers: I want peace in the Alps.")
    assert read(page) == {"error": "Message 2: to is required"}
    page.select_option("#field-messages-2-to", "GLOBAL")
    assert [m["to"] for m in read(page)["messages"]] == ["FRANCE", "GLOBAL"]


def test_silence_needs_no_message(form_page):
    page, show = form_page
    model = messages_schema(ARGS)
    show(flat_json_schema(model))
    page.select_option("#field-action", "stay_silent")
    answer = read(page)
    assert answer == {"action": "stay_silent"}
    assert model.model_validate(answer).messages == []


def test_a_form_shows_a_given_answer_again(form_page):
    page, show = form_page
    given = {"action": "send", "messages": [{"to": "ITALY", "text": "Lepanto?"}]}
    show(flat_json_schema(messages_schema(ARGS)), given)
    assert read(page) == given


def test_lists_of_plain_values_and_json_fields(form_page):
    page, show = form_page
    schema = {
        "properties": {
            "goals": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "terms": {"type": "object"},
        },
        "required": ["goals"],
    }
    show(schema)
    assert read(page) == {"error": "Goals is required"}
    page.fill("#field-goals-1", "keep the river open")
    page.fill("#field-terms", "{not json")
    error = read(page)["error"]
    assert error.startswith("Terms: not valid JSON"), error
    page.fill("#field-terms", json.dumps({"tolls": 0}))
    assert read(page) == {"goals": ["keep the river open"], "terms": {"tolls": 0}}


def test_orders_are_a_select_per_unit_with_a_typed_fallback(form_page, tmp_path):
    """A person's orders: one select per unit listing its legal orders in words, starting on
    the preset (hold), the chosen order's notation under it; "Other" opens a one-line text
    field for an order in notation, and Enter there goes to the next unit's field."""
    page, show = form_page
    legal = {
        "F BRE": ["F BRE H", "F BRE - MAO", "F BRE - PIC", "F BRE S A PAR - PIC"],
        "A MAR": ["A MAR H", "A MAR - SPA"],
        "A PAR": ["A PAR H", "A PAR - BUR", "A PAR S F BRE - PIC"],
    }
    preset = {k: v[0] for k, v in legal.items()}
    show(flat_json_schema(orders_text_schema({"legal": legal, "preset": preset})))
    assert page.locator("textarea").count() == 0
    assert page.locator("select.choice").count() == 3
    assert page.locator('input[type="text"]:visible').count() == 0
    assert page.get_by_text("(optional)").count() == 0
    assert page.locator("label[for='field-F BRE']").inner_text() == "F BRE · fleet in Brest (BRE)"
    groups = page.locator("select[name='A PAR'] optgroup").evaluate_all(
        "gs => gs.map(g => g.label)"
    )
    assert groups == ["Hold", "Move", "Support"]
    assert read(page) == preset  # every unit has an order before the person touches anything

    page.select_option("select[name='A PAR']", label="Move to Burgundy (BUR)")
    assert page.locator("select[name='A PAR'] ~ .notation").inner_text() == "A PAR - BUR"
    page.select_option("select[name='F BRE']", label="Other: type an order…")
    typed = page.locator("input[name='F BRE.typed']")
    assert typed.is_visible()
    assert page.get_by_text('for example "- MAO" or "H" (the unit may be left out)').count() == 1
    typed.click()
    page.keyboard.type("- mao")
    page.keyboard.press("Enter")  # to the next unit's select, not a submit
    assert page.evaluate("document.activeElement.name") == "A MAR"
    _shot(page, tmp_path, "diplomacy-orders-form")
    assert read(page) == {"F BRE": "- mao", "A MAR": "A MAR H", "A PAR": "A PAR - BUR"}
    typed.fill("")
    assert read(page) == {"A MAR": "A MAR H", "A PAR": "A PAR - BUR"}  # an empty line: no order
