"""Every seat of a phase in flight at once (issue 30): Diplomacy against a loopback
OpenAI-compatible endpoint that answers every call after 500 ms, next to AI_Diplomacy's figures
measured on the same kind of machine (the issue's table).

    python -m benchmarks.seats_at_once            # games to 1902
    python -m benchmarks.seats_at_once --quick    # games to 1901

Reported per game shape (no press, AI_Diplomacy's default; the shipped two negotiation rounds; one round; the diaries asked with the orders,
`diplomacy.diary=with_orders`): wall per movement phase (the time from one adjudication to the
next, the game's first phase left out: it pays the start-up), calls per phase / seats, the waves
of calls a movement phase waits for in series (requests that reach the endpoint together, from
its request log) and the overhead per wave beyond the latency, and requests in flight at the
endpoint (peak; mean over the time at least one is in flight). The shipped game is also played
with the limits before this change (4 calls per endpoint, LangGraph's default thread pool of
cores + 4) for a before/after in one run. CPU per movement phase with the instant scripted
decider comes from two scripted games of the shipped shape (to 1902 minus to 1901, over the
movement phases between).

Like for like: AI_Diplomacy's figures (`benchmarks.reference`: its CLI, its own pins, every
call over HTTP to a loopback stub answering after 500 ms) were measured at 0, 1 and 2
negotiation rounds: 2.17 s, 2.5 s and 2.93 s per movement phase (0 and 2 in one run alternated
with wargraph's phase_timeline; 1 in an earlier run). Each row here is set next to
the figure at its own rounds (the diaries-with-orders row: 2 rounds). wargraph's side: this
process (the code `wargraph play` runs, without its start-up, which no row counts), the runner's
SQLite store, the same kind of stub; no maps (a game draws them after its last phase, outside
every timed phase).

Target (ratio to AI_Diplomacy at the same rounds): wall per movement phase <= 0.6x with no
press. CPU per movement phase is measured like for like by `benchmarks.like_for_like` (the CLI,
the default store); the scripted figure here (in this process, in-memory checkpoints, no HTTP)
is printed for reference, with no ratio: it is not the shape AI_Diplomacy's CPU ran in.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.common import (
    console,
    finish,
    load_average,
    result_payload,
    rich_table,
    target,
    targets_table,
)
from benchmarks.phase_timeline import waves_of
from benchmarks.reference import AI_DIPLOMACY_RUN, IN_FLIGHT, WALL_BY_ROUNDS, ai_diplomacy_waves

NAME = "seats_at_once"
LATENCY_S = 0.5
SEATS = 7
WALL_RATIO_LIMIT = 0.6


SHAPES = {
    # AI_Diplomacy's default: no negotiation round
    "no press": ["diplomacy.negotiation_rounds=0"],
    "shipped": [],  # 2 negotiation rounds, diaries, orders
    "one negotiation round": ["diplomacy.negotiation_rounds=1"],
    # the diaries asked in the orders' step: the orders read the diary of the phase before
    "diaries with orders": ["diplomacy.diary=with_orders"],
}
BASE = ["diplomacy.maps=none"]


def _adjudicated(values: dict[str, Any]) -> str:
    """The name of the phase the engine just processed ("" when it cannot be read)."""
    try:
        phases = values["world"]["diplomacy"]["phases"]
        return str(phases[-2]["name"])
    except (KeyError, IndexError, TypeError):
        return ""


@contextlib.contextmanager
def old_limits() -> Iterator[None]:
    """The limits before issue 30: 4 calls per endpoint, LangGraph's default thread pool."""
    import wargraph.models.chat as models
    import wargraph.runs.runner as runner

    before_workers = runner.step_workers
    before = models.set_endpoint_concurrency(4)
    runner.step_workers = lambda seats=0: None  # type: ignore[assignment,return-value]
    try:
        yield
    finally:
        runner.step_workers = before_workers
        models.set_endpoint_concurrency(before)


def play_against(
    endpoint: Any,
    overrides: list[str],
    year: int,
    folder: Path,
    progress: Callable[[str, dict[str, Any]], None],
) -> None:
    """One Diplomacy game to `year` whose seven seats call `endpoint`, stored in `folder`."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    play(
        "diplomacy",
        overrides=[*BASE, f"diplomacy.max_year={year}", *overrides],
        context=GameContext(model=endpoint.model(), seed=0, call_timeout=30),
        db=folder / "game.sqlite",
        out_dir=folder / "out",
        progress=progress,
    )


def endpoint_game(endpoint: Any, overrides: list[str], year: int, workdir: Path) -> dict[str, Any]:
    """One Diplomacy game whose seven seats call `endpoint`; wall per movement phase and the
    endpoint's requests in flight while it ran."""

    marks: list[tuple[float, str]] = []
    clock: list[float] = []  # the same marks in the endpoint's request log's clock

    def progress(node: str, values: dict[str, Any]) -> None:
        if node == "adjudicate":
            marks.append((time.perf_counter(), _adjudicated(values)))
            clock.append(time.time())

    folder = workdir / f"g{len(list(workdir.iterdir()))}"
    endpoint.stats()  # the peak counts from here
    endpoint.requests()  # and the request log
    first = endpoint.stats()
    start = time.perf_counter()
    play_against(endpoint, overrides, year, folder, progress)
    wall = time.perf_counter() - start
    last = endpoint.stats()
    log = endpoint.requests()
    spans = [(t - marks[i - 1][0], name) for i, (t, name) in enumerate(marks) if i > 0]
    moves = [s for s, name in spans if name.endswith("M")]
    # the waves of each timed movement phase: requests that reach the endpoint together
    move_waves = [
        len(waves_of([r for r in log if clock[i - 1] <= r["arrived"] < clock[i]]))
        for i, (_, name) in enumerate(marks)
        if i > 0 and name.endswith("M")
    ]
    waves = statistics.mean(move_waves) if move_waves else None
    wall = statistics.mean(moves) if moves else None
    requests = last["requests"] - first["requests"]
    busy = last["busy_s"] - first["busy_s"]
    phases = len(marks)
    return {
        "game_s": round(wall, 2),
        "phases": phases,
        "movement_phases_timed": len(moves),
        "wall_per_phase_s": round(wall, 3) if wall else None,
        "requests": requests,
        "waves_per_phase": round(requests / max(1, phases) / SEATS, 2),
        "waves_per_movement_phase": round(waves, 2) if waves else None,
        "overhead_per_wave_s": round((wall - LATENCY_S * waves) / waves, 3)
        if wall and waves
        else None,
        "peak_in_flight": last["peak_in_flight"],
        "mean_in_flight": round((last["in_flight_s"] - first["in_flight_s"]) / busy, 2)
        if busy
        else None,
    }


def rounds_of(shape: str) -> int:
    """The negotiation rounds a shape plays (the shipped scenario's 2 unless it says)."""
    for item in SHAPES.get(shape, []):
        if item.startswith("diplomacy.negotiation_rounds="):
            return int(item.partition("=")[2])
    return 2


def like_for_like(row: dict[str, Any]) -> dict[str, Any]:
    """AI_Diplomacy's wall per movement phase measured at the row's negotiation rounds, and the
    ratio."""
    rounds = rounds_of(row["shape"])
    ref = WALL_BY_ROUNDS[rounds]
    wall = row["wall_per_phase_s"]
    return {
        "rounds": rounds,
        "ai_diplomacy_waves": ai_diplomacy_waves(rounds),
        "ai_diplomacy_wall_s": ref.value,
        "ai_diplomacy_how": f"measured, {ref.brief or ref.load}",
        "x_ai_diplomacy": round(wall / ref.value, 3) if wall else None,
    }


def cpu_per_phase() -> dict[str, Any]:
    """Process CPU per movement phase with the instant scripted decider: (game to 1902 - game
    to 1901) / movement phases between, after a warm-up game (imports, compiled graphs)."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    def game(year: int) -> tuple[float, list[str]]:
        names: list[str] = []

        def progress(node: str, values: dict[str, Any]) -> None:
            if node == "adjudicate":
                names.append(_adjudicated(values))

        t = time.process_time()
        play(
            "diplomacy",
            overrides=[*BASE, f"diplomacy.max_year={year}"],
            context=GameContext(model="scripted", seed=0),
            db=None,
            progress=progress,
        )
        return time.process_time() - t, names

    game(1901)
    short = min(game(1901) for _ in range(2))
    long = min(game(1902) for _ in range(2))
    moves = sum(1 for n in long[1][len(short[1]) :] if n.endswith("M"))
    per = (long[0] - short[0]) / max(1, moves)
    return {"cpu_per_phase_s": round(per, 4), "movement_phases": moves}


def run(*, quick: bool = False, write: bool = True, show: bool = True) -> dict[str, Any]:
    from benchmarks.fake_endpoint import FakeEndpoint

    started, load_at_start = time.perf_counter(), load_average()
    year = 1901 if quick else 1902
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wargraph-bench-seats-") as tmp:
        workdir = Path(tmp)
        with FakeEndpoint(latency_s=LATENCY_S, log_dir=workdir) as endpoint:
            for shape, overrides in SHAPES.items():
                rows.append(
                    {"shape": shape, "limits": "now"}
                    | endpoint_game(endpoint, overrides, year, workdir)
                )
            with old_limits():
                rows.append(
                    {"shape": "shipped", "limits": "before (4 per endpoint, cores + 4 threads)"}
                    | endpoint_game(endpoint, SHAPES["shipped"], year, workdir)
                )
    cpu = cpu_per_phase()
    for row in rows:
        row |= like_for_like(row)
    no_press = rows[0]
    targets = [
        target(
            "seats_at_once: wall per movement phase, 500 ms endpoint, no press / AI_Diplomacy's",
            no_press["x_ai_diplomacy"],
            WALL_RATIO_LIMIT,
            rule="<=",
            unit="x",
        ),
    ]
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        latency_s=LATENCY_S,
        max_year=year,
        ai_diplomacy={
            "run": AI_DIPLOMACY_RUN,
            "wall_by_rounds": {n: r.as_dict() for n, r in WALL_BY_ROUNDS.items()},
            "in_flight": IN_FLIGHT,
        },
        rows=rows,
        cpu=cpu,
        targets=targets,
        notes=[
            "wall per movement phase: adjudication to adjudication, the first phase left out",
            f"AI_Diplomacy: {AI_DIPLOMACY_RUN}; measured at 0, 1 and 2 rounds "
            f"({', '.join(f'{r.value} s' for r in WALL_BY_ROUNDS.values())})",
            "wargraph: this process, the runner's SQLite store, no maps, HTTP to the same stub",
            "CPU per movement phase (scripted decider, this process, in-memory checkpoints, no"
            " HTTP): for reference only; like for like with AI_Diplomacy's: like_for_like",
            "waves per phase: requests / phases / 7 seats (all phases, so winters pull it down;"
            " a seat's questions asked together count apart)",
            "waves per movement phase: the calls a phase waits for in series, from the endpoint's"
            " request log (each seat's calls in order, those held there together counted once);"
            " each costs at least the latency; overhead per wave: (wall - waves x latency) / waves",
            "mean in flight: integral of requests in flight over the time at least one was",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    ai = p["ai_diplomacy"]
    rows: list[list[Any]] = []
    for r in p["rows"]:
        wall = r["wall_per_phase_s"]
        rows.append(
            [
                f"{r['shape']} ({r['rounds']} rounds)",
                r["limits"],
                wall,
                r.get("waves_per_movement_phase"),
                r.get("overhead_per_wave_s"),
                r["peak_in_flight"],
                r["mean_in_flight"],
                f"{r['ai_diplomacy_wall_s']} s, {r['ai_diplomacy_waves']} waves "
                f"({r['ai_diplomacy_how']})",
                r["x_ai_diplomacy"],
            ]
        )
    console.print(
        rich_table(
            f"Diplomacy to {p['max_year']}, seven seats on a {p['latency_s'] * 1000:.0f} ms "
            "loopback endpoint, next to AI_Diplomacy at the same negotiation rounds",
            [
                "wargraph game",
                "limits",
                "s / movement phase",
                "waves",
                "overhead / wave",
                "peak",
                "mean",
                "AI_Diplomacy",
                "x AI_Dipl.",
            ],
            rows,
            caption=f"AI_Diplomacy: its CLI, HTTP to a stub answering after 500 ms, measured at "
            f"each row's rounds; {ai['in_flight']['peak']} in flight at peak, "
            f"{ai['in_flight']['mean']} mean (2 rounds). wargraph: this process, SQLite store, "
            f"no maps. CPU per movement phase, scripted decider in this process, in-memory "
            f"checkpoints, no HTTP: {p['cpu']['cpu_per_phase_s']} s (not AI_Diplomacy's shape: "
            "see like_for_like)",
        )
    )
    console.print(targets_table("Targets", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.seats_at_once", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, write=not args.no_write)


if __name__ == "__main__":
    main()
