"""A step that fails while a sibling task still runs: the sibling's late write is refused by the
shut-down executor, and that refusal is not printed as a traceback beside the real error."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import build_for


def _late_write_after_shutdown() -> None:
    """What LangGraph's runner does: a task's done-callback submits its write to the executor,
    which the failed step has already shut down."""
    pool = ThreadPoolExecutor(2)
    release = threading.Event()
    task = pool.submit(release.wait, 5)
    task.add_done_callback(lambda _: pool.submit(print, "write"))
    pool.shutdown(wait=False)
    release.set()
    pool.shutdown(wait=True)


def test_a_built_game_silences_the_late_sibling_write(caplog):
    build_for(load_scenario("blotto"))  # building any game installs the filter
    with caplog.at_level(logging.ERROR, logger="concurrent.futures"):
        _late_write_after_shutdown()
        logging.getLogger("concurrent.futures").error("something else went wrong")
    assert [r.getMessage() for r in caplog.records] == ["something else went wrong"]


def test_without_the_filter_the_traceback_is_logged(caplog):
    logger = logging.getLogger("concurrent.futures")
    kept = list(logger.filters)
    for f in kept:
        logger.removeFilter(f)
    try:
        with caplog.at_level(logging.ERROR, logger="concurrent.futures"):
            _late_write_after_shutdown()
    finally:
        for f in kept:
            logger.addFilter(f)
    assert any("after shutdown" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
