"""A damaged checkpoint is a clear error, never a silently different game, on both stores:
single bytes flipped across the latest checkpoint (its blob, its values stored outside the
blob, its id, the latest write the game's record is rebuilt from: the record is a DeltaChannel)
and the game's stored scenario each fail to load with DamagedCheckpoint, and the CLI says so in
one line."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import build_for, load_run, play
from wargraph.store.errors import DamagedCheckpoint
from wargraph.store.saver import open_saver

THREAD = "damaged"
FLIPS = 12


@pytest.fixture
def game(store_db):
    """A crisis game stopped half-way (a human seat waits), so resume has work to do."""
    play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=4, humans=["crimsonia"]),
        db=store_db,
        thread_id=THREAD,
    )
    return store_db


def _state(db: str) -> dict[str, Any]:
    sc, _ = load_run(db, THREAD)
    with open_saver(db) as saver:
        saver.verify_thread(THREAD)  # as resume does
        graph = build_for(sc).compile(checkpointer=saver)
        snap = graph.get_state({"configurable": {"thread_id": THREAD}})
        return json.loads(json.dumps({"values": snap.values, "next": snap.next}, default=str))


# --- raw access to the latest root checkpoint, to damage it (tests only) ---------------------


def _sqlite_fields(db: str) -> list[tuple[str, Callable, Callable]]:
    """(name, read, write) for the damageable fields of the latest root checkpoint."""
    conn = sqlite3.connect(db)
    rowid, cid = conn.execute(
        "SELECT rowid, checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
        " ORDER BY checkpoint_id DESC LIMIT 1",
        (THREAD,),
    ).fetchone()
    conn.close()

    def field(column: str, where: str, args: tuple):
        def read() -> bytes:
            with sqlite3.connect(db) as c:
                value = c.execute(f"SELECT {column} FROM {where}", args).fetchone()[0]
            return value.encode() if isinstance(value, str) else bytes(value)

        def write(data: bytes) -> None:
            with sqlite3.connect(db) as c:
                table = where.split()[0]
                cond = where.split(" WHERE ", 1)[1]
                value = data.decode("latin-1") if column == "checkpoint_id" else data
                c.execute(f"UPDATE {table} SET {column} = ? WHERE {cond}", (value, *args))

        return read, write

    with sqlite3.connect(db) as c:
        write_rowid = c.execute(
            "SELECT rowid FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND channel ="
            " 'events' AND checkpoint_id < ? ORDER BY checkpoint_id DESC LIMIT 1",
            (THREAD, cid),
        ).fetchone()[0]
    return [
        ("checkpoint blob", *field("checkpoint", "checkpoints WHERE rowid = ?", (rowid,))),
        ("events write", *field("value", "writes WHERE rowid = ?", (write_rowid,))),
        ("checkpoint id", *field("checkpoint_id", "checkpoints WHERE rowid = ?", (rowid,))),
    ]


def _postgres_fields(db: str) -> list[tuple[str, Callable, Callable]]:
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        cid = conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
            " ORDER BY checkpoint_id DESC LIMIT 1",
            (THREAD,),
        ).fetchone()[0]
        # the scenario's blob (stored once per version); the record has none of its own per
        # checkpoint: it is rebuilt from the writes (a DeltaChannel), damaged below
        versions = conn.execute(
            "SELECT checkpoint -> 'channel_versions' ->> 'spec' FROM checkpoints"
            " WHERE thread_id = %s AND checkpoint_id = %s",
            (THREAD, cid),
        ).fetchone()[0]
        write_key = conn.execute(
            "SELECT checkpoint_id, task_id, idx FROM checkpoint_writes WHERE thread_id = %s"
            " AND checkpoint_ns = '' AND channel = 'events' AND checkpoint_id < %s"
            " ORDER BY checkpoint_id DESC LIMIT 1",
            (THREAD, cid),
        ).fetchone()

    def blob_read() -> bytes:
        with psycopg.connect(db) as c:
            return bytes(
                c.execute(
                    "SELECT blob FROM checkpoint_blobs WHERE thread_id = %s AND channel = 'spec'"
                    " AND version = %s",
                    (THREAD, versions),
                ).fetchone()[0]
            )

    def blob_write(data: bytes) -> None:
        with psycopg.connect(db, autocommit=True) as c:
            c.execute(
                "UPDATE checkpoint_blobs SET blob = %s WHERE thread_id = %s AND channel = 'spec'"
                " AND version = %s",
                (data, THREAD, versions),
            )

    write_where = (
        " WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s AND task_id = %s"
        " AND idx = %s"
    )

    def write_read() -> bytes:
        with psycopg.connect(db) as c:
            row = c.execute(
                "SELECT blob FROM checkpoint_writes" + write_where, (THREAD, *write_key)
            )
            return bytes(row.fetchone()[0])

    def write_write(data: bytes) -> None:
        with psycopg.connect(db, autocommit=True) as c:
            c.execute(
                "UPDATE checkpoint_writes SET blob = %s" + write_where, (data, THREAD, *write_key)
            )

    def inline_read() -> bytes:  # the checkpoint's own JSON (numbers, strings inline)
        with psycopg.connect(db) as c:
            return (
                c.execute(
                    "SELECT checkpoint::text FROM checkpoints WHERE thread_id = %s AND checkpoint_id = %s",
                    (THREAD, cid),
                )
                .fetchone()[0]
                .encode()
            )

    def inline_write(data: bytes) -> None:
        with psycopg.connect(db, autocommit=True) as c:
            c.execute(
                "UPDATE checkpoints SET checkpoint = %s::jsonb WHERE thread_id = %s AND checkpoint_id = %s",
                (data.decode(), THREAD, cid),
            )

    current = [cid]

    def id_read() -> bytes:
        return current[0].encode()

    def id_write(data: bytes) -> None:
        with psycopg.connect(db, autocommit=True) as c:
            c.execute(
                "UPDATE checkpoints SET checkpoint_id = %s WHERE thread_id = %s AND checkpoint_id = %s",
                (data.decode(), THREAD, current[0]),
            )
        current[0] = data.decode()

    return [
        ("scenario blob", blob_read, blob_write),
        ("events write", write_read, write_write),
        ("checkpoint json", inline_read, inline_write),
        ("checkpoint id", id_read, id_write),
    ]


def _flips(name: str, data: bytes, rng: random.Random) -> list[bytes]:
    """Damaged copies of a field: one changed byte each, spread over the field; JSON stays
    JSON (a digit for a digit, a letter for a letter) so the store accepts it."""
    out = []
    positions = list(range(len(data)))
    rng.shuffle(positions)
    for i in positions:
        b = data[i : i + 1]
        if name in ("checkpoint json", "checkpoint id"):
            if b.isdigit():
                new = str((int(b) + 1) % 10).encode()
            elif b in b"abcdef":
                new = b"0"
            else:
                continue
        else:
            new = bytes([data[i] ^ (1 << rng.randrange(8))])
        damaged = data[:i] + new + data[i + 1 :]
        if name == "checkpoint json" and not _is_json(damaged):
            continue  # a letter of `false`/`true`: PostgreSQL would refuse the edit itself
        out.append(damaged)
        if len(out) == FLIPS:
            break
    return out


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def test_a_damaged_checkpoint_never_loads_as_another_game(game):
    fields = _postgres_fields(game) if game.startswith("postgresql") else _sqlite_fields(game)
    original = _state(game)
    rng = random.Random(7)
    for name, read, write in fields:
        clean = read()
        refused = 0
        for damaged in _flips(name, clean, rng):
            write(damaged)
            try:
                got = _state(game)
            except DamagedCheckpoint as exc:
                assert "damaged" in str(exc) and "\n" not in str(exc)
                refused += 1
            else:
                # a flip that leaves the checkpoint readable must leave the game as it was
                assert got == original, f"{name}: a flipped byte loaded a different game"
            finally:
                write(clean)
        assert refused, f"{name}: no damaged copy was refused (is it read at all?)"
    assert _state(game) == original


def test_a_damaged_scenario_is_refused(game):
    if game.startswith("postgresql"):
        import psycopg

        with psycopg.connect(game, autocommit=True) as c:
            c.execute(
                "UPDATE checkpoints SET metadata = jsonb_set(metadata, '{wargraph_run}',"
                " to_jsonb(replace(metadata->>'wargraph_run', '\"seed\": 4', '\"seed\": 5')))"
                " WHERE thread_id = %s AND metadata ? 'wargraph_run'",
                (THREAD,),
            )
    else:
        with sqlite3.connect(game) as c:
            c.execute(
                "UPDATE checkpoints SET metadata = replace(metadata, '\\\"seed\\\": 4',"
                " '\\\"seed\\\": 5') WHERE thread_id = ?",
                (THREAD,),
            )
    with pytest.raises(DamagedCheckpoint, match="stored scenario and settings are damaged"):
        load_run(game, THREAD)


def test_the_cli_says_a_checkpoint_is_damaged(game):
    fields = _postgres_fields(game) if game.startswith("postgresql") else _sqlite_fields(game)
    name, read, write = fields[0]
    data = read()
    write(data[:40] + bytes([data[40] ^ 1]) + data[41:])
    r = CliRunner().invoke(app, ["resume", "--thread", THREAD, "--db", game], input="")
    assert r.exit_code == 2, r.output
    assert "damaged" in r.output and "unexpected" not in r.output, r.output
    assert THREAD in r.output
