"""A seal over everything a checkpoint is, on both stores: a checkpoint row moved to another
thread (one character of `thread_id`), a re-pointed `parent_checkpoint_id`, an older blob of
the same channel or another game's blob or write swapped in, are each refused as damage,
never loaded as a game; a wrong WARGRAPH_STORE_KEY is its own error before anything is
written; `wargraph games` lists a damaged game as damaged and the others as usual."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import build_for, list_runs, load_run, play
from wargraph.store.errors import KEY_ENV, DamagedCheckpoint, StoreError
from wargraph.store.saver import open_saver

A, B = "game-a", "game-b"  # one character apart


def _play(db: str, thread: str, seed: int) -> None:
    play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=seed, humans=["crimsonia"]),
        db=db,
        thread_id=thread,
    )


@pytest.fixture
def two_games(store_db):
    """Two games stopped half-way (a human seat waits); A played last (its ids are newer)."""
    _play(store_db, B, 1)
    _play(store_db, A, 2)
    return store_db


def _sql(db: str, query: str, params: tuple = ()) -> list[tuple]:
    """Raw access to the store, as a careless or hostile user has it."""
    if db.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            cur = conn.execute(query.replace("?", "%s"), params)
            return list(cur.fetchall()) if cur.description else []
    with sqlite3.connect(db) as conn:
        return conn.execute(query, params).fetchall()


def _ids(db: str, thread: str) -> list[str]:
    """The thread's root checkpoint ids, newest first."""
    rows = _sql(
        db,
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
        " ORDER BY checkpoint_id DESC",
        (thread,),
    )
    return [r[0] for r in rows]


def _state(db: str, thread: str) -> dict[str, Any]:
    sc, _ = load_run(db, thread)
    with open_saver(db, create=False) as saver:
        saver.verify_thread(thread)  # as resume does
        graph = build_for(sc).compile(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": thread}}).values
    return json.loads(json.dumps(values, default=str))


def _refused(db: str, thread: str) -> str:
    with pytest.raises(DamagedCheckpoint) as refused:
        _state(db, thread)
    message = str(refused.value)
    assert "damaged" in message and "\n" not in message, message
    return message


def test_a_checkpoint_moved_to_another_thread_is_refused(two_games):
    db = two_games
    before = _state(db, B)
    latest = _ids(db, A)[0]
    _sql(
        db,
        "UPDATE checkpoints SET thread_id = ? WHERE thread_id = ? AND checkpoint_ns = ''"
        " AND checkpoint_id = ?",
        (B, A, latest),
    )
    _refused(db, B)  # B's latest checkpoint is now A's: not B's game
    _sql(db, "UPDATE checkpoints SET thread_id = ? WHERE checkpoint_id = ?", (A, latest))
    assert _state(db, B) == before


def test_a_repointed_parent_is_refused(two_games):
    db = two_games
    before = _state(db, A)
    ids = _ids(db, A)
    (parent,) = _sql(
        db,
        "SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
        (A, ids[0]),
    )[0]
    _sql(
        db,
        "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND checkpoint_id = ?",
        (ids[-1], A, ids[0]),
    )
    _refused(db, A)
    _sql(
        db,
        "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND checkpoint_id = ?",
        (parent, A, ids[0]),
    )
    assert _state(db, A) == before


def _swap(db: str, table: str, column: str, key: str, into: tuple, source: tuple) -> tuple:
    """Copy one row's blob (and its type) over another's in the same table; returns what to
    put back with `_put_back`."""
    where = " AND ".join(f"{k} = ?" for k in key.split(","))
    kept = _sql(db, f"SELECT type, {column} FROM {table} WHERE {where}", into)[0]
    other = _sql(db, f"SELECT type, {column} FROM {table} WHERE {where}", source)[0]
    _sql(db, f"UPDATE {table} SET type = ?, {column} = ? WHERE {where}", (*other, *into))
    return (table, column, where, kept, into)


def _put_back(db: str, swapped: tuple) -> None:
    table, column, where, kept, into = swapped
    _sql(db, f"UPDATE {table} SET type = ?, {column} = ? WHERE {where}", (*kept, *into))


def test_another_games_write_is_refused(two_games):
    """The latest write on the record (a DeltaChannel is rebuilt from writes) replaced by the
    other game's: both authentic, but not this game's."""
    db = two_games
    before = _state(db, A)
    column = "blob" if db.startswith("postgresql") else "value"
    table = "checkpoint_writes" if db.startswith("postgresql") else "writes"
    keys = {}
    for thread in (A, B):
        keys[thread] = _sql(
            db,
            f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM {table}"
            " WHERE thread_id = ? AND checkpoint_ns = '' AND channel = 'events'"
            " AND checkpoint_id < ? ORDER BY checkpoint_id DESC LIMIT 1",
            (thread, _ids(db, thread)[0]),
        )[0]
    key = "thread_id,checkpoint_ns,checkpoint_id,task_id,idx"
    swapped = _swap(db, table, column, key, keys[A], keys[B])
    _refused(db, A)
    _put_back(db, swapped)
    assert _state(db, A) == before


def _channel_blobs(db: str, thread: str) -> dict[str, list[str]]:
    rows = _sql(
        db,
        "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = ? AND checkpoint_ns = ''"
        " AND blob IS NOT NULL ORDER BY channel, version",
        (thread,),
    )
    out: dict[str, list[str]] = {}
    for channel, version in rows:
        out.setdefault(channel, []).append(version)
    return out


@pytest.mark.parametrize("source", ["older version", "other game"])
def test_a_swapped_postgres_blob_is_refused(two_games, source):
    """PostgreSQL keeps each channel's value in checkpoint_blobs, by version: an older blob of
    the same channel, or another game's blob of it, in place of the current one."""
    db = two_games
    if not db.startswith("postgresql"):
        pytest.skip("SQLite keeps a checkpoint's values in its own blob (sealed with its id)")
    before = _state(db, A)
    (versions,) = _sql(
        db,
        "SELECT checkpoint -> 'channel_versions' FROM checkpoints WHERE thread_id = ?"
        " AND checkpoint_id = ?",
        (A, _ids(db, A)[0]),
    )[0]
    mine, theirs = _channel_blobs(db, A), _channel_blobs(db, B)
    if source == "older version":
        channel = next(c for c, v in mine.items() if len(v) > 1 and versions.get(c) == v[-1])
        src = (A, "", channel, mine[channel][0])
    else:
        channel = next(c for c in mine if c in theirs and versions.get(c) in mine[c])
        src = (B, "", channel, theirs[channel][-1])
    key = "thread_id,checkpoint_ns,channel,version"
    into = (A, "", channel, versions[channel])
    swapped = _swap(db, "checkpoint_blobs", "blob", key, into, src)
    _refused(db, A)
    _put_back(db, swapped)
    assert _state(db, A) == before


def _count(db: str) -> int:
    return _sql(db, "SELECT count(*) FROM checkpoints")[0][0]


def test_a_wrong_key_is_its_own_error_before_anything_is_written(store_db, monkeypatch):
    _play(store_db, A, 1)
    rows = _count(store_db)
    monkeypatch.setenv(KEY_ENV, "not the key of this store")
    # in-process, after earlier commands: each command starts with no game named
    r = CliRunner().invoke(app, ["games", "--db", store_db], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "the key does not match this store" in r.output, r.output
    assert "damaged" not in r.output and "backup" not in r.output, r.output
    with pytest.raises(StoreError, match="the key does not match this store"):
        _play(store_db, B, 2)
    assert _count(store_db) == rows
    monkeypatch.delenv(KEY_ENV)
    assert list_runs(store_db) == [A] and _state(store_db, A)["round"] >= 1


def test_a_store_made_with_an_outside_key_needs_that_key(store_db, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "first key")
    _play(store_db, A, 1)
    rows = _count(store_db)
    monkeypatch.setenv(KEY_ENV, "second key")
    with pytest.raises(StoreError, match="the key does not match this store"):
        _play(store_db, B, 2)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(StoreError, match="key is kept outside it; set WARGRAPH_STORE_KEY"):
        list_runs(store_db)
    assert _count(store_db) == rows
    monkeypatch.setenv(KEY_ENV, "first key")
    assert list_runs(store_db) == [A]


def test_games_lists_a_damaged_game_and_goes_on(two_games):
    db = two_games
    ids = _ids(db, A)
    _sql(
        db,
        "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND checkpoint_id = ?",
        (ids[-1], A, ids[0]),
    )
    r = CliRunner().invoke(app, ["games", "--db", db], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = {
        line.split("│")[1].strip(): line for line in r.output.splitlines() if "│ game-" in line
    }
    assert set(lines) == {A, B}, r.output
    assert "damaged" in lines[A] and "damaged" not in lines[B], r.output
    assert "waiting" in lines[B] and "Zafaristan" in lines[B], r.output


def test_an_experiment_plays_the_other_games_of_a_store_with_a_damaged_one(store_db, tmp_path):
    """Two games stopped after their second step; one is then damaged. The next run resumes
    and finishes the other, and reports the damaged one as a crashed game."""
    from wargraph.evals.experiment import Hooks, load_experiment, plan_games, run_experiment

    exp = load_experiment(
        {
            "name": "tiny",
            "scenario": "azuristan_crimsonia",
            "set": {"rounds": 1, "questions": []},
            "runs": 2,
            "model": "scripted",
            "concurrency": 2,
            "grid": {"persona": {"dove": {"players.azuristan.persona": "dove"}}},
            "questions": [{"id": "conflict", "text": "Did armed conflict occur?"}],
        }
    )
    steps: dict[str, int] = {}

    def stop_early(plan, name):
        steps[plan.thread_id] = steps.get(plan.thread_id, 0) + 1
        if steps[plan.thread_id] == 2:
            raise RuntimeError("stopped for the test")

    out = tmp_path / "exp"
    first = run_experiment(exp, out, db=store_db, show_progress=False, hooks=Hooks(node=stop_early))
    threads = [p.thread_id for p in plan_games(exp)]
    assert first.counts["crashed"] == len(threads) == 2
    damaged = threads[0]
    ids = _ids(store_db, damaged)
    _sql(
        store_db,
        "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE thread_id = ? AND checkpoint_id = ?",
        (ids[-1], damaged, ids[0]),
    )
    again = run_experiment(exp, out, db=store_db, show_progress=False)
    assert again.counts["resumed"] == 1 and again.counts["crashed"] == 1, again.counts
    assert "damaged" in again.report.read_text()
