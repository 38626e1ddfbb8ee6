"""Two people play Azuristan-Crimsonia in two browser contexts of real headless Chromium; the
facilitator starts the game from the facilitator page. The AI umpire is played by the scripted
decider (deterministic, seeded, no strategy) so the test is fast."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

SEATS = ("azuristan", "crimsonia")
PLANS = {
    1: {
        "azuristan": "AZ round one: open talks at the border and keep the army in barracks.",
        "crimsonia": "CANARY-CR-R1 round one: quietly arm the volunteers in Zafaristan.",
    },
    2: {
        "azuristan": "AZ round two: accept the mediation offer.",
        "crimsonia": "CANARY-CR-R2 round two: accept mediation, keep the volunteers.",
    },
}
WAIT_MS = 40_000


def _shot(page, folder: Path, name: str) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    keep = os.environ.get("WARGRAPH_SCREENSHOTS")
    if keep:  # keep them for a person to look at
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)


def _answer(page, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#status")).to_have_text("your turn", timeout=WAIT_MS)
    page.fill("#field-plan", text)
    page.click("#submit")


def test_two_players_in_two_browsers_against_the_scripted_umpire(server, browser, tmp_path):
    from playwright.sync_api import expect

    facilitator = browser.new_context(viewport={"width": 1280, "height": 900})
    fpage = facilitator.new_page()
    fpage.goto(f"{server.url}/facilitator#token={server.facilitator_token}")
    expect(fpage.locator("#scenario")).to_have_value("azuristan_crimsonia", timeout=WAIT_MS)
    assert "token=" not in fpage.url, "the token stays in the address bar"
    for seat in SEATS:
        fpage.check(f"#seat-{seat}")
    fpage.fill("#model", "scripted")
    fpage.click("#start")
    rows = {s: fpage.locator(f"tr[data-seat='{s}']") for s in (*SEATS, "control")}
    for seat in SEATS:
        expect(rows[seat].locator("input.link")).to_be_visible(timeout=WAIT_MS)
    expect(rows["control"]).to_contain_text("AI")
    links = {s: rows[s].locator("input.link").input_value() for s in SEATS}
    assert all(link.startswith(f"{server.url}/play#token=s.") for link in links.values())
    assert links["azuristan"] != links["crimsonia"]
    expect(fpage.locator("#game-info")).to_contain_text("waiting for", timeout=WAIT_MS)
    _shot(fpage, tmp_path, "1-facilitator-seats")

    # Two people, two separate browser contexts (no shared storage).
    players = {}
    for seat in SEATS:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.goto(links[seat])
        expect(page.locator("#who")).to_have_text(f"Your seat: {seat}", timeout=WAIT_MS)
        players[seat] = page
    for seat, page in players.items():
        other = next(s for s in SEATS if s != seat)
        events = page.locator("#events")
        expect(events).to_contain_text(f"You are {seat}.", timeout=WAIT_MS)
        expect(events).not_to_contain_text(f"You are {other}.")
        expect(page.locator("#question")).to_contain_text("Round 1", timeout=WAIT_MS)
        expect(page.locator("#question")).not_to_contain_text("null")
        expect(page.locator("#question")).not_to_contain_text("undefined")
    _shot(players["azuristan"], tmp_path, "2-player-question")

    for round_no in (1, 2):
        for seat in SEATS:  # each answers in their own browser
            _answer(players[seat], PLANS[round_no][seat])
        for seat, page in players.items():
            # Each sees their own plan and never the other's.
            expect(page.locator("#events")).to_contain_text(PLANS[round_no][seat], timeout=WAIT_MS)
        if round_no == 1:
            for page in players.values():
                expect(page.locator("#round")).to_have_text("Round 2 of 2", timeout=WAIT_MS)
                expect(page.locator("#events")).to_contain_text("What happened")
            _shot(players["azuristan"], tmp_path, "3-player-round-2")

    for seat, page in players.items():
        expect(page.locator("#status")).to_have_text("over", timeout=WAIT_MS)
        text = page.locator("#events").inner_text()
        assert "Debrief" in text
        if seat == "azuristan":
            assert "CANARY-CR" not in text, "azuristan's page showed crimsonia's plans"
    _shot(players["azuristan"], tmp_path, "4-player-game-over")

    expect(fpage.locator("#status")).to_have_text("over", timeout=WAIT_MS)
    transcript = fpage.locator("#transcript")
    for round_plans in PLANS.values():
        for text in round_plans.values():
            expect(transcript).to_contain_text(text)
    _shot(fpage, tmp_path, "5-facilitator-transcript")
    for page in (*players.values(), fpage):
        page.context.close()


def test_pages_without_a_valid_token_show_no_game(server, browser):
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server.url}/play")
    expect(page.locator("#connection")).to_contain_text("No seat token", timeout=WAIT_MS)
    page.goto(f"{server.url}/play#token=s.Zm9v.0000")
    expect(page.locator("#connection")).to_contain_text("token", timeout=WAIT_MS)
    expect(page.locator("#events li")).to_have_count(0)
    page.goto(f"{server.url}/facilitator#token=f.0000")
    expect(page.locator("#connection")).to_contain_text("invalid token", timeout=WAIT_MS)
    context.close()


def test_a_person_plays_france_and_writes_messages_in_rows(server, browser, tmp_path):
    """Diplomacy served with FRANCE for a person (the six other powers scripted): the messages
    question is a form of rows, what the person writes reaches the seat's record as FRANCE's
    press, and the second round of talks follows."""
    from playwright.sync_api import expect

    fpage = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    fpage.goto(f"{server.url}/facilitator#token={server.facilitator_token}")
    expect(fpage.locator("#scenario")).to_have_value("azuristan_crimsonia", timeout=WAIT_MS)
    fpage.select_option("#scenario", "diplomacy")
    fpage.check("#seat-FRANCE")
    fpage.fill("#model", "scripted")
    fpage.click("#start")
    link = fpage.locator("tr[data-seat='FRANCE'] input.link")
    expect(link).to_be_visible(timeout=WAIT_MS)

    page = browser.new_context(viewport={"width": 1200, "height": 1000}).new_page()
    page.goto(link.input_value())
    expect(page.locator("#status")).to_have_text("your turn", timeout=WAIT_MS)
    expect(page.locator("#question")).to_contain_text("negotiation round 1 of 2")
    expect(page.locator("#round")).to_have_text(
        "Spring 1901 movement (S1901M)"
    )  # not "Round 1 of 200"
    expect(fpage.locator("#game-info")).to_contain_text("Spring 1901 movement (S1901M)")
    assert page.locator("#question textarea.json").count() == 0, "messages as a JSON box"
    page.select_option("#field-messages-1-to", "ENGLAND")
    page.fill("#field-messages-1-text", "CANARY-FR-1: the Channel stays empty; agreed?")
    page.click("text=Add another")
    page.fill("#field-messages-2-text", "Everyone: France wants Iberia, nothing more.")
    page.click("#submit")
    expect(page.locator("#form-error")).to_have_text("Message 2: to is required")
    page.select_option("#field-messages-2-to", "GLOBAL")
    _shot(page, tmp_path, "france-messages")
    page.click("#submit")
    events = page.locator("#events")
    expect(events).to_contain_text("CANARY-FR-1: the Channel stays empty", timeout=WAIT_MS)
    expect(events).to_contain_text("France wants Iberia, nothing more.")
    # press as conversations: one with England, one with everyone
    press = page.locator("#press-panel")
    expect(press.locator("details.talk[data-with='ENGLAND'] .bubble.mine")).to_contain_text(
        "CANARY-FR-1"
    )
    expect(press.locator("details.talk[data-with='Everyone'] .bubble.mine")).to_contain_text(
        "France wants Iberia"
    )
    # the next question is the second round of talks, its form fresh
    expect(page.locator("#question")).to_contain_text("negotiation round 2", timeout=WAIT_MS)
    expect(page.locator("#field-messages-1-text")).to_have_value("")
    _shot(page, tmp_path, "france-next-question")
    page.context.close()
    fpage.context.close()
