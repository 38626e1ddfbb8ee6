"""One dead worker costs its own game at most (issue 40, item 5): a worker process SIGKILLed in
the middle of a run (as the kernel's out-of-memory killer does) ends the game it was playing,
if any, with one line naming it; the other games play on (in the workers left, or here once
none is left) and the next run resumes what was lost. Real forked workers, scripted seats."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from tests.unit.test_tournament_workers import needs_fork, tiny_experiment
from wargraph.evals.experiment import Hooks, run_experiment

pytestmark = pytest.mark.slow  # two runs of six one-round games


@pytest.mark.parametrize("kills", [1, 2])
def test_a_killed_worker_costs_its_own_game_at_most(tmp_path, kills, capfd):
    needs_fork()
    exp = tiny_experiment(runs=6)
    killed: list[int] = []

    def kill_workers(_outcome, _how):
        if not killed:
            for child in multiprocessing.active_children()[:kills]:
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)

    res = run_experiment(
        exp, tmp_path, show_progress=False, report=False, hooks=Hooks(game_done=kill_workers)
    )
    assert len(killed) == kills
    assert res.counts["crashed"] <= kills
    assert res.counts["played"] + res.counts["crashed"] == 6
    assert all(o["status"] == "done" for o in res.outcomes)
    assert not multiprocessing.active_children()
    assert "Traceback" not in capfd.readouterr().err
    again = run_experiment(exp, tmp_path, show_progress=False, report=False)
    assert all(o["status"] == "done" for o in again.outcomes) and len(again.outcomes) == 6
