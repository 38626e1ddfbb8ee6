"""A driver for the Ray fault test, run as a script inside its own network namespace (so Ray
binds loopback only): it runs an experiment on a local Ray instance and writes what happened
to a JSON file. Its worker hook stops one chosen game on its first attempt and waits there to
be killed; every attempt logs its steps to `<marks>/<thread>.<pid>.nodes`.

    python _ray_driver.py EXPERIMENT.yaml OUT DB MARKS VICTIM_THREAD STOP_AT NUM_CPUS
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


class StopOnce:
    """Runs on the workers (pickled by value, as part of this script)."""

    def __init__(self, marks: str, victim: str, stop_at: int) -> None:
        self.marks, self.victim, self.stop_at = marks, victim, stop_at
        self.steps = 0

    def __call__(self, plan, node: str) -> None:
        marks = Path(self.marks)
        with open(marks / f"{plan.thread_id}.{os.getpid()}.nodes", "a") as fh:
            fh.write(node + "\n")
        if plan.thread_id != self.victim:
            return
        self.steps += 1
        first = marks / "victim.pid"
        if self.steps == self.stop_at and not first.exists():
            tmp = marks / "victim.pid.tmp"
            tmp.write_text(str(os.getpid()))
            tmp.replace(first)
            time.sleep(600)  # mid-game: the test kills this worker here


def main() -> int:
    exp_file, out, db, marks, victim, stop_at, cpus = sys.argv[1:8]
    from wargraph.evals.experiment import load_experiment
    from wargraph.evals.experiment.cluster import run_experiment_on_ray

    exp = load_experiment(exp_file)
    res = run_experiment_on_ray(
        exp,
        out,
        address="local",
        db=db,
        num_cpus=int(cpus),
        worker_hook=StopOnce(marks, victim, int(stop_at)),
        show_progress=False,
        report=False,
    )
    summary = {
        "counts": dict(res.counts),
        "workers": res.workers,
        "how": {o["thread_id"]: o["how"] for o in res.outcomes},
    }
    Path(out, "summary.json").write_text(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
