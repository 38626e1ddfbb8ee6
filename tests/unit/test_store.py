"""`--db` names a store: a SQLite path or a postgresql:// URL, opened the same way sync and
async; a store that cannot be used is one clear line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.aio import run
from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import build_for, load_run, play
from wargraph.store.errors import StoreError
from wargraph.store.saver import open_async_saver, open_saver


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

    values = run(read())
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


def test_blobs_are_bound_aes_gcm_and_older_blobs_still_load_where_they_may():
    """New blobs: AES-GCM with what they belong to as associated data (a changed binding
    fails the tag). Blobs of earlier versions (AES-GCM without it, AES-EAX) load in stores
    from before bindings, and are refused in a store created with them (a swapped-in blob)."""
    import os

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from wargraph.store.crypto import (
        BOUND,
        STRICT,
        AuthenticatedSerde,
        _Compressed,
        bound_to,
        seeing_bindings,
    )
    from wargraph.store.errors import DamagedCheckpoint

    key = os.urandom(32)
    serde = AuthenticatedSerde(key, strict=BOUND, where="test.sqlite")
    value = {"events": ["a long text " * 40], "round": 3}
    with bound_to("blob", "t1", "", "events", "7"):
        typ, blob = serde.dumps_typed(value)
    assert typ.endswith("+aesgcm2")
    with seeing_bindings([]) as seen:
        assert serde.loads_typed((typ, blob)) == value
    assert seen == [("blob", "t1", "", "events", "7")]
    flipped = blob[:20] + bytes([blob[20] ^ 1]) + blob[21:]  # inside the binding
    with pytest.raises(DamagedCheckpoint):
        serde.loads_typed((typ, flipped))
    # blobs earlier versions wrote: AES-GCM without associated data, AES-EAX (pycryptodome)
    nonce = os.urandom(12)
    plain = _Compressed(JsonPlusSerializer()).dumps_typed(value)
    gcm = (plain[0] + "+aesgcm", nonce + AESGCM(key).encrypt(nonce, plain[1], None))
    old = EncryptedSerializer.from_pycryptodome_aes(_Compressed(JsonPlusSerializer()), key=key)
    eax = old.dumps_typed(value)
    assert eax[0].endswith("+aes")
    before = AuthenticatedSerde(key, strict=STRICT, where="test.sqlite")
    for typ, blob in (gcm, eax):
        assert before.loads_typed((typ, blob)) == value
        with pytest.raises(DamagedCheckpoint, match="not bound"):
            serde.loads_typed((typ, blob))
