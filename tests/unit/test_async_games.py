"""Games under `ainvoke`/`astream` on a wargraph store: the same record as under `invoke`, for
every family; a checkpointer with async methods only (what langgraph-api hands a served graph)
plays a game; async writes are fenced like sync ones; a game a client of the server starts gets
its run (scenario and settings) in the store, and a game the CLI started keeps its own."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from tests.aio import run
from tests.stores import params, store
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario
from wargraph.runs.listing import list_games
from wargraph.runs.records import build_record
from wargraph.runs.runner import check_scenario, game_graph, list_runs, load_run, play
from wargraph.store.errors import LeaseLost
from wargraph.store.lease import lease
from wargraph.store.saver import in_thread, open_async_saver
from wargraph.store.setup import own_sql

# one scripted game of each family, small enough for a unit test
GAMES = {
    "crisis": ("azuristan_crimsonia", {"rounds": 2}),
    "tabletop": ("haiwire", {"rounds": 2}),
    "waragent": ("wwi", {"rounds": 2}),
    "flow": ("summit", {}),
    "blotto": ("blotto", {}),
    "diplomacy": ("diplomacy", {"diplomacy.max_year": 1901}),
}


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 10_000}


_run = run


def _bytes(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, ensure_ascii=False).encode()


async def _ainvoke_game(db: str, sc: Scenario, ctx: GameContext, thread_id: str, **kw: Any):
    async with open_async_saver(db, **kw) as saver:
        graph = game_graph(sc, saver)
        if not kw:
            saver.register_run(
                thread_id, {"scenario": sc.model_dump(), "context": dataclasses.asdict(ctx)}
            )
        await graph.ainvoke({"scenario": sc.model_dump()}, _config(thread_id), context=ctx)
        return (await graph.aget_state(_config(thread_id))).values


@pytest.mark.parametrize("kind", params(slow={"postgres"}))
@pytest.mark.parametrize("family", sorted(GAMES))
def test_ainvoke_records_the_same_game_as_invoke(family, kind, tmp_path):
    name, overrides = GAMES[family]
    sc = check_scenario(name, overrides)
    ctx = GameContext(model="scripted", seed=4)
    with store(kind, tmp_path) as db:
        synced = play(sc, context=ctx, db=db, thread_id="game").record
        values = _run(_ainvoke_game(db, sc, ctx, "again"))
        assert load_run(db, "again")[0].family == family
    assert values.get("done") and not values.get("error"), values.get("error")
    synced = {k: v for k, v in synced.items() if k != "db"}  # the runner names its store
    assert _bytes(build_record(values, thread_id="game")) == _bytes(synced)


def test_astream_with_a_person_answering_records_the_same_game(tmp_path):
    """Interrupts and resumes under astream: a person's answers reach the record as under
    the CLI's sync loop."""
    sc = check_scenario("azuristan_crimsonia", {"rounds": 2})
    ctx = GameContext(model="scripted", seed=1, humans=["azuristan"])
    db = str(tmp_path / "games.sqlite")

    def answer(payload: dict[str, Any]) -> dict[str, str]:
        return {"plan": f"{payload['seat']} holds in {payload['ask_id']}"}

    synced = play(sc, context=ctx, db=db, thread_id="sync", human_io=answer).record

    async def streamed() -> tuple[dict[str, Any], int]:
        asked = 0
        async with open_async_saver(db) as saver:
            graph = game_graph(sc, saver)
            payload: Any = {"scenario": sc.model_dump()}
            while True:
                async for _ in graph.astream(payload, _config("async"), context=ctx):
                    pass
                state = await graph.aget_state(_config("async"))
                if not state.interrupts:
                    return state.values, asked
                asked += len(state.interrupts)
                payload = Command(resume={i.id: answer(i.value) for i in state.interrupts})

    values, asked = _run(streamed())
    assert asked == 2  # the person's plan in each round
    synced = {k: v for k, v in synced.items() if k != "db"}  # the runner names its store
    assert _bytes(build_record(values, thread_id="sync")) == _bytes(synced)


class AsyncOnly(BaseCheckpointSaver):
    """A checkpointer with async methods only, as langgraph-api wraps a custom one: a seat
    that saved its subgraph through the sync methods would fail here."""

    def __init__(self, inner: Any) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config):  # type: ignore[no-untyped-def]
        return await self.inner.aget_tuple(config)

    async def alist(self, config, **kw):  # type: ignore[no-untyped-def]
        async for tup in self.inner.alist(config, **kw):
            yield tup

    async def aput(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
        return await self.inner.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):  # type: ignore[no-untyped-def]
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def aget_delta_channel_history(self, *, config, channels):  # type: ignore[no-untyped-def]
        return await self.inner.aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current, channel):  # type: ignore[no-untyped-def]
        return self.inner.get_next_version(current, channel)


def test_a_checkpointer_with_async_methods_only_plays_a_game_with_seats(tmp_path):
    sc = check_scenario("azuristan_crimsonia", {"rounds": 1})
    ctx = GameContext(model="scripted", seed=2)
    db = str(tmp_path / "games.sqlite")

    async def game() -> dict[str, Any]:
        async with open_async_saver(db) as saver:
            graph = game_graph(sc, AsyncOnly(saver))
            return await graph.ainvoke({"scenario": sc.model_dump()}, _config("t"), context=ctx)

    values = _run(game())
    assert values["done"] and not values.get("error")
    # the seats' own histories went through the async methods into the store too
    with own_sql(db) as sql:
        rows, _ = sql.run("SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = 't'")
    assert any(ns.startswith("agent_azuristan") for (ns,) in rows), rows


@pytest.mark.timeout(120)
def test_an_async_write_of_a_game_taken_by_another_holder_is_refused(store_db):
    """Fencing under ainvoke: this process holds the game's lease, another takes it meanwhile
    (its generation moves on); the next async write is refused and nothing more is written."""
    sc = check_scenario("azuristan_crimsonia", {"rounds": 1})
    ctx = GameContext(model="scripted")
    with lease(store_db, "fenced", command="test"):
        with own_sql(store_db) as sql:
            sql.run(
                "UPDATE wargraph_lease SET generation = generation + 1 WHERE thread_id = ?",
                ("fenced",),
            )
        with pytest.raises(LeaseLost, match="lost its lease"):
            _run(_ainvoke_game(store_db, sc, ctx, "fenced"))
    assert list_runs(store_db) == []  # not even the game's first checkpoint


def test_a_game_a_client_starts_on_the_servers_saver_gets_its_run(store_db):
    sc = check_scenario("azuristan_crimsonia", {"rounds": 1})
    ctx = GameContext(model="scripted", seed=9, humans=[])
    settings = {"model": "scripted", "seed": 9, "humans": [], "not a setting": 1}
    values = _run(_ainvoke_game(store_db, sc, ctx, "served", served={"served": settings}.get))
    assert values["done"]
    assert list_runs(store_db) == ["served"]  # listed once: one run per game
    found, settings = load_run(store_db, "served")
    assert found.title == sc.title and settings.seed == 9 and settings.model == "scripted"
    (row,) = list_games(store_db)
    assert (row.thread_id, row.family, row.via, row.status) == ("served", "crisis", "serve", "done")


def test_a_cli_game_the_server_continues_keeps_its_own_run(tmp_path):
    """A game the CLI started, waiting for a person, answered through the server's saver: its
    run (settings, trace) stays the CLI's."""
    db = str(tmp_path / "games.sqlite")
    ctx = GameContext(model="scripted", seed=3, humans=["crimsonia"])
    ctx.trace_path = str(tmp_path / "out" / "trace.jsonl")
    sc = check_scenario("azuristan_crimsonia", {"rounds": 1})
    waiting = play(sc, context=ctx, db=db, thread_id="cli", out_dir=tmp_path / "out")
    assert waiting.interrupts

    async def answer() -> dict[str, Any]:
        async with open_async_saver(db, served=lambda thread: {"seed": 77}) as saver:
            graph = game_graph(sc, saver)
            resume = Command(resume={w["id"]: {"plan": "hold"} for w in waiting.interrupts})
            return await graph.ainvoke(resume, _config("cli"), context=ctx)

    assert _run(answer())["done"]
    _, settings = load_run(db, "cli")
    assert settings.trace_path == ctx.trace_path and settings.humans == ["crimsonia"]
    assert [(g.thread_id, g.via) for g in list_games(db)] == [("cli", "cli")]


def test_a_run_cancelled_while_taking_its_lease_gives_it_back():
    """`in_thread` (the server's lease and saver): a task cancelled while the worker thread
    enters still leaves what the thread entered, so no game stays held by a cancelled run."""
    release, entered, left = threading.Event(), threading.Event(), threading.Event()

    class Slow:
        def __enter__(self) -> Slow:
            release.wait(10)
            entered.set()
            return self

        def __exit__(self, *exc: object) -> None:
            left.set()

    async def main() -> None:
        async def hold() -> None:
            async with in_thread(Slow()):
                await asyncio.sleep(60)

        task = asyncio.create_task(hold())
        await asyncio.sleep(0)  # the task starts entering
        task.cancel()
        release.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.get_running_loop().run_in_executor(None, left.wait, 10)

    _run(main())
    assert entered.is_set() and left.is_set()


def test_a_store_is_closed_only_after_its_last_call_in_a_worker_thread(tmp_path):
    """A task awaiting an async read is cancelled (the game stops on an error) while the read
    still runs in its thread: closing the SQLite connection under it crashed the process
    (a segfault seen once in the suite). Closing now waits for the call."""
    from wargraph.store.saver import open_saver

    started, release, order = threading.Event(), threading.Event(), []

    async def main() -> None:
        with open_saver(tmp_path / "games.sqlite") as saver:
            read = saver.get_tuple

            def slow(config: Any) -> Any:
                started.set()
                release.wait(10)
                out = read(config)  # the connection is still open here
                order.append("read")
                return out

            saver.get_tuple = slow
            task = asyncio.ensure_future(saver.aget_tuple(_config("t")))
            await asyncio.to_thread(started.wait, 10)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            threading.Timer(0.2, release.set).start()
        order.append("closed")

    _run(main())
    assert order == ["read", "closed"]
