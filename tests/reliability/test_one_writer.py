"""One game, one writer, on both stores: a second `play`/`resume` of a game in progress is
refused with one line naming the holder; a refused command changes nothing; a game's
scenario and settings exist exactly when its first checkpoint does; what is listed as playing
is what the locks say; `wargraph games` lists a store's games. (Holders that are killed,
paused, in another pid namespace or off in time: test_lease_faults.py.)"""

from __future__ import annotations

import os
import socket
import threading

import pytest
from typer.testing import CliRunner

from tests.reliability._support import stopped_game
from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import GameError, list_runs, load_run, play, resume

SCENARIO = "azuristan_crimsonia"


def _blocked_game(db: str, thread: str, **kw):
    """A game playing in another thread, paused at its first step until released."""
    started, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def progress(node, values):
        started.set()
        assert release.wait(60)

    def run():
        try:
            outcome["result"] = play(
                SCENARIO,
                overrides=["rounds=1"],
                context=GameContext(model="scripted", seed=1),
                db=db,
                thread_id=thread,
                progress=progress,
                **kw,
            )
        except Exception as exc:  # reported to the test
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(60), outcome
    return worker, release, outcome


def test_a_second_writer_is_refused_naming_the_holder(store_db):
    worker, release, outcome = _blocked_game(store_db, "busy")
    try:
        for attempt in (
            lambda: play(
                SCENARIO,
                context=GameContext(model="scripted", seed=2),
                db=store_db,
                thread_id="busy",
            ),
            lambda: resume(db=store_db, thread_id="busy"),
        ):
            with pytest.raises(GameError) as refused:
                attempt()
            message = str(refused.value)
            assert "in use by `play`" in message, message
            assert f"pid {os.getpid()} on {socket.gethostname()}" in message, message
            assert "\n" not in message
    finally:
        release.set()
        worker.join(60)
    assert "error" not in outcome, outcome
    assert outcome["result"].finished
    sc, ctx = load_run(store_db, "busy")  # the refused play (seed 2) changed nothing
    assert ctx.seed == 1 and sc.rounds == 1


def test_a_refused_play_changes_nothing(store_db, tmp_path):
    first = play(
        SCENARIO,
        overrides=["rounds=2"],
        context=GameContext(model="scripted", seed=3, humans=["azuristan"]),
        db=store_db,
        thread_id="kept",
        out_dir=tmp_path / "kept",
    )
    assert first.interrupts, "the human seat should be waiting"
    before = load_run(store_db, "kept")
    record = (tmp_path / "kept" / "record.json").read_text()
    with pytest.raises(GameError, match="already holds a game"):
        play(
            "summit",
            context=GameContext(model="scripted", seed=9),
            db=store_db,
            thread_id="kept",
            out_dir=tmp_path / "kept",
        )
    after = load_run(store_db, "kept")
    assert after[0].model_dump() == before[0].model_dump()
    assert after[1] == before[1] and after[1].humans == ["azuristan"]
    assert (tmp_path / "kept" / "record.json").read_text() == record


def test_settings_exist_exactly_when_the_first_checkpoint_does(store_db, monkeypatch):
    """The scenario and settings go with the first checkpoint: a game whose first write
    fails leaves neither, and plays again as new."""
    from wargraph.store.saver import saver_class

    kind = "postgres" if store_db.startswith("postgresql") else "sqlite"
    cls = saver_class(kind)
    original = cls.put

    def failing_put(self, config, *args):
        raise OSError("disk gone (test)")

    monkeypatch.setattr(cls, "put", failing_put)
    with pytest.raises(OSError):
        play(
            SCENARIO,
            overrides=["rounds=1"],
            context=GameContext(model="scripted"),
            db=store_db,
            thread_id="half",
        )
    assert "half" not in list_runs(store_db)
    with pytest.raises(GameError, match="no game with thread id"):
        load_run(store_db, "half")
    monkeypatch.setattr(cls, "put", original)
    again = play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="scripted"),
        db=store_db,
        thread_id="half",
    )
    assert again.finished and "half" in list_runs(store_db)


def test_holders_are_what_the_locks_say(store_db):
    """`holders` (what `wargraph games` shows as playing) asks the lock itself: a lease held
    now is listed with the name its holder gave, one given back is not, whatever the table
    still says; a taker is never refused because a listing looked at its lock."""
    from wargraph.store.lease import GameHeld, holders, lease

    with lease(store_db, "live", command="resume"):
        with lease(store_db, "gone"):
            pass
        for _ in range(20):  # listings racing with takers of other leases
            assert set(holders(store_db)) == {"live"}
            with lease(store_db, "other"):
                pass
        command, host, pid, _since = holders(store_db)["live"]
        assert (command, host, pid) == ("resume", socket.gethostname(), os.getpid())
        with pytest.raises(GameHeld, match="in use by `resume`"):
            lease(store_db, "live").__enter__()
    assert holders(store_db) == {}


def test_games_lists_a_stores_games(store_db, tmp_path):
    play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="scripted"),
        db=store_db,
        thread_id="g-done",
    )
    play(
        SCENARIO,
        overrides=["rounds=2"],
        context=GameContext(model="scripted", humans=["crimsonia"]),
        db=store_db,
        thread_id="g-waits",
    )
    r = CliRunner().invoke(app, ["games", "--db", store_db], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = {line.split("│")[1].strip(): line for line in r.output.splitlines() if "│ g-" in line}
    assert set(lines) == {"g-done", "g-waits"}, r.output
    assert "done" in lines["g-done"] and "Zafaristan" in lines["g-done"]
    assert "waiting" in lines["g-waits"]


def test_game_over_is_printed_only_for_a_finished_game(store_db, tmp_path):
    """A game that stops before its end (here: interrupted after its first step) is reported
    as stopped, with a non-zero exit, never as "Game over"."""
    from wargraph.cli import _report
    from wargraph.runs.runner import PlayResult

    stopped_game(store_db, "cut")
    sc, _ = load_run(store_db, "cut")
    from wargraph.runs.runner import build_for
    from wargraph.store.saver import open_saver

    with open_saver(store_db) as saver:
        values = (
            build_for(sc)
            .compile(checkpointer=saver)
            .get_state({"configurable": {"thread_id": "cut"}})
            .values
        )
    assert not values.get("done")
    import typer

    with pytest.raises(typer.Exit) as ended:
        _report(PlayResult("cut", values, {}, None, []))
    assert ended.value.exit_code == 1
