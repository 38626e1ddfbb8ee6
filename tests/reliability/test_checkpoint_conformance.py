"""LangGraph's checkpoint conformance suite (`langgraph-checkpoint-conformance`) against
wargraph's saver, as `open_async_saver` opens it, on SQLite and on PostgreSQL.

The suite is driven as its package means it to be: a `@checkpointer_test` factory that yields a
fresh saver (here on a fresh store: a new SQLite file, a new PostgreSQL schema) for each
capability, and `validate`, which runs each capability's checks and reports every check by name.
Every check must pass except the DELIBERATE ones below, where wargraph's saver differs from
LangGraph's defaults on purpose (see `wargraph.store.pruning` and `wargraph.store.saver`); those must fail
for the reason given, so a change that makes the saver conform (or fail otherwise) shows here.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from tests.aio import run
from tests.stores import params, store
from wargraph.store.saver import Saver, open_async_saver

# (capability, check) -> (why wargraph differs, a phrase of the failure that shows it is that)
DELIBERATE: dict[tuple[str, str], tuple[str, str]] = {
    ("delete_for_runs", "test_delete_for_runs_single"): (
        "a later run's checkpoint continues from what the deleted run wrote; deleting it would "
        "cut the game's history and record, so wargraph refuses (HistoryInUse) and deletes "
        "nothing of that game: delete the later runs first",
        "HistoryInUse",
    ),
    ("delete_for_runs", "test_delete_for_runs_multiple"): (
        "as above: the runs are deleted in the order given, and the first continues into the next",
        "HistoryInUse",
    ),
    ("copy_thread", "test_copy_thread_preserves_metadata"): (
        "every checkpoint's seal (metadata `wargraph_seal`) authenticates its thread, so a "
        "copy carries a new seal for the new thread (a checkpoint moved between threads by "
        "other means is refused); every other metadata key is copied as it is",
        "wargraph_seal",
    ),
    ("prune", "test_prune_keep_latest_single_thread"): (
        "keep_latest keeps the latest checkpoint and its ancestors back to one that stores every "
        "DeltaChannel whole (LangGraph's rule for DeltaChannel threads), and the game's first "
        "checkpoint: so every kept checkpoint still reads as it did",
        "assert len(results) == 1",
    ),
    ("prune", "test_prune_keep_latest_multiple_threads"): (
        "as above, in each thread",
        "assert len(results) == 1",
    ),
    ("prune", "test_prune_keep_latest_across_namespaces"): (
        "as above, in each namespace",
        "assert len(results) == 1",
    ),
}


def _run(kind: str, folder: Path, capability: str) -> list[tuple[str, bool, str]]:
    """Every check of one capability against a fresh wargraph store: (check, passed, error)."""

    @checkpointer_test(name=f"wargraph-{kind}")
    async def wargraph_saver() -> AsyncIterator[Saver]:
        with store(kind, folder / uuid.uuid4().hex) as db:
            if kind == "sqlite":
                Path(db).parent.mkdir(parents=True, exist_ok=True)
            async with open_async_saver(db) as saver:
                yield saver

    checks: list[tuple[str, bool, str]] = []
    progress = ProgressCallbacks(
        on_test_result=lambda cap, name, ok, err: checks.append((name, ok, err or ""))
    )
    report = run(validate(wargraph_saver, capabilities={capability}, progress=progress))
    result = report.results[capability]
    assert result.detected, f"{capability}: the saver does not implement it"
    return checks


@pytest.mark.parametrize("capability", [c.value for c in Capability])
@pytest.mark.parametrize("kind", params())
def test_conformance(kind: str, capability: str, tmp_path: Path) -> None:
    checks = _run(kind, tmp_path, capability)
    assert checks, f"{capability}: no checks ran"
    unexpected = [
        f"{name}: {err.strip().splitlines()[-1] if err.strip() else 'failed'}"
        for name, ok, err in checks
        if not ok and (capability, name) not in DELIBERATE
    ]
    assert not unexpected, f"{kind} {capability}: " + "; ".join(unexpected)
    for name, ok, err in checks:
        if (capability, name) in DELIBERATE:
            why, shows = DELIBERATE[(capability, name)]
            assert not ok, f"{name} passes now: remove it from DELIBERATE ({why})"
            assert shows in err, f"{name} fails for another reason than the deliberate one: {err}"


def test_every_deliberate_difference_names_a_check_of_the_suite() -> None:
    """A renamed or removed check in a new suite release must not leave a stale entry."""
    import inspect

    from langgraph.checkpoint.conformance import spec

    names = {
        (cap.value, n)
        for cap, mod in (
            (Capability.DELETE_FOR_RUNS, spec.test_delete_for_runs),
            (Capability.COPY_THREAD, spec.test_copy_thread),
            (Capability.PRUNE, spec.test_prune),
        )
        for n, fn in inspect.getmembers(mod, inspect.iscoroutinefunction)
        if n.startswith("test_")
    }
    assert set(DELIBERATE) <= names
