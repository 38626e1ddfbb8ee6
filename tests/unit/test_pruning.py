"""Deleting from a store through the saver (what langgraph-api asks a custom checkpointer:
`adelete_for_runs`, `aprune`, `adelete_thread`), on SQLite and PostgreSQL: under each game's
lease, never cutting a game's history, and keeping what the game's latest state, record,
scenario and settings are read from."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any

import pytest
from langgraph.channels import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from tests.aio import run
from wargraph.kernel.context import GameContext
from wargraph.kernel.state import SNAPSHOT_EVERY
from wargraph.runs.records import build_record
from wargraph.runs.runner import check_scenario, game_graph, list_runs, load_run, play, resume
from wargraph.store.errors import GameHeld, HistoryInUse
from wargraph.store.lease import lease
from wargraph.store.saver import Saver, open_async_saver, open_saver

SEAT = "azuristan"


def _config(thread_id: str, run_id: str | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}, "recursion_limit": 10_000}
    if run_id is not None:
        config["metadata"] = {"run_id": run_id}  # as langgraph-api runs a graph
    return config


def _answer(payload: dict[str, Any]) -> dict[str, str]:
    return {"plan": f"{payload['seat']} holds in {payload['ask_id']}"}


def _rows(db: str, thread_id: str) -> dict[str, int]:
    """How many checkpoints each namespace of a game holds."""
    from wargraph.store.pruning import rows_of

    with open_saver(db, create=False) as saver:
        counts: dict[str, int] = {}
        for row in rows_of(saver, thread_id):
            counts[row.ns] = counts.get(row.ns, 0) + 1
        return counts


def _state(db: str, thread_id: str) -> Any:
    sc, _ = load_run(db, thread_id)
    with open_saver(db, create=False) as saver:
        assert saver.verify_thread(thread_id)  # every root checkpoint still matches its seal
        return game_graph(sc, saver).get_state(_config(thread_id))


def _events(values: dict[str, Any]) -> bytes:
    record = build_record(values, thread_id="same")
    return json.dumps(record, sort_keys=True, ensure_ascii=False).encode()


# --- keep_latest --------------------------------------------------------------------------------


def _append(left: list[int] | None, batches: Any) -> list[int]:
    out = list(left or [])
    for batch in batches:
        out.extend(batch)
    return out


class Counted(TypedDict, total=False):
    log: Annotated[list[int], DeltaChannel(_append, snapshot_frequency=3)]
    n: int


def _counting() -> Any:
    """A small graph whose one DeltaChannel is stored whole every third update."""

    def step(state: Counted) -> dict[str, Any]:
        n = state.get("n", 0) + 1
        return {"log": [n], "n": n}

    g = StateGraph(Counted)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if s["n"] >= 12 else "step")
    return g.compile


def _readings(graph: Any, thread_id: str) -> dict[str, Any]:
    """What each root checkpoint of a game reads as (its state, rebuilt from the store)."""
    return {
        snap.config["configurable"]["checkpoint_id"]: (snap.values, snap.next)
        for snap in graph.get_state_history(_config(thread_id))
    }


def scripted_games(db: str, *threads: str) -> None:
    """One-round scripted crisis games, one per thread, in the store."""
    ctx = GameContext(model="scripted", seed=2)
    for thread in threads:
        play("azuristan_crimsonia", overrides={"rounds": 1}, context=ctx, db=db, thread_id=thread)


def test_keep_latest_keeps_the_latest_state_and_each_kept_checkpoint_reads_as_before(store_db):
    """Each checkpoint that stays reads as it did; what goes is what the latest state does not
    need (before the nearest checkpoint that stores its DeltaChannel whole) and the branches
    off it; the checkpoint that holds the game's run stays."""
    with open_saver(store_db) as saver:
        graph = _counting()(checkpointer=saver)
        saver.register_run("c", {"scenario": {}, "context": {}})
        graph.invoke({"n": 0}, _config("c"))
        old = list(graph.get_state_history(_config("c")))[6].config  # a branch from step 5
        graph.update_state(old, {"n": 100}, as_node="step")
        before = _readings(graph, "c")
        latest = graph.get_state(_config("c"))

        saver.prune(["c"], strategy="keep_latest")

        after = _readings(graph, "c")
        now = graph.get_state(_config("c")).values
        assert now == latest.values and now["n"] == 100 and 3 < len(now["log"]) < 12
        assert after == {k: before[k] for k in after}  # each kept one reads as before
        assert len(after) < len(before) // 2, (len(after), len(before))
        assert saver.run_of("c") == {"scenario": {}, "context": {}}
        assert saver.verify_thread("c")


def test_keep_latest_keeps_a_whole_game_whose_record_is_read_from_its_history(store_db):
    """A game's record and world are rebuilt from its earlier checkpoints' writes: pruning
    keeps what they are read from, so the game reads back the same, and so does every
    checkpoint kept; its scenario and settings load, and it is listed."""
    ctx = GameContext(model="scripted", seed=3)
    result = play(
        "azuristan_crimsonia", overrides={"rounds": 8}, context=ctx, db=store_db, thread_id="long"
    )
    assert result.finished
    sc, _ = load_run(store_db, "long")
    with open_saver(store_db) as saver:
        graph = game_graph(sc, saver)
        before = _readings(graph, "long")
        assert len(result.values["events"]) > SNAPSHOT_EVERY  # stored whole mid-game
        saver.prune(["long"], strategy="keep_latest")
        after = _readings(graph, "long")
    assert after == {k: before[k] for k in after} and max(after) == max(before)
    assert _events(_state(store_db, "long").values) == _events(result.values)
    sc, settings = load_run(store_db, "long")
    assert settings.seed == 3 and sc.title == result.values["spec"]["title"]
    assert "long" in list_runs(store_db)


def test_keep_latest_of_a_game_waiting_for_a_person_then_it_goes_on_the_same(store_db):
    """A game whose seat waits for a person keeps the seat's open question through a prune,
    and goes on to the same end as a game never pruned."""
    sc = check_scenario("azuristan_crimsonia", {"rounds": 2})
    ctx = GameContext(model="scripted", seed=1, humans=[SEAT])
    whole = play(sc, context=ctx, db=store_db, thread_id="whole", human_io=_answer)
    waiting = play(sc, context=ctx, db=store_db, thread_id="pruned")
    assert waiting.interrupts and not waiting.finished
    before = _state(store_db, "pruned")

    with open_saver(store_db) as saver:
        saver.prune(["pruned"])  # keep_latest, LangGraph's default

    after = _state(store_db, "pruned")
    assert after.values == before.values and after.next == before.next
    assert [i.id for i in after.interrupts] == [i.id for i in before.interrupts]
    finished = resume(db=store_db, thread_id="pruned", human_io=_answer)
    assert finished.finished
    assert _events(finished.values) == _events(whole.values)


def test_prune_delete_deletes_the_games(store_db):
    scripted_games(store_db, "one", "two", "kept")
    with open_saver(store_db) as saver:
        saver.prune(["one", "two"], strategy="delete")
    assert list_runs(store_db) == ["kept"]
    assert _rows(store_db, "one") == {} and _rows(store_db, "kept")


def test_a_prune_asked_wrongly_is_one_clear_error(store_db):
    with open_saver(store_db) as saver:
        with pytest.raises(ValueError, match="unknown prune strategy 'latest'"):
            saver.prune(["t"], strategy="latest")
        with pytest.raises(TypeError, match="not a str"):
            saver.prune("t")


# --- delete_for_runs ----------------------------------------------------------------------------


def _start(saver: Saver, thread_id: str, run_id: str) -> Any:
    """A crisis game started as a run `run_id` of the server would: it waits for the person."""
    sc = check_scenario("azuristan_crimsonia", {"rounds": 1})
    ctx = GameContext(model="scripted", seed=4, humans=[SEAT])
    saver.register_run(thread_id, {"scenario": sc.model_dump(), "context": dataclasses.asdict(ctx)})
    graph = game_graph(sc, saver)
    graph.invoke({"scenario": sc.model_dump()}, _config(thread_id, run_id), context=ctx)
    return graph, ctx


def _answer_all(graph: Any, ctx: GameContext, thread_id: str, run_id: str) -> Any:
    asked = graph.get_state(_config(thread_id)).interrupts
    answers = Command(resume={i.id: _answer(i.value) for i in asked})
    graph.invoke(answers, _config(thread_id, run_id), context=ctx)
    return graph.get_state(_config(thread_id))


def test_deleting_a_run_gives_back_the_game_as_it_was_before_it(store_db):
    with open_saver(store_db) as saver:
        graph, ctx = _start(saver, "g", "run-1")
        waiting = graph.get_state(_config("g"))
        assert waiting.interrupts
        done = _answer_all(graph, ctx, "g", "run-2")
        assert done.values["done"]

        saver.delete_for_runs(["run-2"])
        back = graph.get_state(_config("g"))
        assert back.config == waiting.config and back.values == waiting.values
        assert [i.id for i in back.interrupts] == [i.id for i in waiting.interrupts]
        assert saver.verify_thread("g")

        again = _answer_all(graph, ctx, "g", "run-3")  # and the game goes on from there
        assert _events(again.values) == _events(done.values)
    assert list_runs(store_db) == ["g"]


def test_a_run_other_runs_continued_from_is_not_deleted(store_db):
    """Deleting the first run while a later one continued from it would cut the game's history
    (its record is rebuilt from the first run's writes): refused, nothing deleted. Latest first,
    then the first run: the game is gone."""
    with open_saver(store_db) as saver:
        graph, ctx = _start(saver, "g", "run-1")
        done = _answer_all(graph, ctx, "g", "run-2")
        rows = _rows(store_db, "g")
        with pytest.raises(
            HistoryInUse, match="checkpoints of run-2 continue from what run-1 wrote"
        ):
            saver.delete_for_runs(["run-1"])
        assert _rows(store_db, "g") == rows
        assert graph.get_state(_config("g")).values == done.values

        saver.delete_for_runs(["run-2"])
        saver.delete_for_runs(["run-1"])
        assert saver.get_tuple(_config("g")) is None
    assert _rows(store_db, "g") == {} and list_runs(store_db) == []


def test_deleting_both_runs_at_once_deletes_the_game(store_db):
    with open_saver(store_db) as saver:
        graph, ctx = _start(saver, "g", "run-1")
        _answer_all(graph, ctx, "g", "run-2")
        saver.delete_for_runs(["run-1", "run-2", "a run of no game"])
    assert _rows(store_db, "g") == {} and list_runs(store_db) == []


# --- one writer per game --------------------------------------------------------------------------


def test_a_game_another_process_holds_is_left_as_it_is(store_db):
    scripted_games(store_db, "held", "free")
    rows = _rows(store_db, "held")
    with open_saver(store_db) as saver, lease(store_db, "held", command="resume"):
        for keep_latest in (True, False):
            with pytest.raises(GameHeld, match="game 'held' is in use by `resume`"):
                if keep_latest:
                    saver.prune(["held"])
                else:
                    saver.prune(["held", "free"], strategy="delete")
            assert _rows(store_db, "held") == rows  # left as it was ...
        assert _rows(store_db, "free") == {}  # ... and the other game deleted
        with pytest.raises(GameHeld, match="in use by `resume`"):
            saver.delete_thread("held")
    assert _rows(store_db, "held") == rows
    assert list_runs(store_db) == ["held"]


def test_a_run_of_a_game_another_process_holds_is_not_deleted(store_db):
    with open_saver(store_db) as saver:
        _start(saver, "g", "run-1")
        rows = _rows(store_db, "g")
        with (
            lease(store_db, "g", command="resume"),
            pytest.raises(GameHeld, match="game 'g' is in use by `resume`"),
        ):
            saver.delete_for_runs(["run-1"])
        assert _rows(store_db, "g") == rows


def test_the_async_methods_langgraph_api_calls(store_db):
    """`aprune` and `adelete_for_runs` (langgraph-api warns at start when a checkpointer lacks
    them) do what the sync ones do, in a worker thread."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    with open_saver(store_db) as saver:
        graph = _counting()(checkpointer=saver)
        graph.invoke({"n": 0}, _config("c", "run-1"))
        graph.invoke({"n": 0}, _config("d", "run-2"))
        latest = graph.get_state(_config("c")).values
    rows = _rows(store_db, "c")

    async def prune() -> None:
        async with open_async_saver(store_db) as saver:
            for name in ("aprune", "adelete_for_runs", "adelete_thread"):
                assert getattr(type(saver), name) is not getattr(BaseCheckpointSaver, name)
            await saver.aprune(["c"])
            await saver.adelete_for_runs(["run-2"])

    run(prune())
    assert _rows(store_db, "c")[""] < rows[""] and _rows(store_db, "d") == {}
    with open_saver(store_db) as saver:
        assert _counting()(checkpointer=saver).get_state(_config("c")).values == latest
