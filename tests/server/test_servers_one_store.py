"""Two real `wargraph serve --db` processes on loopback keeping their games in one PostgreSQL
store (a fresh schema per test): each lists and continues the other's games (one writer at a
time, through the game's lease), a deadline set on one is seen on the other and applied once;
and a restarted server does not play again a run that had finished."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.support import bearer, sdk, start_game, token_of, wait_for, web
from tests.stores import store
from wargraph.kernel.parts import FALLBACK_PLAN
from wargraph.server.serve import Server, free_port, running

pytestmark = [pytest.mark.server, pytest.mark.timeout(300)]

NO_QUESTIONS = {"questions": []}  # no post-game questions: the game ends after its rounds


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[str]:
    with store("postgres", tmp_path) as db:
        yield db


@contextlib.contextmanager
def _server(folder: Path, db: str) -> Iterator[Server]:
    with running(
        port=free_port(),
        state_dir=folder / "state",
        log_path=folder / "server.log",
        log_level="INFO",
        db=db,
        env={"WARGRAPH_DEADLINE_WATCH_S": "0.5"},
    ) as server:
        yield server


def _detail(server: Server, client: httpx.Client, thread_id: str) -> dict:
    r = client.get(f"/wargraph/graphs/{thread_id}", headers=bearer(server.facilitator_token))
    assert r.status_code == 200, r.text
    return r.json()


def _waiting(server: Server, client: httpx.Client, thread_id: str, seats: set, rnd: int) -> dict:
    def check():
        g = _detail(server, client, thread_id)
        ok = g["status"] == "waiting" and set(g["waiting_for"]) == seats and g["round"] == rnd
        return g if ok else None

    return wait_for(check, f"round {rnd} waiting for {sorted(seats)}", timeout=90)


def _listed(server: Server, client: httpx.Client, thread_id: str) -> dict:
    r = client.get("/wargraph/graphs", headers=bearer(server.facilitator_token))
    assert r.status_code == 200, r.text
    rows = [g for g in r.json()["games"] if g["thread_id"] == thread_id]
    assert len(rows) == 1, r.json()
    return rows[0]


def _answer(client: httpx.Client, link: str, plan: str) -> None:
    seat = bearer(token_of(link))
    (asked,) = client.get("/wargraph/seat", headers=seat).json()["questions"]
    r = client.post(
        "/wargraph/seat/answer",
        headers=seat,
        json={"ask_id": asked["ask_id"], "answer": {"plan": plan}},
    )
    assert r.status_code == 200, r.text


def _plans(record: dict, rnd: int) -> list[dict]:
    return [e for e in record["events"] if e["kind"] == "plan" and e["round"] == rnd]


def test_two_servers_on_one_store_list_and_continue_each_others_games(pg, tmp_path):
    with (
        _server(tmp_path / "a", pg) as a,
        _server(tmp_path / "b", pg) as b,
        web(a) as ca,
        web(b) as cb,
    ):
        both = {"azuristan", "crimsonia"}
        game = start_game(a, ca, sorted(both), rounds=3, overrides=NO_QUESTIONS)
        thread_id = game["thread_id"]
        _waiting(a, ca, thread_id, both, 1)

        # B lists A's game, waiting for the same two people, and shows its open questions
        row = _listed(b, cb, thread_id)
        assert set(row["waiting_for"]) == both and row["round"] == 1, row
        on_b = _waiting(b, cb, thread_id, both, 1)
        links_b = {s["seat"]: s["link"] for s in on_b["seats"]}
        assert links_b["azuristan"].startswith(b.url)
        # the LangGraph API on B too: the game's state, not an empty one
        state = sdk(b).threads.get_state(thread_id)
        assert {i["value"]["seat"] for i in state["interrupts"]} == both

        # one person answers on B (B's link), the other on A (A's link): the game goes on
        _answer(cb, links_b["azuristan"], "AZ, answered on server B")
        _waiting(a, ca, thread_id, {"crimsonia"}, 1)  # A reads what B wrote
        _answer(ca, game["links"]["crimsonia"], "CR, answered on server A")
        _waiting(b, cb, thread_id, both, 2)
        _waiting(a, ca, thread_id, both, 2)
        assert _listed(a, ca, thread_id)["round"] == 2  # A's list as the store has it

        record = cb.get(
            f"/wargraph/graphs/{thread_id}/record", headers=bearer(b.facilitator_token)
        ).json()
        plans = {e["author"]: e for e in _plans(record, 1)}
        assert plans["azuristan"]["text"] == "AZ, answered on server B"
        assert plans["crimsonia"]["text"] == "CR, answered on server A"
        assert {e["data"]["source"] for e in plans.values()} == {"human"}

        # a deadline set on A is B's too; when it passes, the fallbacks answer once
        r = ca.post(
            f"/wargraph/graphs/{thread_id}/deadline",
            headers=bearer(a.facilitator_token),
            json={"minutes": 0.05},
        )
        assert r.status_code == 200, r.text
        shown = _detail(b, cb, thread_id)["deadline"]
        assert shown is not None and shown["phase"] == "round 2", shown
        _waiting(a, ca, thread_id, both, 3)
        record = ca.get(
            f"/wargraph/graphs/{thread_id}/record", headers=bearer(a.facilitator_token)
        ).json()
        second = _plans(record, 2)
        assert sorted(e["author"] for e in second) == sorted(both), second
        for e in second:
            assert e["data"]["source"] == "deadline" and e["text"] == FALLBACK_PLAN["plan"]
        assert len(_plans(record, 1)) == 2  # nothing doubled


_SET_STATUS = """
import pickle, sys
path, status = sys.argv[1], sys.argv[2]
with open(path, "rb") as fh:
    ops = pickle.load(fh)
for run in ops["runs"]:
    run["status"] = status
with open(path, "wb") as fh:
    pickle.dump(ops, fh)
print(" ".join(str(r["run_id"]) for r in ops["runs"]))
"""


def _set_run_status(state_dir: Path, status: str) -> list[str]:
    """What `langgraph dev`'s state folder holds after a crash within its 10 s save interval:
    the runs as last saved (here: set to `status`). Returns the run ids. In a process of its
    own: unpickling imports langgraph-api, which reads its settings from the environment as
    `langgraph dev` sets it."""
    path = state_dir / ".langgraph_api" / ".langgraph_ops.pckl"
    env = {
        **os.environ,
        "DATABASE_URI": ":memory:",
        "REDIS_URI": "fake",
        "MIGRATIONS_PATH": "__inmem",
    }
    done = subprocess.run(
        [sys.executable, "-c", _SET_STATUS, str(path), status],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


def _checkpoints(db: str, thread_id: str) -> int:
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchone()
    return int(row[0])


def test_a_restarted_server_does_not_play_a_finished_run_again(pg, tmp_path):
    folder = tmp_path / "a"
    with _server(folder, pg) as a, web(a) as client:
        game = start_game(a, client, ["azuristan"], rounds=2, overrides=NO_QUESTIONS)
        thread_id = game["thread_id"]
        _waiting(a, client, thread_id, {"azuristan"}, 1)
        _answer(client, game["links"]["azuristan"], "AZ: round one, answered once")
        before = _waiting(a, client, thread_id, {"azuristan"}, 2)
        runs = sdk(a).runs.list(thread_id)
        assert len(runs) == 2 and all(r["status"] == "success" for r in runs), runs
    checkpoints = _checkpoints(pg, thread_id)
    # both runs (the game's start, the person's answer) as a crash would have left them
    assert sorted(_set_run_status(folder / "state", "running")) == sorted(r["run_id"] for r in runs)

    with _server(folder, pg) as again, web(again) as client:
        wait_for(
            lambda: all(
                r["status"] not in ("pending", "running") for r in sdk(again).runs.list(thread_id)
            ),
            "the restarted server to take up the runs it found running",
            timeout=90,
        )
        after = _waiting(again, client, thread_id, {"azuristan"}, 2)
        assert after["events"] == before["events"]  # no second game, no answer given twice
        assert _checkpoints(pg, thread_id) == checkpoints  # nothing was played again
        assert "already played before this server restarted" in again.log_tail(50000)
