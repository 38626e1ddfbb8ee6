"""`--db` names a store: a SQLite path or a postgresql:// URL, opened the same way sync and
async; a store that cannot be used is one clear line."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.context import GameContext
from wargraph.runner import build_for, load_run, play
from wargraph.scenario import load_scenario
from wargraph.store import StoreError, open_async_saver, open_saver


def test_a_game_read_back_async_equals_the_game_written_sync(store_db):
    result = play(
        "summit",
        overrides=["rounds=1"],
        context=GameContext(model="scripted", seed=2),
        db=store_db,
        thread_id="both",
    )
    sc, ctx = load_run(store_db, "both")
    assert ctx.seed == 2 and sc.title == load_scenario("summit").title

    async def read() -> dict:
        async with open_async_saver(store_db) as saver:
            graph = build_for(sc).compile(checkpointer=saver)
            return (await graph.aget_state({"configurable": {"thread_id": "both"}})).values

    # in a thread of its own: an earlier test's sync client may leave a loop running here
    with ThreadPoolExecutor(1) as pool:
        values = pool.submit(asyncio.run, read()).result()
    assert values["events"] == result.values["events"]


@pytest.mark.parametrize(
    "db, message",
    [
        ("postgresql://postgres@127.0.0.1:1/test", "cannot reach the PostgreSQL server"),
        ("postgresql://postgres@[::1:5432/test", "not a valid PostgreSQL URL"),
        (
            "postgresql://postgres@127.0.0.1:5432/test?sslmode=bogus",
            'invalid sslmode value: "bogus"',
        ),
    ],
)
def test_a_store_that_cannot_be_used_is_one_clear_line(db, message):
    with pytest.raises(StoreError, match=message), open_saver(db):
        pass
    r = CliRunner().invoke(app, ["resume", "--thread", "t", "--db", db], env={"COLUMNS": "400"})
    assert r.exit_code == 2 and message in r.output and "unexpected" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 2  # "thread: t" and the error


def test_a_sqlite_path_that_is_not_a_store(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="cannot use the checkpoint database"), open_saver(junk):
        pass
    with pytest.raises(StoreError, match="is a folder"), open_saver(tmp_path):
        pass


def test_blobs_are_aes_gcm_and_older_eax_blobs_still_load():
    import os

    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from wargraph.store import DamagedCheckpoint, _AuthenticatedSerde, _Compressed

    key = os.urandom(32)
    serde = _AuthenticatedSerde(key, strict=True, where="test.sqlite")
    value = {"events": ["a long text " * 40], "round": 3}
    typ, blob = serde.dumps_typed(value)
    assert typ.endswith("+aesgcm") and serde.loads_typed((typ, blob)) == value
    flipped = blob[:20] + bytes([blob[20] ^ 1]) + blob[21:]
    with pytest.raises(DamagedCheckpoint):
        serde.loads_typed((typ, flipped))
    # a blob an earlier wargraph wrote (AES-EAX through pycryptodome)
    old = EncryptedSerializer.from_pycryptodome_aes(_Compressed(JsonPlusSerializer()), key=key)
    typ, blob = old.dumps_typed(value)
    assert typ.endswith("+aes") and serde.loads_typed((typ, blob)) == value
