"""Running an experiment's games as Ray tasks on a shared checkpoint store.

Each game is one Ray task. The task plays the game's thread through the runner (which holds
the game's lease in the store) or continues it from the last checkpoint, judges and measures the record in a scratch folder of
its own machine, and returns the game's files. The driver writes them where the experiment's
output lives (`<out>/games/...`, as without Ray), so reports, re-judging and resuming work
the same. A worker killed mid-game is replaced by Ray and the task runs again: it finds the
checkpoints the dead worker committed and continues from there.

`play_task` and `Board` run on the workers, so this module imports Ray only inside functions
(the rest of the package works without the `scale` extra)."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wargraph.evals.experiment.game import (
    Keys,
    known_parts,
    outcome_of_game,
    play_or_resume,
    write_json,
)
from wargraph.evals.experiment.lock import folder_lock
from wargraph.evals.experiment.plan import GamePlan, plan_games
from wargraph.evals.experiment.progress import ProgressView
from wargraph.evals.experiment.run import (
    ExperimentResult,
    Hooks,
    Run,
    finish_run,
    out_path,
    start_run,
    with_cache,
)
from wargraph.evals.experiment.spec import Experiment, ExperimentError
from wargraph.evals.experiment.stores import check_store
from wargraph.store.errors import is_url
from wargraph.store.lease import GameHeld


def first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0].strip()


def last_line(err: BaseException) -> str:
    """A remote task's error ends with its own message, after the remote traceback."""
    return (str(err).strip().splitlines() or [type(err).__name__])[-1].strip()


RECORD = "record.json"  # written last: a game folder with a record is complete
WorkerHook = Callable[[GamePlan, str], None]


class Board:
    """A Ray actor the games report their steps to; the driver drains it to show progress."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, str, int]] = []

    def report(self, kind: str, thread_id: str, node: str, pid: int) -> None:
        self.items.append((kind, thread_id, node, pid))

    def drain(self) -> list[tuple[str, str, str, int]]:
        items, self.items = self.items, []
        return items


def play_task(
    exp: Experiment,
    plan: GamePlan,
    db: str,
    keys: Keys,
    known: tuple[dict[str, Any] | None, str, list[dict[str, Any]] | None],
    board: Any,
    hook: WorkerHook | None = None,
) -> dict[str, Any]:
    """One game on a worker: its outcome, how it was reached, its files and the worker's pid;
    or `{"held": reason}` when another process is playing it."""
    pid = os.getpid()
    board.report.remote("start", plan.thread_id, "", pid)

    def progress(node: str, _values: dict[str, Any]) -> None:
        board.report.remote("node", plan.thread_id, node, pid)
        if hook is not None:
            hook(plan, node)

    record, how, judged = known
    with tempfile.TemporaryDirectory(prefix="wargraph-game-") as tmp:
        gdir = Path(tmp)
        try:
            if record is None:  # the runner holds the game's lease while it plays
                record, how = play_or_resume(plan, db, gdir, progress)
            else:
                write_json(gdir / "record.json", record)  # measures read it from disk
            outcome = outcome_of_game(exp, plan, record, gdir, keys, how, judged)
        except GameHeld as err:
            return {"held": str(err)}
        # every file the game and its measures wrote (Diplomacy adds maps and figures)
        files = {str(f.relative_to(gdir)): f.read_bytes() for f in gdir.rglob("*") if f.is_file()}
    return {"outcome": outcome, "how": how, "files": files, "pid": pid}


def write_game_files(gdir: Path, files: dict[str, bytes]) -> None:
    """The files of one game as a set: the record of an earlier attempt goes first, each file
    is replaced whole, and the record comes last."""
    gdir.mkdir(parents=True, exist_ok=True)
    (gdir / RECORD).unlink(missing_ok=True)
    for name in sorted(files, key=lambda n: n == RECORD):
        target = gdir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(files[name])
        tmp.replace(target)


RAY_CONNECT_S = 5.0  # a cluster's head answers a TCP connection at once


def cluster_unreachable(address: str, timeout: float = RAY_CONNECT_S) -> str | None:
    """Why no Ray cluster can answer at `address` (host:port, or ray://host[:port]), or None.
    Asked with one TCP connection first: `ray.init` at an address where nothing listens kept
    retrying for minutes (still at 500 s) while the command held the output folder's lock."""
    import socket
    from urllib.parse import urlsplit

    client = address.startswith("ray://")
    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    try:
        host, port = parts.hostname, parts.port or (10001 if client else 6379)
    except ValueError:
        return "not an address of the form HOST:PORT or ray://HOST:PORT"
    if not host:
        return "not an address of the form HOST:PORT or ray://HOST:PORT"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as err:
        return (
            f"no Ray cluster answers at {host}:{port} ({err.strerror or err}); start one there "
            "(ray start --head) or give --ray auto for one on this machine"
        )


def connect_ray(address: str, num_cpus: int | None = None) -> bool:
    """Join the cluster at `address` ("auto": the one this machine belongs to, else a new
    local instance; "local": always a new local instance). True when this process started
    the instance (and so shuts it down at the end). Offline: no dashboard, no usage stats."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise ExperimentError(
            "--ray needs the `scale` extra: pip install 'wargraph[scale]'"
        ) from None
    quiet: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR"}
    if ray.is_initialized():
        return False
    if address not in ("auto", "local"):
        why = cluster_unreachable(address)
        if why:
            raise ExperimentError(f"--ray {address}: {why}")
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise ExperimentError(
                f"--ray {address}: cannot join the Ray cluster ({first_line(err)})"
            ) from None
        return False
    if address == "auto":
        try:
            ray.init(address="auto", **quiet)
            return False
        except ConnectionError:
            pass  # no cluster on this machine: start one for this experiment
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private instance, on loopback
    ray.init(num_cpus=num_cpus, _node_ip_address="127.0.0.1", **quiet)
    return True


@dataclass
class TaskOptions:
    """How the driver runs games as tasks (see `run_experiment_on_ray`)."""

    store: str
    retries: int = 3
    cpus_per_game: float = 1.0
    worker_hook: WorkerHook | None = None
    held_wait_s: float = 1.0


def run_experiment_on_ray(
    exp: Experiment,
    out_dir: str | Path | None = None,
    *,
    address: str = "auto",
    db: str | Path | None = None,
    num_cpus: int | None = None,
    cpus_per_game: float = 1.0,
    retries: int = 3,
    hooks: Hooks | None = None,
    worker_hook: WorkerHook | None = None,
    show_progress: bool = True,
    console: Any = None,
    report: bool = True,
    held_wait_s: float = 1.0,
    plans: list[GamePlan] | None = None,
    pages: bool = False,
) -> ExperimentResult:
    """Run every game not yet finished as a Ray task, then write the report (and with `pages`
    each game's page, after the games).

    `db`: the shared checkpoint store, a `postgresql://` URL for a cluster (default: the
    experiment's SQLite file, which only works when every worker is on this machine).
    `num_cpus`: the CPUs of a local instance started here. `cpus_per_game`: what Ray reserves
    per game (a game that waits on an inference endpoint needs a fraction of a CPU, so 0.25
    runs four games per CPU). `retries`: how often Ray runs a game again after its worker
    died. A game another driver is playing is tried again `held_wait_s` later and then
    continues from the store (finished by then, it is only judged). `worker_hook(plan, node)`
    runs on the worker after each step (tests use it to find the worker to kill). On Ctrl-C
    the running games are stopped where they are; their checkpoints stay and the next run
    continues them. `plans`: the games to play, when another planner made them."""
    out = out_path(exp, out_dir)
    plans = plan_games(exp) if plans is None else plans
    store = str(db) if db is not None else str(out / "checkpoints.sqlite")
    if address not in ("auto", "local") and not is_url(store):
        raise ExperimentError(
            f"--ray {address}: workers on other machines need a shared store; give "
            "--db postgresql://USER@HOST/DATABASE"
        )
    if not 0 < cpus_per_game <= 64:
        raise ExperimentError(f"cpus per game {cpus_per_game}: give a number in (0, 64]")
    check_store(store)
    plans = with_cache(exp, plans, store)
    opts = TaskOptions(store, retries, cpus_per_game, worker_hook, held_wait_s)
    with folder_lock(out):
        run = start_run(exp, out, plans)
        started_here = connect_ray(address, num_cpus)
        try:
            view = ProgressView(
                exp, run.plans, run.result.counts["skipped"], show_progress, console
            )
            _drive_tasks(run, opts, hooks or Hooks(), view)
            return finish_run(run, view.crashed, report, pages)
        finally:
            if started_here:
                import ray

                ray.shutdown()


def _drive_tasks(run: Run, opts: TaskOptions, hooks: Hooks, view: ProgressView) -> None:
    import ray
    from ray.exceptions import RayError

    board: Any = ray.remote(num_cpus=0)(Board).remote()  # an actor handle: methods are dynamic
    task = ray.remote(num_cpus=opts.cpus_per_game, max_retries=opts.retries)(play_task)
    by_thread = {p.thread_id: p for p in run.plans}

    def submit(plan: GamePlan) -> Any:
        known = known_parts(run.exp, run.out, plan, run.keys)
        return task.remote(run.exp, plan, opts.store, run.keys, known, board, opts.worker_hook)

    running = {submit(p): p for p in run.todo}
    waiting: list[tuple[float, GamePlan]] = []  # games another driver holds, tried again later
    try:
        with view:
            while running or waiting:
                ready = (
                    ray.wait(list(running), num_returns=len(running), timeout=0.2)[0]
                    if running
                    else []
                )
                for kind, tid, node, _pid in ray.get(board.drain.remote()):
                    plan = by_thread[tid]
                    if kind == "start":
                        view.started(plan)
                    else:
                        view.node(plan, node)
                        if hooks.node:
                            hooks.node(plan, node)
                for ref in ready:
                    plan = running.pop(ref)
                    try:
                        res = ray.get(ref)
                    except RayError as exc:
                        run.crashed(plan, last_line(exc)[:300], view)
                        continue
                    if "held" in res:
                        waiting.append((time.monotonic() + opts.held_wait_s, plan))
                        continue
                    _keep(run, view, hooks, plan, res)
                now = time.monotonic()
                for item in [w for w in waiting if w[0] <= now]:
                    waiting.remove(item)
                    running[submit(item[1])] = item[1]
                if not running and waiting:
                    time.sleep(max(0.0, min(w[0] for w in waiting) - time.monotonic()))
    except BaseException:
        for ref in running:
            ray.cancel(ref, force=True)  # the games stop where they are; checkpoints stay
        raise


def _keep(run: Run, view: ProgressView, hooks: Hooks, plan: GamePlan, res: dict[str, Any]) -> None:
    """A finished game's files and outcome, written into the experiment's folder."""
    gdir = run.out / plan.folder
    outcome, how = res["outcome"], res["how"]
    if how in ("played", "resumed"):
        write_game_files(gdir, res["files"])
    write_json(gdir / "outcome.json", outcome)
    run.result.workers[plan.thread_id] = res["pid"]
    run.done(plan, outcome, how, view, hooks)
