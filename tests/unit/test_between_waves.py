"""Less in series between two waves of calls (issue 43). Work done ahead while seats wait for a
model: a step whose asks go to a model queues the world's `Orders.prepare` on the background
worker; Diplomacy's warms each power's legal orders, unit blocks and answer model, and the
order question is the same with or without it. Fewer steps: `negotiate` records an exchange and
asks the next in one step. Less done twice in a step: a seat's view is rendered once (and
counted each time it is given); `summarize` records the diaries without making the questions
again."""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import wargraph.graphs.diplomacy.engine as E
import wargraph.graphs.diplomacy.graph as D
import wargraph.graphs.diplomacy.rules as W
import wargraph.seats.schemas as schemas
from wargraph.graphs.diplomacy.phase import position_of
from wargraph.graphs.diplomacy.world import DIPLOMACY
from wargraph.kernel import ahead
from wargraph.kernel.context import GameContext
from wargraph.kernel.parts.cast import Cast
from wargraph.kernel.parts.orders import Orders
from wargraph.kernel.scenario import load_scenario
from wargraph.kernel.table import Table
from wargraph.kernel.views import counting
from wargraph.kernel.world import World
from wargraph.runs.runner import play

MODEL = "openai:m@http://127.0.0.1:9/v1"  # never called: a model seat is known by its name


@dataclasses.dataclass(frozen=True)
class Recording(Orders):
    seen: list[dict[str, Any]] = dataclasses.field(default_factory=list, compare=False)
    fail: bool = False

    def prepare(self, table: Table) -> None:
        self.seen.append(dict(table.state.get("world") or {}))
        if self.fail:
            raise RuntimeError("prepare failed")


def _asks(model: str | None, kind: str = "ai") -> list[dict[str, Any]]:
    return [{"id": "r1.talk.message.a", "role": "a", "seat": {"kind": kind, "model": model}}]


def _table(world: World) -> Table:
    sc = load_scenario("azuristan_crimsonia")
    return Table(sc, GameContext(), {"round": 1, "phase": "talk", "world": {"x": 1}}, world)


def test_a_step_asking_a_model_prepares_on_the_state_it_leaves():
    part = Recording()
    table = _table(World("rec", orders=part))
    update = {"asks": _asks(MODEL), "world": {"y": 2}}
    assert ahead.prepare_while_asked(table.world, table, update)
    ahead.settled(timeout=10)
    assert part.seen == [{"x": 1, "y": 2}]


@pytest.mark.parametrize(
    ("model", "kind"),
    [("scripted", "ai"), ("bot:greedy", "ai"), (None, "human"), (None, "scripted")],
)
def test_nothing_is_prepared_when_no_model_is_waited_for(model, kind):
    part = Recording()
    table = _table(World("rec", orders=part))
    assert not ahead.prepare_while_asked(table.world, table, {"asks": _asks(model, kind)})
    ahead.settled(timeout=10)
    assert part.seen == []


def test_a_world_without_prepare_queues_nothing():
    table = _table(World("plain"))
    assert not ahead.prepare_while_asked(table.world, table, {"asks": _asks(MODEL)})


def _prepared_in_a_forked_child(_: int) -> int:
    part = Recording()
    table = _table(World("rec", orders=part))
    ahead.prepare_while_asked(table.world, table, {"asks": _asks(MODEL)})
    ahead.settled(timeout=10)
    return len(part.seen)


def test_a_forked_process_prepares_on_its_own_worker():
    # a job long enough that the parent's worker thread is running when the child is forked
    assert ahead._submit(lambda: time.sleep(1.0))
    with ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as pool:
        assert pool.submit(_prepared_in_a_forked_child, 0).result(timeout=60) == 1
    ahead.settled(timeout=10)


def test_a_worker_that_falls_behind_skips_jobs_rather_than_queueing_them(monkeypatch):
    ahead.settled(timeout=10)  # another test's jobs
    monkeypatch.setattr(ahead, "START_AFTER_S", 0.3)
    part = Recording()
    table = _table(World("rec", orders=part))
    queued = [
        ahead.prepare_while_asked(table.world, table, {"asks": _asks(MODEL)})
        for _ in range(ahead.MAX_QUEUED + 3)
    ]
    ahead.settled(timeout=30)
    assert queued.count(True) == ahead.MAX_QUEUED and len(part.seen) == ahead.MAX_QUEUED


def test_a_job_is_skipped_when_its_game_has_queued_a_newer_one(monkeypatch):
    """A fast model answered before the worker started a game's job: only the game's newest
    state is prepared; another game's job still runs."""
    ahead.settled(timeout=10)
    monkeypatch.setattr(ahead, "START_AFTER_S", 0.2)
    ran: list[str] = []
    for name in ("g1 first", "g1 second", "g2 only", "g1 third", "no game", "no game again"):
        game = "" if name.startswith("no game") else name.split()[0]
        assert ahead._submit(lambda name=name: ran.append(name), game)
    ahead.settled(timeout=10)
    assert ran == ["g2 only", "g1 third", "no game", "no game again"]


def test_the_worker_ends_when_it_has_no_job():
    assert ahead._submit(lambda: None)
    ahead.settled(timeout=10)
    deadline = time.monotonic() + 5
    while any(t.name == "wargraph-ahead" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the worker outlived its jobs"
        time.sleep(0.01)


def test_a_failing_prepare_costs_the_game_nothing():
    part = Recording(fail=True)
    table = _table(World("rec", orders=part))
    assert ahead.prepare_while_asked(table.world, table, {"asks": _asks(MODEL)})
    ahead.settled(timeout=10)  # the error stays in the background job
    assert len(part.seen) == 1


def _diplomacy_table(game_id: str, **overrides: str) -> Table:
    sc = load_scenario("diplomacy", [f"{k}={v}" for k, v in overrides.items()])
    world = {"diplomacy": W.new_game(game_id=game_id)}
    state = {"round": 1, "phase": "order", "events": [], "world": world}
    return Table(sc, GameContext(model=MODEL), state, DIPLOMACY)


def test_diplomacy_prepares_legal_orders_unit_blocks_and_answer_models():
    E.forget_positions()
    schemas._model_for.cache_clear()
    table = _diplomacy_table("ahead-test")
    DIPLOMACY.orders_at("order").prepare(table)
    made = schemas._model_for.cache_info()
    kept = position_of(table)._derived
    powers = DIPLOMACY.orders_at("order").actors(table)
    assert len(powers) == 7
    assert {k[1] for k in kept if isinstance(k, tuple) and k[0] == "units plan"} == set(powers)
    assert made.misses == 7  # one answer model per power (their units differ)
    # the order step's questions then build nothing new
    fresh = Table(table.scenario, table.context, table.state, DIPLOMACY)
    for power in powers:
        q = DIPLOMACY.orders_at("order").question(fresh, power)
        schemas.schema_for({"schema": q.schema, "schema_args": q.schema_args})
    after = schemas._model_for.cache_info()
    assert after.misses == made.misses and after.hits >= made.hits + 7


def test_the_order_question_is_the_same_with_or_without_preparing():
    def questions(prepared: bool) -> list[Any]:
        E.forget_positions()
        schemas._model_for.cache_clear()
        table = _diplomacy_table("ahead-same")
        if prepared:
            DIPLOMACY.orders_at("order").prepare(table)
        fresh = Table(table.scenario, table.context, table.state, DIPLOMACY)
        orders = DIPLOMACY.orders_at("order")
        return [orders.question(fresh, p) for p in orders.actors(fresh)]

    assert questions(True) == questions(False)


def test_negotiate_records_an_exchange_and_asks_the_next_in_one_step(scripted):
    steps: list[tuple[str, dict[str, Any]]] = []
    play(
        "diplomacy",
        overrides=["diplomacy.max_year=1901", "diplomacy.maps=none"],
        context=scripted(None),
        db=None,
        progress=lambda node, values: steps.append((node, values)),
    )
    negotiate = [v for node, v in steps if node == "negotiate"]
    movement = 2  # S1901M and F1901M, two exchanges each
    # ask x1; record x1 and ask x2; record x2 and move on (there were five steps: two to record)
    assert len(negotiate) == 3 * movement
    asked = [{a["id"].rsplit(".", 1)[-1] for a in v.get("asks") or []} for v in negotiate]
    assert asked == [{"x1"}, {"x2"}, set()] * movement
    recorded = [sum(e["kind"] == "message" for e in v.get("events") or []) for v in negotiate]
    assert recorded[0] == 0 and recorded[1] > 0 and recorded[2] > recorded[1]


@dataclasses.dataclass(frozen=True)
class CountingCast(Cast):
    rendered: list[str] = dataclasses.field(default_factory=list, compare=False)

    def render_view(self, table: Table, role: str, events: list[Any]) -> str:
        self.rendered.append(role)
        return super().render_view(table, role, events)


def test_a_seats_view_is_rendered_once_a_step_and_counted_each_time_it_is_given():
    cast = CountingCast()
    world = World("counted", cast=cast)
    sc = load_scenario("azuristan_crimsonia")
    events = [
        {
            "id": f"e{i}",
            "round": 1,
            "phase": "talk",
            "kind": "message",
            "author": "x",
            "audience": ["*"],
            "text": "word " * (40 * i + 1),
        }
        for i in range(4)
    ]
    table = Table(sc, GameContext(), {"round": 1, "phase": "talk", "events": events}, world)
    role = next(iter(sc.players))
    tallies = []
    for _ in range(2):
        with counting() as tally:
            text = table.view_text(role)
        tallies.append(tally.as_dict())
    assert cast.rendered == [role]
    assert tallies[0] == tallies[1] and tallies[0]["items"] >= 4
    assert table.view_text(role) == text
    # another step's table renders its own
    Table(sc, GameContext(), table.state, world).view_text(role)
    assert cast.rendered == [role, role]


def test_the_diaries_asked_are_found_again_when_they_are_recorded(scripted):
    """`summarize` records from `Diary.asked` on the state the answers came back in: at every
    step that asked diaries, what it asked is what `asked` names there, each answered; and the
    digest is asked where entries of an earlier year wait (spring 1902)."""
    sc = load_scenario("diplomacy", ["diplomacy.max_year=1902", "diplomacy.maps=none"])
    g = D.build(sc).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "diaries"}, "recursion_limit": 2000}
    g.invoke({"scenario": sc.model_dump()}, cfg, context=scripted(None))
    history = list(g.get_state_history(cfg))  # newest first
    checked, tasks = 0, set()
    for answered, snap in zip(history, history[1:], strict=False):
        asks = [a for a in snap.values.get("asks") or [] if a["phase"] == "summarize"]
        if not asks:
            continue
        state = {**answered.values, "phase": "summarize"}  # after the seats' step
        table = Table(sc, scripted(None), state, DIPLOMACY)
        for power in sorted({a["role"] for a in asks}):
            ids = [table.ask_id(t, power, k) for k, t in DIPLOMACY.diary.asked(table, power)]
            assert ids == [a["id"] for a in asks if a["role"] == power]
            assert all(i in state["pending"] for i in ids)
            tasks.update(a["task"] for a in asks)
            checked += 1
    assert checked >= 14 and tasks == {"diary", "digest"}


def _orders_at(table: Table) -> dict[str, list[str]]:
    """An order per unit: each unit's first move where it has one, else its first order."""
    out = {}
    for power in DIPLOMACY.orders_at("order").actors(table):
        legal = DIPLOMACY.orders_at("order").question(table, power).schema_args["legal"]
        out[power] = [next((o for o in opts if " - " in o), opts[0]) for opts in legal.values()]
    return out


def test_an_adjudication_on_the_engine_loaded_ahead_is_the_same():
    E.forget_positions()
    table = _diplomacy_table("ahead-spare")
    saved, orders = table.state["world"]["diplomacy"], _orders_at(table)
    plain = E.adjudicate(saved, orders)
    DIPLOMACY.resolution.prepare(table)
    spare = position_of(table).take_spare(saved)
    assert spare is not None and position_of(table).take_spare(saved) is None  # taken once
    assert E.adjudicate(saved, orders, spare=spare) == plain


def test_a_spare_loaded_from_another_phase_is_not_taken():
    E.forget_positions()
    table = _diplomacy_table("ahead-other")
    saved = table.state["world"]["diplomacy"]
    position_of(table).make_spare(saved)
    other = {**saved, "phases": [*saved["phases"][:-1], {**saved["phases"][-1], "extra": 1}]}
    assert position_of(table).take_spare(other) is None


def test_a_game_with_work_done_ahead_records_what_one_without_does(tmp_path, monkeypatch):
    """Against a loopback endpoint (every seat a model): the record is the same event for event
    with the jobs done ahead and with none."""
    from benchmarks.fake_endpoint import FakeEndpoint

    def record(folder: str) -> list[dict[str, Any]]:
        E.forget_positions()
        schemas._model_for.cache_clear()
        out = play(
            "diplomacy",
            overrides=["diplomacy.max_year=1901", "diplomacy.maps=none"],
            context=GameContext(model=endpoint.model(), seed=1, call_timeout=30),
            db=None,
            out_dir=tmp_path / folder,
        )
        ahead.settled(timeout=30)
        assert out.finished
        return out.values["events"]

    # answers after 0.2 s: the engine loaded during the orders' wave is ready for the adjudication
    with FakeEndpoint(latency_s=0.2, log_dir=tmp_path) as endpoint:
        jobs: list[int] = []
        queue = ahead._submit
        monkeypatch.setattr(
            ahead, "_submit", lambda job, game="": jobs.append(1) or queue(job, game)
        )
        spares: list[bool] = []
        take = E.Position.take_spare

        def taken(self: E.Position, saved: Any) -> Any:
            game = take(self, saved)
            spares.append(game is not None)
            return game

        monkeypatch.setattr(E.Position, "take_spare", taken)
        with_ahead = record("ahead")
        # jobs were queued, and every adjudication (the movement phases', whose talks add
        # messages to the phase after the first jobs, included) took the engine loaded ahead
        assert jobs and spares == [True, True, True]
        monkeypatch.setattr(ahead, "preparing_parts", lambda world: [])
        without = record("none")
    assert with_ahead == without
