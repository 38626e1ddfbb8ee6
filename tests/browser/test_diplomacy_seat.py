"""A person plays France on a served Diplomacy game to 1902 in real headless Chromium, by choosing
each unit's order in its select and clicking; the six other powers are scripted. The facilitator
sets the family's options on the setup page (last year 1901, no negotiation rounds); the seat
page shows the board (the engine's map and every power's units) and, after each phase, the
result of the person's own choices."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_play_in_browsers import _shot
from tests.browser.test_room import keep_for_docs

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WAIT_MS = 60_000
# France's plan: Iberia in 1901, then two builds at home
SPRING = {"A MAR": "A MAR - SPA", "A PAR": "A PAR - BUR", "F BRE": "F BRE - MAO"}
FALL = {"F MAO": "F MAO - POR", "A SPA": "A SPA H", "A BUR": "A BUR H"}


def _next_question(page, after: str | None) -> str:
    """Wait until a question other than `after` is on the form (or the game is over)."""
    page.wait_for_function(
        """(after) => {
          const f = document.getElementById('answer-form');
          return document.getElementById('status').textContent === 'over'
            || (f && f.dataset.ask !== after);
        }""",
        arg=after,
        timeout=WAIT_MS,
    )
    form = page.locator("#answer-form")
    return form.get_attribute("data-ask") if form.count() else ""


def _choose(page, orders: dict[str, str]) -> None:
    for unit, order in orders.items():
        page.select_option(f"select[name='{unit}']", order)
        # the choice's notation shows under the select, as the game writes it
        assert page.locator(f"select[name='{unit}'] ~ .notation").inner_text() == order


def test_a_person_plays_france_to_1902_by_choosing_orders(server, browser, tmp_path):
    from playwright.sync_api import expect

    errors: list[str] = []
    fpage = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    fpage.on("pageerror", lambda e: errors.append(str(e)))
    fpage.goto(f"{server.url}/facilitator#token={server.facilitator_token}")
    expect(fpage.locator("#scenario")).to_have_value("azuristan_crimsonia", timeout=WAIT_MS)
    fpage.select_option("#scenario", "diplomacy")
    # the family's options, not "200 rounds"
    info = fpage.locator("#scenario-info")
    expect(info).to_contain_text("last year played 1905")
    expect(info).not_to_contain_text("200 rounds")
    assert fpage.locator("#rounds-field").is_hidden()
    expect(fpage.locator("#family-options-legend")).to_have_text("Options of a diplomacy game")
    fpage.get_by_label("Last year played").fill("1901")
    fpage.get_by_label("Negotiation rounds").fill("0")
    fpage.check("#seat-FRANCE")
    fpage.fill("#model", "scripted")
    _shot(fpage, tmp_path, "diplomacy-1-setup")
    fpage.click("#start")
    link = fpage.locator("tr[data-seat='FRANCE'] input.link")
    expect(link).to_be_visible(timeout=WAIT_MS)

    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(link.input_value())

    # Spring 1901: the map, the units of every power, one select per unit
    ask = _next_question(page, None)
    expect(page.locator("#round")).to_have_text("Spring 1901 movement (S1901M)")
    board = page.locator("#world-panel")
    expect(board.locator("img.map").first).to_be_visible()
    assert page.locator("img.map").first.evaluate("i => i.naturalWidth") > 500, "the map is empty"
    expect(board.locator("tr.mine")).to_contain_text("FRANCE (you)")
    expect(board).to_contain_text("A PAR (Paris)")
    expect(board).to_contain_text("A MOS (Moscow)")  # every power's units, not only France's
    selects = page.locator("#question select.choice")
    expect(selects).to_have_count(3)
    assert page.locator("#question textarea").count() == 0, "orders as free-text boxes"
    expect(page.locator("#question")).not_to_contain_text("(optional)")
    par = page.locator("select[name='A PAR'] option").all_inner_texts()
    assert par[0] == "Hold" and "Move to Burgundy (BUR)" in par
    assert "Support A MAR into Burgundy (BUR)" in par and par[-1] == "Other: type an order…"
    assert page.locator("select[name='A PAR']").input_value() == "A PAR H"  # preset: hold
    # the orders in notation, written for a model, are folded away under their heading
    expect(page.locator("details.reference summary")).to_have_text("Your units")
    _choose(page, SPRING)
    # the orders are drawn on the map as they are chosen: three arrows over the phase's map
    layer = board.locator(".map-box svg.orders-layer")
    expect(layer).to_have_attribute("data-orders", "; ".join(SPRING.values()))
    expect(layer.locator("line[marker-end]")).to_have_count(3)
    # ... and kept across a reload, with the arrows (a draft in this browser)
    page.reload()
    for unit, order in SPRING.items():
        expect(page.locator(f"select[name='{unit}']")).to_have_value(order, timeout=WAIT_MS)
    expect(layer).to_have_attribute("data-orders", "; ".join(SPRING.values()), timeout=WAIT_MS)
    _shot(page, tmp_path, "diplomacy-2-spring-orders")
    keep_for_docs(page, "board", tmp_path)
    page.click("#submit")

    # Fall 1901: the board moved; a fleet's convoys and supports are choices too
    ask = _next_question(page, ask)
    expect(page.locator("#round")).to_have_text("Fall 1901 movement (F1901M)", timeout=WAIT_MS)
    expect(board).to_contain_text("A SPA (Spain)", timeout=WAIT_MS)
    expect(board.locator("details summary")).to_contain_text("Last phase S1901M")
    groups = page.locator("select[name='F MAO'] optgroup").evaluate_all(
        "gs => gs.map(g => g.label)"
    )
    assert groups[:3] == ["Hold", "Move", "Support"] and "Convoy" in groups, groups
    _choose(page, FALL)
    # the typed fallback: "Other" opens a line for an order in notation
    page.select_option("select[name='A SPA']", label="Other: type an order…")
    typed = page.locator("input[name='A SPA.typed']")
    expect(typed).to_be_visible()
    typed.fill("H")  # the unit may be left out: the secretary puts it in front
    _shot(page, tmp_path, "diplomacy-3-fall-orders")
    page.click("#submit")

    # Winter 1901: two builds (Spain and Portugal taken), each slot its own select
    ask = _next_question(page, ask)
    expect(page.locator("#round")).to_have_text("Winter 1901 adjustments (W1901A)", timeout=WAIT_MS)
    # the tab's title and the heading name the phase, not the scenario's "Spring 1901"
    expect(page).to_have_title("FRANCE · Diplomacy · Winter 1901 adjustments")
    expect(page.locator("#title")).to_have_text("Diplomacy")
    expect(board.locator("tr.mine")).to_contain_text(re.compile(r"FRANCE \(you\)\s*5"))
    builds = page.locator("#question select.choice")
    expect(builds).to_have_count(2)
    assert builds.first.input_value() == "WAIVE"  # preset: what happens without an answer
    page.select_option("select[name='build_1']", "F BRE B")
    page.select_option("select[name='build_2']", "A BRE B")  # a second unit on Brest
    page.click("#submit")
    # refused with the engine's reason; what happens after the retries is said in build terms
    ask = _next_question(page, ask)
    question = page.locator("#question")
    expect(question).to_contain_text("already built at BRE")
    expect(question).to_contain_text("the build slot is waived")
    expect(question).not_to_contain_text("the unit holds")
    page.select_option("select[name='build_2']", "A MAR B")
    _shot(page, tmp_path, "diplomacy-4-builds")
    page.click("#submit")

    # the game ends after 1901 (the facilitator's last year) and stands at 1902
    expect(page.locator("#status")).to_have_text("over", timeout=WAIT_MS)
    expect(page.locator("#round")).to_have_text("Spring 1902 movement (S1902M)")
    expect(board).to_contain_text("the end of the game (S1902M)", timeout=WAIT_MS)
    mine = board.locator("tr.mine")
    expect(mine).to_contain_text("F BRE (Brest)")
    expect(mine).to_contain_text("A MAR (Marseilles)")
    expect(mine).to_contain_text("F POR (Portugal)")
    events = page.locator("#events")
    expect(events).to_contain_text("FRANCE: F BRE - MAO (success)")
    expect(events).to_contain_text("F MAO - POR (success)")
    _shot(page, tmp_path, "diplomacy-5-over")
    assert not errors, errors
    page.context.close()
    fpage.context.close()
