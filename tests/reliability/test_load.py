"""Load: 20 games at once on a real LangGraph server (`langgraph dev` on loopback, started in a
temporary folder, always stopped), driven with langgraph-sdk, every seat on the scripted decider
(seeded, plays no strategy). Each game must finish with the record the same game gives alone in
this process: nothing from one game in another. The same load in process (threads, one store
shared by 20 thread ids: a SQLite file, and PostgreSQL) runs without a server."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.reliability._support import Family
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import build_for, game_graph, play
from wargraph.store.saver import open_saver

GAMES = 20
# (graph id on the server, its default scenario, overrides): families mixed, seeds all different
MIX: list[tuple[str, str, dict[str, Any]]] = [
    ("crisis", "azuristan_crimsonia", {"rounds": 2}),
    ("flow", "summit", {"rounds": 2}),
    ("tabletop", "haiwire", {"rounds": 2}),
    ("waragent", "wwi", {"rounds": 1}),
    ("diplomacy", "diplomacy", {"diplomacy.max_year": 1901, "diplomacy.negotiation_rounds": 1}),
]


def plan() -> list[dict[str, Any]]:
    games = []
    for i in range(GAMES):
        graph_id, scenario, overrides = MIX[i % len(MIX)]
        if not Family(graph_id, scenario).available():
            graph_id, scenario, overrides = MIX[0]
        games.append(
            {"graph": graph_id, "scenario": scenario, "overrides": overrides, "seed": 100 + i}
        )
    return games


def alone(game: dict[str, Any]) -> dict[str, Any]:
    """The same game, played alone in this process (JSON round trip, as the API returns it)."""
    sc = load_scenario(game["scenario"], game["overrides"])
    graph = build_for(sc).compile(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"scenario": game["scenario"], "overrides": game["overrides"]},
        {"configurable": {"thread_id": "alone"}, "recursion_limit": 10_000},
        context=GameContext(model="scripted", seed=game["seed"]),
    )
    return json.loads(json.dumps({"events": out["events"], "world": out["world"]}))


def assert_separate(games: list[dict[str, Any]], finals: list[dict[str, Any]]) -> None:
    texts = []
    for game, final in zip(games, finals, strict=True):
        assert final.get("done") is True and not final.get("error"), (game, final.get("error"))
        expected = alone(game)
        assert final["events"] == expected["events"], f"game {game} differs from playing it alone"
        assert final["world"] == expected["world"], game
        texts.append(json.dumps(final["events"]))
    assert len(set(texts)) == len(texts), "two games with different seeds have the same record"


@pytest.mark.server
@pytest.mark.timeout(420)
def test_twenty_games_at_once_on_the_langgraph_server(tmp_path):
    from langgraph_sdk import get_sync_client

    from wargraph.server.serve import free_port, running

    games = plan()
    with running(
        port=free_port(),
        state_dir=tmp_path / "state",
        log_path=tmp_path / "server.log",
        jobs=GAMES,
    ) as server:
        client = get_sync_client(
            url=server.url,
            api_key=None,
            headers={"Authorization": f"Bearer {server.facilitator_token}"},
            timeout=120,
        )
        started = time.monotonic()
        runs = []
        for game in games:  # all submitted before any is awaited: they run at once
            thread = client.threads.create(metadata={"load_test": game["seed"]})
            run = client.runs.create(
                thread["thread_id"],
                game["graph"],
                input={"scenario": game["scenario"], "overrides": game["overrides"]},
                context={"model": "scripted", "seed": game["seed"]},
            )
            runs.append((thread["thread_id"], run["run_id"]))
        peak = max_in_flight(client, runs)
        for thread_id, run_id in runs:
            client.runs.join(thread_id, run_id)
        seconds = time.monotonic() - started
        statuses = [client.runs.get(t, r)["status"] for t, r in runs]
        assert statuses == ["success"] * GAMES, (statuses, server.log_tail())
        finals = [client.threads.get_state(t)["values"] for t, _ in runs]
    assert peak > 1, "the games never ran at the same time"
    assert_separate(games, finals)
    print(f"{GAMES} games on the server in {seconds:.1f} s, up to {peak} at once")


def max_in_flight(client, runs: list[tuple[str, str]], limit_s: float = 120.0) -> int:
    """How many runs were running at once (polled until all have left the queue)."""
    peak, deadline = 0, time.monotonic() + limit_s
    while time.monotonic() < deadline:
        statuses = [client.runs.get(t, r)["status"] for t, r in runs]
        peak = max(peak, statuses.count("running"))
        if all(s not in ("pending", "running") for s in statuses):
            break
        time.sleep(0.05)
    return peak


@pytest.mark.timeout(300)
def test_twenty_games_at_once_in_process_on_one_store(store_db):
    games = plan()
    db = store_db

    def run(i: int) -> dict[str, Any]:
        game = games[i]
        result = play(
            game["scenario"],
            overrides=game["overrides"],
            context=GameContext(model="scripted", seed=game["seed"]),
            db=db,
            thread_id=f"load-{i}",
        )
        return json.loads(json.dumps(result.values))

    with ThreadPoolExecutor(max_workers=GAMES) as pool:
        finals = list(pool.map(run, range(GAMES)))
    assert_separate(games, finals)
    # and each thread's checkpoints hold its own game only
    with open_saver(db) as saver:
        for i, game in enumerate(games):
            # read back through the game's graph: the record is a DeltaChannel, rebuilt from the
            # writes of this thread's checkpoints
            sc = load_scenario(game["scenario"], game["overrides"])
            config = {"configurable": {"thread_id": f"load-{i}"}}
            state = game_graph(sc, saver).get_state(config)
            stored = json.loads(json.dumps(state.values["events"]))
            assert stored == finals[i]["events"], game
