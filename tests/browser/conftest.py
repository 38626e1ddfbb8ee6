"""Real headless Chromium (Debian's `chromium`, driven by PyPI playwright; never a downloaded
browser) against a real `langgraph dev` on loopback."""

from __future__ import annotations

import shutil

import pytest

from tests.server.support import game_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def pytest_collection_modifyitems(config, items):
    if CHROMIUM:
        return
    skip = pytest.mark.skip(
        reason="chromium is not installed (apt-get install -y chromium); browser tests need it"
    )
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    with game_server(tmp_path_factory.mktemp("wargraph-browser-server")) as srv:
        yield srv


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # a loaded 2-core machine (CI, other suites at once) can take longer than Playwright's 5 s
    # default to render a step; a page that never shows what is expected still fails
    expect.set_options(timeout=20_000)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            yield chromium
        finally:
            chromium.close()
