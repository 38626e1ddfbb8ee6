"""The storage benchmark reads the store as the runner writes it (compressed, encrypted,
sealed) and reports the issue's targets; the benchmarks' saver variant reaches the runner."""

from __future__ import annotations

import pytest

from benchmarks import storage
from benchmarks.common import saver_variant


def test_quick_storage_measures_the_crisis_target():
    payload = storage.run(quick=True, write=False, show=False)
    [row] = payload["rows"]
    assert (row["family"], row["rounds"], row["finished"]) == ("crisis", 10, True)
    assert row["bytes_per_game"] == sum(v["bytes"] for v in row["by_round"].values())
    assert 0 < row["seat_bytes"] < row["bytes_per_game"] <= row["db_file_bytes"]
    assert row["checkpoints"] > row["seat_checkpoints"] > 0
    assert row["channel_bytes"]["game"]["spec"] > 0  # contents were decrypted and read back
    diplomacy, dip_writes, crisis, crisis_writes = payload["targets"]
    assert diplomacy["status"] == dip_writes["status"] == "not measured"  # quick: no Diplomacy
    assert crisis_writes["value"] == pytest.approx(row["seat_checkpoint_writes_per_agent_step"])
    assert row["agent_steps"] > 0 and row["saver_calls_per_agent_step"] > 0
    assert crisis["value"] == pytest.approx(row["bytes_per_game"] / 1e3, abs=1e-3)
    assert crisis["rule"] == "<=" and crisis["limit"] == 300
    assert crisis["status"] == ("met" if crisis["value"] <= 300 else "missed")


def test_the_full_sync_variant_reaches_the_runner(tmp_path):
    import wargraph.runs.runner as runner

    def synchronous() -> int:
        with runner.open_saver(tmp_path / "v.sqlite") as saver:
            return saver.conn.execute("PRAGMA synchronous").fetchone()[0]

    assert synchronous() == 1  # NORMAL: how the store opens SQLite
    with saver_variant("sqlite_full"):
        assert synchronous() == 2  # FULL
    assert synchronous() == 1
    with pytest.raises(ValueError, match="unknown saver variant"), saver_variant("sqlite_normal"):
        pass
