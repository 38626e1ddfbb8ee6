"""Games of bots in worker processes (`workers`, `wargraph.evals.experiment.procs`): the same
tournament results as in threads for the same seeds, the games played in other processes, a
scores read from the outcomes equal to the records', Ctrl-C stopping the workers with the run
resuming after it, and the cases that keep games in threads."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from wargraph.evals.experiment import Hooks, load_experiment, plan_games, run_experiment
from wargraph.evals.experiment.procs import can_fork, choose
from wargraph.evals.tournament import load_tournament, run_tournament
from wargraph.evals.tournament.results import seat_scores

pytestmark = pytest.mark.slow  # two eight-game tournaments of scripted bots

TOURNAMENT = {
    "name": "workers",
    "scenario": "diplomacy",
    "set": {
        "diplomacy.max_year": 1901,
        "diplomacy.negotiation_rounds": 0,
        "diplomacy.diary": False,
        "diplomacy.maps": "none",
    },
    "entrants": {
        "greedy": {"model": "bot:greedy"},
        "hold": {"model": "bot:hold"},
        "random": {"model": "bot:random_legal"},
        "scripted": {"model": "scripted"},
    },
    "rotations": 2,
    "score": "centres",
    "concurrency": 2,
    "seed": 3,
}


def standing_of(result):
    st = result.standing
    return {
        "rows": [(r["game"], r["seats"], r["scores"], r["ranking"]) for r in st.rows],
        "fit": st.fit.table(),
        "crosstable": st.crosstable,
        "openskill": st.openskill,
        "per_seat": st.per_seat,
    }


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    out = tmp_path_factory.mktemp("workers")
    results = {}
    for workers in ("threads", "processes"):
        t = load_tournament({**TOURNAMENT, "workers": workers})
        results[workers] = run_tournament(t, out / workers, show_progress=False)
    return out, results


def test_processes_give_the_results_threads_give(both):
    needs_fork()
    _, results = both
    assert len(results["processes"].standing.rows) == 8
    assert standing_of(results["processes"]) == standing_of(results["threads"])


def test_scores_kept_in_the_outcome_are_the_records(both):
    out, results = both
    t = load_tournament(TOURNAMENT)
    seats = list(results["threads"].standing.rows[0]["scores"])
    for row in results["threads"].standing.rows:
        gdir = out / "threads" / row["folder"]
        outcome = __import__("json").loads((gdir / "outcome.json").read_text(encoding="utf-8"))
        from_outcome = seat_scores(t.score, seats, gdir, outcome)
        from_record = seat_scores(t.score, seats, gdir, {**outcome, "measures": {}})
        assert from_outcome == from_record == row["scores"]


def tiny_experiment(**changes):
    return load_experiment(
        {
            "name": "tiny",
            "scenario": "azuristan_crimsonia",
            "set": {"rounds": 1, "questions": []},
            "runs": 3,
            "model": "scripted",
            "concurrency": 2,
            **changes,
        }
    )


def needs_fork() -> None:
    """Workers are forked only by a process with no other thread (a test before may leave one)."""
    if not can_fork():
        pytest.skip("this process has other threads (or is not on Linux): games stay in threads")


def test_games_run_in_worker_processes_that_end_with_the_run(tmp_path):
    needs_fork()
    res = run_experiment(tiny_experiment(), tmp_path, show_progress=False, report=False)
    assert res.counts["played"] == 3
    pids = set(res.workers.values())
    assert len(res.workers) == 3 and os.getpid() not in pids and 1 <= len(pids) <= 2
    assert not multiprocessing.active_children()


def test_ctrl_c_stops_the_workers_and_the_run_resumes(tmp_path):
    exp = tiny_experiment(runs=6)

    def interrupt(_outcome, _how):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, tmp_path, show_progress=False, report=False, hooks=Hooks(interrupt))
    assert not multiprocessing.active_children()
    again = run_experiment(exp, tmp_path, show_progress=False, report=False)
    done = again.counts["skipped"] + again.counts["played"] + again.counts["resumed"]
    assert again.counts["skipped"] >= 1 and done == 6
    assert all(o["status"] == "done" for o in again.outcomes)


def test_games_on_models_or_with_a_node_hook_stay_in_threads(tmp_path):
    exp = tiny_experiment()
    plans = plan_games(exp)
    needs_fork()
    assert choose("auto", exp, plans, 2) == 2
    assert choose("threads", exp, plans, 2) == 0
    assert choose("auto", exp, plans, 1) == 0  # one game at a time: nothing to gain
    on_endpoint = tiny_experiment(model="openai:m@http://127.0.0.1:9/v1")
    assert choose("auto", on_endpoint, plan_games(on_endpoint), 2) == 0
    assert choose("processes", on_endpoint, plan_games(on_endpoint), 2) == 2
    judged = tiny_experiment(
        questions=[{"id": "q", "text": "Did it end?"}],
        judge={"model": "openai:m@http://127.0.0.1:9/v1"},
    )
    assert choose("auto", judged, plan_games(judged), 2) == 0
    seen: list[str] = []
    res = run_experiment(
        exp,
        tmp_path,
        show_progress=False,
        report=False,
        hooks=Hooks(node=lambda p, n: seen.append(n)),
    )
    assert res.counts["played"] == 3 and seen and not res.workers  # in this process's threads
