"""A fork server for the kill-and-resume tests: imports wargraph once, then forks one child per
game, which a hook (or this server, after a delay) kills with SIGKILL.

Why a fork server: importing langgraph and the game families takes ~2 s, a scripted game
~0.1 s; forking a warm, single-threaded process makes each kill point cost ~0.1 s instead of a
fresh interpreter. The killed child is still a real process killed by a real SIGKILL, writing a
real SQLite file or a real PostgreSQL database.

Protocol (one JSON object per line): the test writes a job on stdin; this server answers with
{"pid", "signal", "exit", "seconds"} on stdout once the child is gone.

Job fields: scenario, overrides, seed, db, thread_id, out_dir, mode ("play" | "resume"),
kill_at ("decide" | "write" | "committed" | null), k (kill on the k-th such call),
kill_after (seconds, the server kills the child then), counts (a JSON file the child writes its
call counts to when it finishes), log (the child's stdout/stderr).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any

# Warm imports before any fork (the families that exist in this work tree).
import wargraph.runs.runner  # noqa: F401
from wargraph.kernel.context import GameContext

for _family in ("crisis", "flow", "tabletop", "waragent", "diplomacy"):
    # a family still being written may not import yet: its tests are skipped by the suite
    with contextlib.suppress(Exception):
        importlib.import_module(f"wargraph.graphs.{_family}.graph")


class Hooks:
    """Counts decider calls and checkpoint writes; kills this process at the chosen one."""

    def __init__(self, kill_at: str | None, k: int) -> None:
        self.kill_at, self.k = kill_at, k
        self.counts = {"decide": 0, "write": 0, "committed": 0}
        self.lock = threading.Lock()

    def hit(self, what: str) -> None:
        with self.lock:
            self.counts[what] += 1
            fire = what == self.kill_at and self.counts[what] == self.k
        if fire:
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(10)  # never reached: SIGKILL cannot be caught

    def install(self) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from wargraph.seats.scripted import ScriptedDecider

        hooks = self
        decide = ScriptedDecider.decide

        def counted_decide(self, ask, schema, *, memory=""):
            value = decide(self, ask, schema, memory=memory)
            hooks.hit("decide")  # killed while the "model call" is under way, before it returns
            return value

        cursor = SqliteSaver.cursor

        @contextmanager
        def counted_cursor(self, transaction: bool = True):
            with cursor(self, transaction) as cur:
                yield cur
                if transaction:
                    # The INSERT has run, the COMMIT has not: killed in the middle of the write.
                    hooks.hit("write")
            if transaction:
                hooks.hit("committed")  # killed just after a write was committed

        ScriptedDecider.decide = counted_decide  # type: ignore[method-assign]
        SqliteSaver.cursor = counted_cursor  # type: ignore[method-assign]
        self.install_postgres()

    def install_postgres(self) -> None:
        """The same points on PostgreSQL: a write is a transaction of the saver's cursor."""
        from wargraph.store.saver import saver_class

        hooks = self
        cls = saver_class("postgres")
        pg_cursor = cls._cursor

        @contextmanager
        def counted_pg_cursor(self, *, pipeline: bool = False):
            with pg_cursor(self, pipeline=pipeline) as cur:
                yield cur
                if pipeline:
                    hooks.hit("write")  # statements sent, transaction not committed
            if pipeline:
                hooks.hit("committed")

        cls._cursor = counted_pg_cursor  # type: ignore[method-assign]


def run_child(job: dict[str, Any]) -> None:
    from wargraph.runs.runner import play, resume

    hooks = Hooks(job.get("kill_at"), int(job.get("k") or 0))
    hooks.install()
    if job.get("mode") == "resume":
        resume(db=job["db"], thread_id=job["thread_id"], out_dir=job.get("out_dir"))
    else:
        play(
            job["scenario"],
            overrides=job.get("overrides") or None,
            context=GameContext(model="scripted", seed=int(job["seed"])),
            db=job["db"],
            thread_id=job["thread_id"],
            out_dir=job.get("out_dir"),
        )
    if job.get("counts"):
        with open(job["counts"], "w", encoding="utf-8") as fh:
            json.dump(hooks.counts, fh)


def serve() -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        out.flush()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # the child: plays, and is killed or exits
            code = 0
            try:
                log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(log, 1)
                os.dup2(log, 2)
                run_child(job)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        delay = job.get("kill_after")
        reaped, status = 0, 0
        if delay is not None:
            # The child stays unreaped until waitpid, so its pid cannot be reused meanwhile.
            deadline = time.perf_counter() + float(delay)
            while time.perf_counter() < deadline and not reaped:
                reaped, status = os.waitpid(pid, os.WNOHANG)
                time.sleep(0.002)
            if not reaped:
                os.kill(pid, signal.SIGKILL)
        if not reaped:
            _, status = os.waitpid(pid, 0)
        result = {
            "pid": pid,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "seconds": round(time.perf_counter() - start, 4),
        }
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    serve()
