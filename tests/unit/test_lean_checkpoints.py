"""What a game's checkpoints hold (issue 12): the scenario once, the record and the world as
DeltaChannels (whole only every few updates), asks only in the step that asks; blobs
compressed before they are encrypted; old, uncompressed blobs still load."""

from __future__ import annotations

import sqlite3

import pytest

from wargraph.kernel.context import GameContext
from wargraph.kernel.state import SNAPSHOT_EVERY
from wargraph.runs.runner import play
from wargraph.store.errors import DamagedCheckpoint
from wargraph.store.saver import open_saver

THREAD = "lean"
ROUNDS = 8


@pytest.fixture(scope="module")
def crisis(tmp_path_factory):
    db = tmp_path_factory.mktemp("lean") / "game.sqlite"
    result = play(
        "azuristan_crimsonia",
        overrides={"rounds": ROUNDS},
        context=GameContext(model="scripted", seed=3),
        db=db,
        thread_id=THREAD,
    )
    assert result.finished
    with open_saver(db, create=False) as saver:
        root = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
        tuples = list(reversed(list(saver.list(root))))  # oldest first
    return db, result, tuples


def test_the_scenario_is_kept_once_not_twice(crisis):
    _, result, tuples = crisis
    values = [t.checkpoint["channel_values"] for t in tuples]
    # the run's input, then the step that hands it to `setup`; from then on `spec` only
    assert "scenario" in values[0]["__start__"] and "scenario" in values[1]
    assert not any("scenario" in v for v in values[2:])
    # the validated scenario: once from setup, then once as each later round starts
    assert sum("spec" in v for v in values) == ROUNDS
    assert "scenario" not in result.values and result.values["spec"]["title"]


def test_the_record_is_stored_whole_only_every_few_updates(crisis):
    _, result, tuples = crisis
    whole = [t for t in tuples if "events" in t.checkpoint["channel_values"]]
    updates = len({t.checkpoint["channel_versions"].get("events") for t in tuples}) - 1
    assert updates > SNAPSHOT_EVERY  # else this game proves nothing
    assert 0 < len(whole) <= updates // SNAPSHOT_EVERY + 1
    # and the game still reads back whole, from any checkpoint
    assert len(result.values["events"]) > 10


def test_asks_are_in_the_asking_step_only(crisis):
    _, _, tuples = crisis
    with_asks = [t for t in tuples if t.checkpoint["channel_values"].get("asks")]
    assert with_asks
    assert all(t.metadata["source"] == "loop" for t in with_asks)
    # never in two checkpoints in a row: the seats' step clears them
    marks = [bool(t.checkpoint["channel_values"].get("asks")) for t in tuples]
    assert not any(a and b for a, b in zip(marks, marks[1:], strict=False))


def test_big_blobs_are_compressed_then_encrypted(crisis):
    db, _, _ = crisis
    with sqlite3.connect(db) as conn:
        types = [r[0] for r in conn.execute("SELECT type FROM checkpoints")]
        sizes = conn.execute(
            "SELECT max(length(checkpoint)) FROM checkpoints WHERE type = 'msgpack.z+aesgcm2'"
        ).fetchone()[0]
    assert "msgpack.z+aesgcm2" in types and all(t.endswith("+aesgcm2") for t in types)
    assert sizes and sizes < 20_000  # the whole crisis state, scenario included


def test_an_uncompressed_blob_from_before_still_loads(tmp_path):
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    with open_saver(tmp_path / "s.sqlite") as saver:
        value = {"text": "x" * 5000}
        typ, blob = saver.serde.dumps_typed(value)
        assert typ == "msgpack.z+aesgcm2" and len(blob) < 1000
        old = EncryptedSerializer(saver.serde.cipher, JsonPlusSerializer()).dumps_typed(value)
        assert old[0] == "msgpack+aesgcm2"
        assert saver.serde.loads_typed(old) == value == saver.serde.loads_typed((typ, blob))


def test_a_compressed_blob_without_its_tag_is_refused(tmp_path):
    import zlib

    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    with open_saver(tmp_path / "s.sqlite") as saver:
        _, raw = JsonPlusSerializer().dumps_typed({"a": 1})
        with pytest.raises(DamagedCheckpoint, match="authentication tag"):
            saver.serde.loads_typed(("msgpack.z", zlib.compress(raw)))
