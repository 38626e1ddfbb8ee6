"""Copying a game to a new thread through the saver (`copy_thread`, and `acopy_thread`, which
langgraph-api calls for POST /threads/<id>/copy), on SQLite and PostgreSQL: the copy is a game
of its own (sealed, bound, its run and lease), reads as its source did, plays on apart from it,
and the source is only read, under its lease."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.aio import run
from tests.unit.test_pruning import (
    SEAT,
    _answer,
    _answer_all,
    _config,
    _counting,
    _events,
    _readings,
    _rows,
    _start,
    _state,
    scripted_games,
)
from wargraph.kernel.context import GameContext
from wargraph.runs.listing import list_games
from wargraph.runs.runner import check_scenario, list_runs, load_run, play, resume
from wargraph.store.crypto import (
    BOUND,
    LEGACY,
    STRICT,
    AuthenticatedSerde,
    bound_to,
    seeing_bindings,
)
from wargraph.store.errors import DamagedCheckpoint, GameHeld, StoreError, is_url
from wargraph.store.lease import holders, lease
from wargraph.store.saver import open_async_saver, open_saver
from wargraph.view import stored_record


def _status(db: str, thread_id: str) -> str:
    (row,) = [r for r in list_games(db) if r.thread_id == thread_id]
    return row.status


def _every_checkpoint(db: str, thread_id: str) -> dict[tuple[str, str], Any]:
    """Each checkpoint of every namespace, as the store reads it (checked against its seal),
    with its pending writes."""
    with open_saver(db, create=False) as saver:
        return {
            (
                t.config["configurable"]["checkpoint_ns"],
                t.config["configurable"]["checkpoint_id"],
            ): (
                t.checkpoint["channel_values"],
                t.checkpoint["channel_versions"],
                (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                sorted(map(repr, t.pending_writes or [])),
            )
            for t in saver.list({"configurable": {"thread_id": thread_id}})
        }


def test_a_copied_game_reads_as_its_source_and_plays_on_as_a_game_of_its_own(store_db, tmp_path):
    """A game waiting for its person, copied: every checkpoint of every namespace reads as the
    source's (at the same ids), the copy is listed and drawn, its scenario and settings are the
    source's (with no trace path: the source's folder stays the source's), and each game, played
    on apart, comes to the end a game never copied comes to."""
    sc = check_scenario("azuristan_crimsonia", {"rounds": 2})
    ctx = GameContext(model="scripted", seed=1, humans=[SEAT])
    whole = play(sc, context=ctx, db=store_db, thread_id="whole", human_io=_answer)
    out = tmp_path / "source"
    waiting = play(sc, context=ctx, db=store_db, thread_id="src", out_dir=out)
    assert waiting.interrupts and not waiting.finished
    before = _every_checkpoint(store_db, "src")
    files = {p.name: p.read_bytes() for p in out.iterdir()}

    with open_saver(store_db) as saver:
        saver.copy_thread("src", "cp")
        assert saver.verify_thread("cp")
        run = saver.run_of("cp")
    assert _every_checkpoint(store_db, "cp") == before == _every_checkpoint(store_db, "src")
    assert run is not None and run["copy_of"] == "src" and run["context"]["trace_path"] is None
    (src_sc, src_ctx), (cp_sc, cp_ctx) = load_run(store_db, "src"), load_run(store_db, "cp")
    assert cp_sc == src_sc and src_ctx.trace_path == str(out / "trace.jsonl")
    assert cp_ctx == GameContext(**{**vars(src_ctx), "trace_path": None})
    assert sorted(list_runs(store_db)) == ["cp", "src", "whole"]
    assert _status(store_db, "cp") == _status(store_db, "src") == "waiting for people"
    copies = {r.thread_id: r.copy_of for r in list_games(store_db)}
    assert copies == {"cp": "src", "src": "", "whole": ""}  # `wargraph games` says so
    record, trace, folder = stored_record(store_db, "cp")
    assert record["thread_id"] == "cp" and folder is None and trace == []
    assert record["events"] == stored_record(store_db, "src")[0]["events"]
    copied = _state(store_db, "cp")
    assert [i.id for i in copied.interrupts] == [i["id"] for i in waiting.interrupts]

    # its own lease: played while another process holds the source, to the end of a game
    # never copied; the source's files and checkpoints are as they were
    with lease(store_db, "src", command="resume"):
        finished = resume(db=store_db, thread_id="cp", human_io=_answer)
    assert finished.finished and finished.out_dir is None
    assert _events(finished.values) == _events(whole.values)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    assert _every_checkpoint(store_db, "src") == before
    assert _status(store_db, "src") == "waiting for people" and _status(store_db, "cp") == "done"

    own = resume(db=store_db, thread_id="src", human_io=_answer)  # and the source goes on
    assert own.finished and _events(own.values) == _events(whole.values)
    assert holders(store_db) == {}


def test_a_copy_with_delta_channels_reads_each_checkpoint_as_before(store_db):
    """A DeltaChannel is rebuilt from its last whole value and the writes since: the copy
    carries the whole history, so each of its checkpoints reads as the source's, and what one
    thread writes next is not the other's."""
    with open_saver(store_db) as saver:
        graph = _counting()(checkpointer=saver)
        graph.invoke({"n": 0}, _config("c"))
        old = list(graph.get_state_history(_config("c")))[6].config  # a branch from step 5
        graph.update_state(old, {"n": 100}, as_node="step")
        before = _readings(graph, "c")

        saver.copy_thread("c", "d")

        assert _readings(graph, "d") == before
        graph.update_state(_config("d"), {"n": 7}, as_node="step")
        assert _readings(graph, "c") == before
        assert graph.get_state(_config("d")).values["n"] == 7
        assert graph.get_state(_config("c")).values["n"] == 100


def test_deleting_the_sources_runs_or_thread_leaves_the_copy_as_it_is(store_db):
    """The copy's checkpoints are of no run of the source (langgraph-api deletes a run's
    checkpoints when a client deletes the run): deleting the source's runs, or the source,
    leaves the copy whole, and deleting the copy leaves the source."""
    with open_saver(store_db) as saver:
        graph, ctx = _start(saver, "g", "run-1")
        done = _answer_all(graph, ctx, "g", "run-2")
        saver.copy_thread("g", "c")
        saver.copy_thread("g", "e")
        rows = _rows(store_db, "c")

        saver.delete_for_runs(["run-2"])
        saver.delete_for_runs(["run-1"])
        assert _rows(store_db, "g") == {} and _rows(store_db, "c") == rows
        assert graph.get_state(_config("c")).values == done.values
        saver.delete_thread("c")
        assert _rows(store_db, "e") == rows
    assert list_runs(store_db) == ["e"] and _status(store_db, "e") == "done"


def test_a_source_another_process_holds_is_not_copied(store_db):
    """The source is read under its lease: a game another process holds is refused with the
    words the other paths use, nothing copied (the new thread holds nothing and is free), and
    copied once it is free. A new thread another process holds is refused too."""
    ctx = GameContext(model="scripted", seed=2)
    play("azuristan_crimsonia", overrides={"rounds": 1}, context=ctx, db=store_db, thread_id="g")
    with open_saver(store_db) as saver:
        held = r"game 'g' is in use by `resume`.*nothing was copied"
        with lease(store_db, "g", command="resume"), pytest.raises(GameHeld, match=held):
            saver.copy_thread("g", "c")
        assert _rows(store_db, "c") == {} and holders(store_db) == {}
        with lease(store_db, "c", command="play"), pytest.raises(GameHeld, match="'c' is in"):
            saver.copy_thread("g", "c")
        assert _rows(store_db, "c") == {}
        saver.copy_thread("g", "c")
    assert sorted(list_runs(store_db)) == ["c", "g"] and _status(store_db, "c") == "done"


def test_a_copy_asked_wrongly_is_one_clear_error(store_db):
    scripted_games(store_db, "g", "h")
    rows = _rows(store_db, "h")
    with open_saver(store_db) as saver:
        with pytest.raises(StoreError, match="thread 'h' already holds checkpoints"):
            saver.copy_thread("g", "h")
        assert _rows(store_db, "h") == rows
        with pytest.raises(ValueError, match="not to itself"):
            saver.copy_thread("g", "g")
        with pytest.raises(TypeError, match="must be a thread id"):
            saver.copy_thread("g", "")
        saver.copy_thread("never-played", "x")  # a thread with no checkpoint: nothing to copy
    assert _rows(store_db, "x") == {} and list_runs(store_db) == ["g", "h"]


def _damage_one_write(db: str, thread_id: str) -> None:
    """Flip one byte inside the ciphertext of one of a game's stored writes."""
    if is_url(db):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            (blob, task, idx, cid) = conn.execute(
                "SELECT blob, task_id, idx, checkpoint_id FROM checkpoint_writes"
                " WHERE thread_id = %s ORDER BY checkpoint_id DESC LIMIT 1",
                (thread_id,),
            ).fetchone()
            flipped = blob[:-3] + bytes([blob[-3] ^ 1]) + blob[-2:]
            conn.execute(
                "UPDATE checkpoint_writes SET blob = %s WHERE thread_id = %s AND task_id = %s"
                " AND idx = %s AND checkpoint_id = %s",
                (flipped, thread_id, task, idx, cid),
            )
        return
    import sqlite3

    with sqlite3.connect(db) as conn:
        (blob, rowid) = conn.execute(
            "SELECT value, rowid FROM writes WHERE thread_id = ? ORDER BY checkpoint_id DESC"
            " LIMIT 1",
            (thread_id,),
        ).fetchone()
        flipped = blob[:-3] + bytes([blob[-3] ^ 1]) + blob[-2:]
        conn.execute("UPDATE writes SET value = ? WHERE rowid = ?", (flipped, rowid))


def test_a_damaged_source_is_not_copied(store_db):
    """A damaged blob of the source fails its check while it is copied: refused, nothing
    written (a copy would be a game that cannot be read)."""
    with open_saver(store_db) as saver:
        _start(saver, "g", "run-1")  # waiting: a person's question among its writes
    _damage_one_write(store_db, "g")
    with open_saver(store_db) as saver, pytest.raises(DamagedCheckpoint, match="damaged"):
        saver.copy_thread("g", "c")
    assert _rows(store_db, "c") == {} and list_runs(store_db) == ["g"]


def test_acopy_thread_the_method_langgraph_api_calls(store_db):
    from langgraph.checkpoint.base import BaseCheckpointSaver

    with open_saver(store_db) as saver:
        graph = _counting()(checkpointer=saver)
        graph.invoke({"n": 0}, _config("c", "run-1"))
        before = _readings(graph, "c")

    async def copy() -> None:
        async with open_async_saver(store_db) as saver:
            for name in ("acopy_thread", "copy_thread"):
                assert getattr(type(saver), name) is not getattr(BaseCheckpointSaver, name)
            await saver.acopy_thread("c", "d")

    run(copy())
    with open_saver(store_db) as saver:
        assert _readings(_counting()(checkpointer=saver), "d") == before


def test_a_blob_is_bound_again_to_the_copy_with_its_bytes_unchanged():
    """`rebound`: checked against its tag and its binding, encrypted again bound to the new
    thread; blobs of earlier stores (unbound, untagged) get a binding where their store allows
    them, and are refused where it does not."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from wargraph.store.crypto import _Compressed

    key = os.urandom(32)
    serde = AuthenticatedSerde(key, strict=BOUND, where="test.sqlite")
    value = {"events": ["a long text " * 40], "round": 3}
    was, now = ("write", "src", "", "c1", "t"), ("write", "cp", "", "c1", "t")
    with bound_to(*was):
        typ, blob = serde.dumps_typed(value)
    new_typ, new_blob = serde.rebound((typ, blob), was, now)
    assert new_typ == typ and new_blob != blob
    with seeing_bindings([]) as seen:
        assert serde.loads_typed((new_typ, new_blob)) == value
    assert seen == [now]
    with pytest.raises(DamagedCheckpoint, match="another checkpoint or game"):
        serde.rebound((typ, blob), ("write", "other", "", "c1", "t"), now)
    flipped = blob[:-3] + bytes([blob[-3] ^ 1]) + blob[-2:]
    with pytest.raises(DamagedCheckpoint):
        serde.rebound((typ, flipped), was, now)
    assert serde.rebound(("empty", None), was, now) == ("empty", None)

    plain = _Compressed(JsonPlusSerializer()).dumps_typed(value)
    nonce = os.urandom(12)
    unbound = (plain[0] + "+aesgcm", nonce + AESGCM(key).encrypt(nonce, plain[1], None))
    with pytest.raises(DamagedCheckpoint, match="not bound"):
        serde.rebound(unbound, was, now)
    for guard in (STRICT, LEGACY):
        older = AuthenticatedSerde(key, strict=guard, where="test.sqlite")
        assert older.loads_typed(older.rebound(unbound, was, now)) == value
    untagged = JsonPlusSerializer().dumps_typed(value)
    with pytest.raises(DamagedCheckpoint, match="without its authentication tag"):
        AuthenticatedSerde(key, strict=STRICT, where="t").rebound(untagged, was, now)
    legacy = AuthenticatedSerde(key, strict=LEGACY, where="t")
    tagged = legacy.rebound(untagged, was, now)
    assert tagged[0].endswith("+aesgcm2") and serde.loads_typed(tagged) == value


def test_the_copy_keeps_no_path_of_the_sources_folder(tmp_path: Path, store_db):
    """A copy resumed into a folder of its own starts its own trace there; the source's folder
    is never claimed by the copy."""
    ctx = GameContext(model="scripted", seed=1, humans=[SEAT])
    src_out, cp_out = tmp_path / "src", tmp_path / "cp"
    play(
        "azuristan_crimsonia",
        overrides={"rounds": 1},
        context=ctx,
        db=store_db,
        thread_id="src",
        out_dir=src_out,
    )
    with open_saver(store_db) as saver:
        saver.copy_thread("src", "cp")
    traced = (src_out / "trace.jsonl").read_bytes()
    finished = resume(db=store_db, thread_id="cp", out_dir=cp_out, human_io=_answer)
    assert finished.finished and (cp_out / "record.json").is_file()
    # the question asked before the copy, asked again, is traced into the copy's own trace
    lines = (cp_out / "trace.jsonl").read_text().splitlines()
    assert any(json.loads(line)["role"] == SEAT for line in lines)
    assert (src_out / "trace.jsonl").read_bytes() == traced
    assert (cp_out / ".wargraph-thread").read_text().strip() == "cp"
    assert (src_out / ".wargraph-thread").read_text().strip() == "src"
    assert load_run(store_db, "cp")[1].trace_path is None  # the stored run is not changed


def test_a_game_of_a_store_from_before_runs_were_in_checkpoints_is_copied_with_its_run(tmp_path):
    """Stores of earlier versions kept a game's run in a table of its own (`wargraph_runs`):
    the copy gets it with its first checkpoint, as games are stored now."""
    import sqlite3

    db = str(tmp_path / "old.sqlite")
    ctx = GameContext(model="scripted", seed=2)
    play("azuristan_crimsonia", overrides={"rounds": 1}, context=ctx, db=db, thread_id="old")
    with open_saver(db) as saver:
        run = saver.run_of("old")
    assert run is not None
    with sqlite3.connect(db) as conn:  # the run moved back into the old table
        conn.execute("CREATE TABLE wargraph_runs (thread_id TEXT, scenario TEXT, context TEXT)")
        conn.execute(
            "INSERT INTO wargraph_runs VALUES (?, ?, ?)",
            ("old", json.dumps(run["scenario"]), json.dumps(run["context"])),
        )
        for rowid, meta in conn.execute("SELECT rowid, metadata FROM checkpoints").fetchall():
            found = json.loads(meta)
            for k in ("wargraph", "wargraph_run", "wargraph_mac"):
                found.pop(k, None)
            conn.execute(
                "UPDATE checkpoints SET metadata = ? WHERE rowid = ?",
                (json.dumps(found).encode(), rowid),
            )
    with open_saver(db) as saver:
        assert saver.run_of("old") == {"scenario": run["scenario"], "context": run["context"]}
        saver.copy_thread("old", "cp")
        copied = saver.run_of("cp")
    assert copied == {
        "scenario": run["scenario"],
        "context": {**run["context"], "trace_path": None},
        "copy_of": "old",
    }
    assert sorted(list_runs(db)) == ["cp", "old"] and _status(db, "cp") == "done"
