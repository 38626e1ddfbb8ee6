"""Under `pytest -n N --dist loadgroup` a test's xdist group reaches the scheduler: its node id ends
in `@group` (how pytest-xdist tells the controller), both for a group a test names and for the
groups tests/conftest.py gives by folder; the embedded model's tests are in no group (spread
over the workers)."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("suite-check")
def test_every_grouped_test_of_this_run_carries_its_group(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs only on a pytest-xdist worker under --dist loadgroup")
    assert request.node.nodeid.endswith("@suite-check"), request.node.nodeid
    wanted: dict[str, str] = {}
    for item in request.session.items:  # every test this run selected, as this worker collected it
        path = item.path.as_posix()
        if "/tests/server/" in path:
            wanted[item.nodeid] = "@server"
        elif "/tests/browser/" in path:
            wanted[item.nodeid] = "@browser"
    wrong = [nodeid for nodeid, suffix in wanted.items() if not nodeid.endswith(suffix)]
    assert not wrong, wrong[:5]
    model = [i.nodeid for i in request.session.items if i.get_closest_marker("model")]
    assert not [n for n in model if "@" in n], model[:5]


def test_no_test_starts_an_event_loop_in_the_workers_thread():
    """A test's coroutine runs through tests/aio.run (asyncio.run in a thread of its own): under
    pytest-xdist an earlier test of the same worker (Playwright's sync API) may leave a loop
    running in the worker's thread, where asyncio.run refuses, so a plain call fails only in
    some orders (the resumed old game did, once)."""
    import re
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    plain = re.compile(r"(?<![\w.])asyncio\.run\(|\bnew_event_loop\(\)\.run_until_complete\(")
    found = [
        f"{path.relative_to(tests)}:{n}"
        for path in sorted(tests.rglob("*.py"))
        if path.name != "aio.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if plain.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, found
