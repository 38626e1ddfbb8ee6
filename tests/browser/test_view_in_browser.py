"""`wargraph view` pages in real headless Chromium: a scripted Diplomacy game (map, seat columns,
keyboard), a crisis with a canary secret (only in its own seat's column), markup in an answer
(shown as text, never run), and a Diplomacy game to 1910 (opens fast, stays small). Any console
error or page error fails the test."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.browser.test_play_in_browsers import _shot
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.view import write_view

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CANARY = "CANARY-9b2c-CRIMSON-EYES-ONLY"
POWERS = ["AUSTRIA", "ENGLAND", "FRANCE", "GERMANY", "ITALY", "RUSSIA", "TURKEY"]


def scripted_game(folder: Path, scenario: str, overrides: list[str]) -> Path:
    play(
        scenario,
        overrides=overrides,
        context=GameContext(model="scripted"),
        db=str(folder / "games.sqlite"),
        out_dir=folder / "run",
    )
    return write_view(folder / "run")


class Page:
    """A page that records every console error and page error."""

    def __init__(self, browser, url: str):
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        started = time.perf_counter()
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=20_000)
        self.opened_s = time.perf_counter() - started

    def close(self) -> None:
        self.context.close()
        assert not self.errors, f"JavaScript errors: {self.errors}"


@pytest.fixture(scope="module")
def diplomacy(tmp_path_factory) -> Path:
    return scripted_game(tmp_path_factory.mktemp("dip"), "diplomacy", ["diplomacy.max_year=1901"])


def test_diplomacy_map_seat_columns_and_keys(browser, diplomacy, tmp_path):
    from playwright.sync_api import expect

    v = Page(browser, diplomacy.as_uri())
    page = v.page
    expect(page.locator("#title")).to_have_text("Diplomacy, Spring 1901")
    columns = page.locator(".seat")
    expect(columns).to_have_count(7)  # the seven powers; the secretary has nothing here
    assert [columns.nth(i).get_attribute("data-seat") for i in range(7)] == POWERS
    expect(page.locator("#idle-seats")).to_have_text("Nothing in this phase for: secretary")
    # it opens on the first round (the setup is one step back)
    expect(page.locator(".phase-head h2")).to_have_text("Round 1 · S1901M · negotiate")
    played = json.loads((diplomacy.parent / "record.json").read_text())
    expect(page.locator(".replay-cmd")).to_have_text(  # the store the game was played in
        f"wargraph replay --db {played['db']} --thread {played['thread_id']} --phase S1901M --runs 3"
    )
    page_map = page.locator("img.map")
    expect(page_map).to_be_visible()
    # the map is drawn (a data URL decodes after the image is placed: wait for it)
    page.wait_for_function(
        "() => { const i = document.querySelector('img.map'); return i && i.complete"
        " && i.naturalWidth > 500; }"
    )
    expect(page.locator(".panel-table").nth(1)).to_be_attached()  # orders and results, centres
    _shot(page, tmp_path, "view_diplomacy_s1901m")
    picture = page_map.screenshot()
    assert len(picture) > 20_000, "the map's picture holds a drawing, not a blank box"

    # messages threaded by pair in a seat's column; the prompt opens on demand, quotes marked
    expect(page.locator("[data-seat='FRANCE'] .thread").first).to_be_visible()
    page.locator("[data-seat='FRANCE'] details.prompt summary").first.click()
    # the prompt's lines are drawn when it opens: wait for them (more than five quoted lines)
    expect(page.locator("[data-seat='FRANCE'] .ln.quoted").nth(5)).to_be_attached()

    # keyboard: forward, back, the tabs
    page.keyboard.press("j")
    expect(page.locator(".phase-head h2")).to_contain_text("summarize")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("k")
    expect(page.locator(".phase-head h2")).to_have_text("Setup")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("3")
    expect(page.locator("#pane-costs table").first).to_contain_text("FRANCE")
    # what each seat's views showed of the texts given to it (issue 39): the small profile's
    # lean view shortens Diplomacy's talks and diaries, and the page says so
    coverage = page.locator("#coverage")
    expect(coverage).to_contain_text("FRANCE")
    expect(coverage.locator("tr", has_text="the game")).to_contain_text("%")
    expect(coverage.locator("tr", has_text="FRANCE")).to_contain_text("small")
    page.keyboard.press("2")
    expect(page.locator("#pane-knew table.knew tbody tr").first).to_be_visible()
    page.locator("#pane-knew table.knew tbody tr").first.click()
    expect(page.locator("#knowing")).to_contain_text("Who knew")
    _shot(page, tmp_path, "view_diplomacy_who_knew")
    # the seat filter hides a column
    page.keyboard.press("Escape")
    page.locator("#seat-filter input[data-seat='TURKEY']").uncheck()
    expect(page.locator(".seat")).to_have_count(6)
    v.close()


def test_crisis_canary_only_in_its_own_seat(browser, tmp_path):
    view = scripted_game(
        tmp_path,
        "azuristan_crimsonia",
        [f"players.crimsonia.secrets=['{CANARY}']", "questions=[]"],
    )
    v = Page(browser, view.as_uri())
    page = v.page
    page.keyboard.press("p")  # every prompt drawn and open
    phases = page.locator(".tl-btn").count()
    found_in = []
    for n in range(phases):
        page.locator(".tl-btn").nth(n).click()
        holders = page.evaluate(
            """canary => {
              const out = [];
              const walk = document.createTreeWalker(document.getElementById('pane-phases'), NodeFilter.SHOW_TEXT);
              while (walk.nextNode()) {
                if (walk.currentNode.nodeValue.includes(canary)) {
                  const col = walk.currentNode.parentElement.closest('[data-seat]');
                  out.push(col ? col.dataset.seat : 'outside any seat');
                }
              }
              return out;
            }""",
            CANARY,
        )
        found_in += holders
        if n == 1:
            _shot(page, tmp_path, "view_crisis_round1")
    assert found_in, "the canary is shown in its seat's column (its brief and prompts)"
    assert set(found_in) == {"crimsonia"}, found_in
    v.close()


def test_markup_in_an_answer_is_shown_as_text(browser, tmp_path):
    src = scripted_game(tmp_path / "g", "azuristan_crimsonia", ["questions=[]"]).parent
    record = json.loads((src / "record.json").read_text())
    evil = "<script>window.pwned=1</script><img src=x onerror='window.pwned=2'>"
    plan = next(e for e in record["events"] if e["kind"] == "plan")
    plan["text"] = evil
    run = tmp_path / "evil"
    run.mkdir()
    (run / "record.json").write_text(json.dumps(record))
    (run / "trace.jsonl").write_text((src / "trace.jsonl").read_text())
    v = Page(browser, write_view(run).as_uri())
    page = v.page
    page.locator(".tl-btn", has_text="order").first.click()
    shown = page.locator(f"[data-seat='{plan['author']}'] .event-text", has_text="window.pwned")
    assert shown.first.text_content() == evil
    assert page.evaluate("window.pwned") is None
    assert page.locator("#pane-phases script, #pane-phases img:not(.map)").count() == 0
    v.close()


def test_a_game_with_no_phase_yet_opens_and_says_so(browser, diplomacy, tmp_path):
    """A game just started (a facilitator opens it at once) has no events yet: the page is
    ready, says so, and (served) follows the game until its first phase."""
    from playwright.sync_api import expect

    run = tmp_path / "fresh"
    run.mkdir()
    record = json.loads((diplomacy.parent / "record.json").read_text())
    (run / "record.json").write_text(json.dumps({**record, "events": []}))
    (run / "trace.jsonl").write_text("")
    v = Page(browser, write_view(run).as_uri())
    expect(v.page.locator("#notice")).to_contain_text("no phases")
    expect(v.page.locator("#seat-filter input")).to_have_count(8)
    v.close()


@pytest.mark.slow
def test_a_game_to_1910_opens_and_stays_small(browser, tmp_path):
    # how fast it opens is measured, not asserted (README: 0.5-1 s here); a test checks it opens
    view = scripted_game(tmp_path, "diplomacy", ["diplomacy.max_year=1910"])
    size = view.stat().st_size
    v = Page(browser, view.as_uri())
    page = v.page
    assert size < 3_000_000, f"{size} bytes"
    page.keyboard.press("End")
    expect_text = page.locator(".phase-head h2").text_content()
    assert "1910" in expect_text
    for _ in range(20):
        page.keyboard.press("ArrowLeft")
    from playwright.sync_api import expect

    expect(page.locator(".phase-head h2")).not_to_contain_text("1910")  # 20 steps back: 1909
    _shot(page, tmp_path, "view_diplomacy_1910")
    v.close()


@pytest.mark.server
def test_the_server_serves_the_view_behind_the_facilitators_token(server, browser, tmp_path):
    """A game on the server, one seat a person's: the view follows it live (the facilitator's
    token only) and shows the person's answer once given."""
    from playwright.sync_api import expect

    from tests.server.support import bearer, start_game, token_of, waiting_for, web

    with web(server) as client:
        started = start_game(server, client, ["crimsonia"])
        tid = started["thread_id"]
        waiting_for(server, client, tid, {"crimsonia"})
        seat = token_of(started["links"]["crimsonia"])
        path = f"/wargraph/graphs/{tid}/view-data"
        assert client.get(path).status_code == 401
        assert client.get(path, headers=bearer(seat)).status_code == 403
        page = client.get("/view")
        assert (
            page.status_code == 200
            and "'unsafe-inline'" not in page.headers["content-security-policy"]
        )
        assert "script-src 'sha256-" in page.headers["content-security-policy"]

        v = Page(browser, f"{server.url}/view#token={server.facilitator_token}&thread={tid}")
        expect(v.page.locator("#title")).to_have_text(
            "The Zafaristan crisis: Azuristan and Crimsonia"
        )
        expect(v.page.locator("#seat-filter input")).to_have_count(3)
        assert "not finished" in v.page.locator("#subtitle").text_content()
        answer = "CR-VIEW-LIVE: talks at the border, volunteers stay home."
        asked = waiting_for(server, client, tid, {"crimsonia"})["seats"]
        ask_id = next(s["ask_id"] for s in asked if s["seat"] == "crimsonia")
        r = client.post(
            "/wargraph/seat/answer",
            headers=bearer(seat),
            json={"ask_id": ask_id, "answer": {"plan": answer}},
        )
        assert r.status_code == 200, r.text
        # the page reads the game again by itself: round 1's adjudication appears
        adjudicate = v.page.locator(".tl-btn", has_text="adjudicate")
        expect(adjudicate.first).to_be_visible(timeout=30_000)
        v.page.locator(".tl-btn", has_text="order").first.click()
        expect(
            v.page.locator("[data-seat='crimsonia'] .event-text", has_text=answer)
        ).to_be_visible()
        expect(v.page.locator(".seat[data-seat='azuristan']")).not_to_contain_text(answer)
        _shot(v.page, tmp_path, "view_served_live")
        v.close()


@pytest.mark.server
def test_the_facilitator_page_links_the_view(server, browser):
    from playwright.sync_api import expect

    from tests.server.support import start_game, web

    with web(server) as client:
        tid = start_game(server, client, [])["thread_id"]
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.goto(f"{server.url}/facilitator#token={server.facilitator_token}")
    page.locator(f"tr[data-thread='{tid}']").click()
    link = page.locator("#game-view")
    expect(link).to_be_visible(timeout=20_000)
    with ctx.expect_page() as opened:
        link.click()
    view = opened.value
    view.wait_for_selector("body[data-ready='1']", timeout=20_000)
    expect(view.locator("#seat-filter input")).to_have_count(3)
    ctx.close()
