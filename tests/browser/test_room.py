"""A facilitator running a room in real headless Chromium: games of one scenario told apart in
the list (short id, start time, phase in words, who each waits for), every seat's state at a
glance. Diplomacy with FRANCE for a person, the other powers scripted."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import httpx
import pytest

from tests.server.support import bearer

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WAIT_MS = 60_000
DOC_IMAGES = "WARGRAPH_DOC_IMAGES"  # a folder (docs/img) to keep the pages' pictures for the docs


def keep_for_docs(page, name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    folder = os.environ.get(DOC_IMAGES)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(folder) / path.name)


def start_diplomacy(server, humans: list[str], **extra) -> dict:
    body = {
        "scenario": "diplomacy",
        "humans": humans,
        "model": "scripted",
        "options": {"diplomacy.max_year": 1901, "diplomacy.negotiation_rounds": 0},
        **extra,
    }
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post("/wargraph/graphs", headers=bearer(server.facilitator_token), json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_the_facilitator_tells_games_apart_and_sees_every_seat(server, browser, tmp_path):
    from playwright.sync_api import expect

    games = [start_diplomacy(server, ["FRANCE"], seed=s) for s in (1, 2)]
    ids = [g["thread_id"] for g in games]
    errors: list[str] = []
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server.url}/facilitator#token={server.facilitator_token}&game={ids[0]}")
    rows = [page.locator(f"#games tr[data-thread='{t}']") for t in ids]
    for row, thread_id in zip(rows, ids, strict=True):
        # the same title, but its own short id, start time and phase in words
        expect(row.locator(".game-id")).to_have_text("…" + thread_id[-8:], timeout=WAIT_MS)
        expect(row.locator(".started")).to_have_text(re.compile(r"\d{1,2}:\d{2}"))
        expect(row.locator(".now")).to_have_text("Spring 1901 movement", timeout=WAIT_MS)
        expect(row.locator(".waiting-for")).to_have_text("FRANCE", timeout=WAIT_MS)
        expect(row).not_to_contain_text("Spring 1901 movement, Spring 1901")
    assert rows[0].locator("a").inner_text() == "Diplomacy"  # not "Diplomacy, Spring 1901"
    shown = [row.locator(".game-id").inner_text() for row in rows]
    assert shown[0] != shown[1], shown

    # the selected game: its id and phase, and each seat's state in one line of chips
    expect(page.locator("#game-info")).to_contain_text("game …" + ids[0][-8:])
    expect(page.locator("#game-info")).to_contain_text("Spring 1901 movement (S1901M)")
    glance = page.locator("#seat-glance li")
    expect(glance).to_have_count(8, timeout=WAIT_MS)  # seven powers and the secretary
    france = page.locator("#seat-glance li[data-seat='FRANCE']")
    expect(france).to_have_text("FRANCE to answer", timeout=WAIT_MS)
    expect(france).to_have_class(re.compile("seat-to-answer"))
    expect(page.locator("#seat-glance li[data-seat='ENGLAND']")).not_to_contain_text("to answer")
    expect(page.locator("tr[data-seat='FRANCE'] .seat-now")).to_have_text("to answer: orders")

    # a deadline for this phase, set and extended from the page; the seat sees the clock
    page.fill("#deadline-minutes", "10")
    page.click("#deadline-set")
    expect(page.locator("#deadline-now")).to_contain_text(
        re.compile(r"^(9:5\d|10:00) left for Spring 1901 movement$")
    )
    page.click("#deadline-extend")
    expect(page.locator("#deadline-now")).to_contain_text(re.compile(r"^1[45]:\d\d left"))
    keep_for_docs(page, "facilitator", tmp_path)
    seat = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    seat.on("pageerror", lambda e: errors.append(str(e)))
    seat.goto(games[0]["links"]["FRANCE"])
    expect(seat.locator("#clock")).to_contain_text(
        re.compile(r"^1[45]:\d\d left for Spring 1901 movement$"), timeout=WAIT_MS
    )
    expect(seat.locator("#deadline-rule")).to_contain_text("answered with your seat's fallback")
    page.click("#deadline-clear")
    expect(seat.locator("#deadline")).to_be_hidden(timeout=WAIT_MS)
    assert not errors, errors
    seat.context.close()
    page.context.close()
