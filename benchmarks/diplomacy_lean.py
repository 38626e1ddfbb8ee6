"""Benchmark 8: a lean Diplomacy game (issue 12, targets 1 and 4).

1. Cost per phase: scripted games to 1901 and to 1905 as the CLI plays them (the runner's
   SQLite checkpointer, an output folder), side by side in one run; the cost per phase is
   (wall of the 1905 game - wall of the 1901 game) / the phases between, so setup and the
   end-of-game work (measures, the final map) cancel out. The game's engine work (every call
   into `wargraph.graphs.diplomacy.rules`'s engine boundary: loading positions, legal orders, unit
   blocks, the secretary, adjudication, press, maps) is set beside a bare `diplomacy` engine loop
   playing the same phases with the same orders.
2. The order prompt: a scripted game to 1905 whose diaries, digests and messages are 80-150
   words (the scripted decider with long texts: `ScriptedLongTexts`), its order prompts counted
   with the embedded model's tokenizer, per section (the world's budgets, `CONTEXT_BUDGETS`).

Targets: cost per phase <= 0.1 s; engine work <= 5x the bare loop; order prompt <= 1,500
tokens through 1905 (the largest one), and every section within its budget.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import (
    GameMeter,
    Intervals,
    _Patches,
    console,
    family_spec,
    finish,
    load_average,
    result_payload,
    rich_table,
    target,
    targets_table,
    timed,
)

NAME = "diplomacy_lean"
PHASE_LIMIT_S = 0.1
ENGINE_RATIO_LIMIT = 5.0
ORDER_PROMPT_LIMIT = 1500
SHORT_YEAR, LONG_YEAR = 1901, 1905
ENGINE_MODULES = ("engine", "orders", "geography", "press", "render")
# Long texts need room: 80-150 words are 500-1,000 characters.
LONG_TEXT_OVERRIDES = {"diplomacy.message_chars": 1000, "diplomacy.diary_chars": 1000}


# --- the engine's share of a game ------------------------------------------------------------------


def engine_places() -> list[tuple[Any, str]]:
    """Where the game calls into the engine boundary: every public function of its modules as the
    rest of the package holds it (re-exported by the package, imported by the world's modules,
    or reached through a module alias such as `G.unit_lines`), and the shared position's
    `derived`. Calls inside the boundary are not wrapped again (their time is inside their
    caller's span, and a wrapper per inner call would add its own cost to the engine's)."""
    import importlib
    import inspect

    mods = [importlib.import_module(f"wargraph.graphs.diplomacy.{m}") for m in ENGINE_MODULES]
    funcs = {
        id(obj): obj
        for mod in mods
        for name, obj in vars(mod).items()
        if not name.startswith("_")
        and isinstance(obj, types.FunctionType)
        and obj.__module__ == mod.__name__
    }
    inner = {mod.__name__ for mod in mods}
    holders = [
        m
        for name, m in list(sys.modules.items())
        if m is not None
        and name.startswith("wargraph.graphs.diplomacy.rules")
        and name not in inner
    ]
    places = []
    for m in holders:
        for name, obj in list(vars(m).items()):
            if id(obj) in funcs and not name.startswith("__"):
                places.append((m, name))
            elif isinstance(obj, types.ModuleType) and obj.__name__ in inner:
                # an alias (`G.unit_lines`): the names this module reads through it
                used = set(re.findall(rf"\b{name}\.(\w+)", inspect.getsource(m)))
                places += [(obj, n) for n in sorted(used) if id(getattr(obj, n, None)) in funcs]
    position = importlib.import_module("wargraph.graphs.diplomacy.engine").Position
    return list(dict.fromkeys(places)) + [(position, "derived")]


MAP_FUNCTIONS = ("write_maps",)  # drawn once at the end of the game, never in the loop


class DiplomacyMeter(GameMeter):
    """`GameMeter` whose engine is the Diplomacy engine boundary (a package of modules). Maps,
    drawn once when the game is over, are engine work too and are also kept apart (`maps`), so
    the game loop's engine work can be set beside a bare engine loop."""

    def __init__(self) -> None:
        super().__init__(None)
        self.maps = Intervals()

    @contextmanager
    def installed(self) -> Iterator[GameMeter]:
        cold_start()  # every measured game computes its own positions
        patches = _Patches()
        for obj, name in engine_places():
            fn = getattr(obj, name)
            if name in MAP_FUNCTIONS:
                fn = timed(fn, self.maps)
            patches.set(obj, name, timed(fn, self.engine, self.engine_by_function))
        try:
            with super().installed():
                yield self
        finally:
            patches.undo()


def cold_start() -> None:
    """Each measured game starts cold: the same seed plays the same positions, and a game must
    not find its positions (or its texts' token counts) kept from the game before."""
    import wargraph.graphs.diplomacy.budget as budget
    import wargraph.graphs.diplomacy.engine as engine

    engine.forget_positions()
    budget.estimate_tokens.cache_clear()
    budget.fit.cache_clear()


def phases_played(result: Any) -> int:
    from benchmarks.overhead import find_saved_game

    saved = find_saved_game(result.values.get("world", {}))
    return len(saved["phases"]) - 1 if saved else 0


def phase_cost(workdir: Path, repeats: int) -> dict[str, Any]:
    """Games to 1901 and to 1905, alternated, on the runner's SQLite saver; medians."""
    from benchmarks.overhead import bare_engine_loop, find_saved_game, play_measured

    spec = family_spec("diplomacy")
    play_measured(spec, "diplomacy", saver="memory", overrides={"rounds": 1}, workdir=workdir)
    runs: dict[int, list[tuple[dict[str, Any], Any]]] = {SHORT_YEAR: [], LONG_YEAR: []}
    for _ in range(repeats):
        for year in runs:
            meter = DiplomacyMeter()
            row, result = play_measured(
                spec,
                "diplomacy",
                saver="sqlite",
                overrides={"diplomacy.max_year": year},
                workdir=workdir,
                meter=meter,
            )
            row["phases"] = phases_played(result)
            row["maps_s"] = meter.maps.union()
            row["engine_loop_s"] = row["engine_s"] - row["maps_s"]
            runs[year].append((row, result))
    med = {}
    for year, rs in runs.items():
        rs.sort(key=lambda r: r[0]["wall_s"])
        med[year] = rs[len(rs) // 2]
    short, (long, long_result) = med[SHORT_YEAR][0], med[LONG_YEAR]
    between = long["phases"] - short["phases"]
    saved = find_saved_game(long_result.values.get("world", {}))
    # the bare loop takes milliseconds: the median of a few runs, against a noisy neighbour
    loops = [bare_engine_loop(saved) for _ in range(5)] if saved else []
    loops.sort(key=lambda b: b["bare_loop_s"])
    bare = loops[len(loops) // 2] if loops else {"bare_loop_s": None}
    per_phase = {
        k: (long[k] - short[k]) / between
        for k in ("wall_s", "decider_s", "engine_s", "framework_s", "checkpoint_s")
    }
    # the game loop's engine work (the final map is drawn once, after play) against the bare loop
    bare_s = bare.get("bare_loop_s")
    engine_ratio = long["engine_loop_s"] / bare_s if bare_s else None
    return {
        "repeats": repeats,
        "games": {str(y): {k: v for k, v in med[y][0].items() if k != "engine_top"} for y in med},
        "phases_between": between,
        "per_phase_s": per_phase,
        "checkpoint_writes_per_phase": (long["checkpoint_writes"] - short["checkpoint_writes"])
        / between,
        "graph_steps_per_phase": (long["graph_steps"] - short["graph_steps"]) / between,
        "bare": bare,
        "engine_ratio": engine_ratio,
        "engine_top": long.get("engine_top"),
    }


# --- the order prompt with long diaries and messages ----------------------------------------------

_PHRASES = (
    "I propose that we coordinate our moves this season",
    "my fleet will stay out of the Channel if you keep your army in Burgundy",
    "Russia has been quiet but its armies in Warsaw worry me",
    "we should take Belgium together and split Holland next year",
    "Turkey is asking everyone for help against Austria",
    "I will support your move into Munich if Germany attacks",
    "the Black Sea must stay demilitarised for our alliance to hold",
    "Italy promised Tunis would be its only target in the south",
    "please confirm the support order before the deadline",
    "England will not forgive a fleet in the North Sea",
    "our border in Galicia stays empty as agreed in the spring",
    "if Germany moves to Silesia I will need your help in Prussia",
    "I can offer you Sweden in exchange for safety in the north",
    "France is the real threat and we both know it",
    "my goal is to survive until the winter and rebuild",
)


def long_text(rng: random.Random, limit: int) -> str:
    """80-150 words of plausible negotiation prose (cut at `limit` characters, at a word)."""
    words: list[str] = []
    goal = rng.randint(80, 150)
    while len(words) < goal:
        words += (rng.choice(_PHRASES) + ".").split()
    text = " ".join(words[:goal])
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0]
    return text


class ScriptedLongTexts:
    """The scripted decider, with realistic lengths: every diary field, digest and message text
    is 80-150 words (seeded by the ask). Orders stay the scripted decider's."""

    TEXT_TASKS = {"message", "diary", "digest"}

    def __init__(self, inner: Any, seed: int) -> None:
        self.inner, self.seed = inner, seed

    def decide(self, ask: Any, schema: Any, *, memory: str = "") -> Any:
        from wargraph.seats.schemas import flat_json_schema
        from wargraph.seats.scripted import stable_seed

        decision = self.inner.decide(ask, schema, memory=memory)
        if ask["task"] not in self.TEXT_TASKS or decision.get("source") != "scripted":
            return decision
        rng = random.Random(stable_seed(self.seed, "long", ask["id"]))
        value = _lengthen(decision["value"], flat_json_schema(schema), rng)
        return {**decision, "value": schema.model_validate(value).model_dump()}


def _lengthen(value: Any, schema: dict[str, Any], rng: random.Random) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _lengthen(v, props.get(k, {}), rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_lengthen(v, schema.get("items", {}), rng) for v in value]
    if isinstance(value, str) and "enum" not in schema and "const" not in schema:
        return long_text(rng, int(schema.get("maxLength", 1000)))
    return value


@contextmanager
def long_texts() -> Iterator[None]:
    import wargraph.seats.agents as agents
    from wargraph.seats.scripted import ScriptedDecider

    original = agents.decider_for

    def choose(seat: Any) -> Any:
        decider = original(seat)
        if isinstance(decider, ScriptedDecider):
            return ScriptedLongTexts(decider, decider.seed)
        return decider

    agents.decider_for = choose
    try:
        yield
    finally:
        agents.decider_for = original


_HEADING = re.compile(r"^# (.+)$", re.M)


def prompt_sections(parts: dict[str, str]) -> dict[str, str]:
    """An order prompt by section: the system prompt, each `# Heading` of the view and of the
    question (the unit blocks), the seat's private notes, and the question itself."""
    out = {"system": parts.get("system", "")}
    for where in ("view", "question"):
        text = parts.get(where, "")
        marks = list(_HEADING.finditer(text))
        head = text[: marks[0].start()] if marks else text
        if head.strip():
            out[where if where == "question" else "view (untitled)"] = head
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            body = text[m.start() : end]
            title = m.group(1).split("(")[0].strip()
            if title.startswith("You are "):
                title = "You are (brief)"
            if where == "question" and title == "Your units":
                # the question text after the unit blocks is the question proper
                blocks, _, rest = body.partition("\n\n")
                out[title] = blocks
                out["question"] = rest
                continue
            out[title] = body
    out["notes"] = parts.get("notes", "")
    return out


def order_prompts(workdir: Path, year: int = LONG_YEAR) -> dict[str, Any]:
    """The order prompts of a long-text scripted game: total and per-section tokens."""
    from benchmarks.prompt_growth import count_tokens, play_traced, tokenizer

    try:
        tokenizer()
        counter, how = count_tokens, "embedded model tokenizer (llama.cpp, vocabulary only)"
    except Exception as err:  # no llama.cpp or no model file: a documented estimate
        from wargraph.graphs.diplomacy.budget import estimate_tokens

        counter = estimate_tokens
        how = f"estimate (wargraph.graphs.diplomacy.budget.estimate_tokens): {err}"
    spec = family_spec("diplomacy")
    overrides = {"diplomacy.max_year": year, **LONG_TEXT_OVERRIDES}
    with long_texts():
        result, calls = play_traced(spec, "diplomacy", overrides, workdir)
    orders = [c for c in calls if c.get("task") in ("orders", "revise")]
    totals: list[int] = []
    sections: dict[str, list[int]] = {}
    by_round: dict[int, list[int]] = {}
    largest: dict[str, Any] = {}
    for c in orders:
        total = sum(counter(str(m.get("content", ""))) for m in c.get("messages", []))
        totals.append(total)
        by_round.setdefault(int(c.get("round", 0)), []).append(total)
        for name, text in prompt_sections(c.get("parts") or {}).items():
            sections.setdefault(name, []).append(counter(text) if text else 0)
        if total > largest.get("tokens", -1):
            largest = {"tokens": total, "ask_id": c.get("ask_id")}
    texts = [c for c in calls if c.get("task") in ("message", "diary")]
    return {
        "tokenizer": how,
        "year": year,
        "finished": result.finished,
        "order_calls": len(orders),
        "max_tokens": max(totals) if totals else None,
        "mean_tokens": statistics.mean(totals) if totals else None,
        "largest": largest,
        "mean_by_round": {r: round(statistics.mean(v), 1) for r, v in sorted(by_round.items())},
        "section_max": {k: max(v) for k, v in sections.items()},
        "section_mean": {k: round(statistics.mean(v), 1) for k, v in sections.items()},
        "text_calls": len(texts),
    }


# --- the benchmark -----------------------------------------------------------------------------------


def run(
    *, quick: bool = False, repeats: int | None = None, write: bool = True, show: bool = True
) -> dict[str, Any]:
    from wargraph.graphs.diplomacy.budget import CONTEXT_BUDGETS

    started, load_at_start = time.perf_counter(), load_average()
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-diplomacy-"))
    cost = phase_cost(workdir, repeats or (1 if quick else 3))
    prompts = order_prompts(workdir)
    per_phase = cost["per_phase_s"]["wall_s"]
    targets = [
        target(
            "diplomacy: cost per phase (1905 game - 1901 game)",
            per_phase,
            PHASE_LIMIT_S,
            rule="<=",
            unit=" s",
        ),
        target(
            "diplomacy: engine work in the game loop / bare engine loop (same orders)",
            cost["engine_ratio"],
            ENGINE_RATIO_LIMIT,
            rule="<=",
            unit="x",
        ),
        target(
            "diplomacy: order prompt through 1905, largest (long texts)",
            prompts["max_tokens"],
            ORDER_PROMPT_LIMIT,
            rule="<=",
            unit=" tok",
        ),
    ]
    for name, budget in CONTEXT_BUDGETS.items():
        value = prompts["section_max"].get(name)
        if value is not None:
            targets.append(
                target(
                    f"diplomacy: order prompt section '{name}', largest",
                    value,
                    budget,
                    rule="<=",
                    unit=" tok",
                )
            )
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        phase_cost=cost,
        order_prompt=prompts,
        budgets=CONTEXT_BUDGETS,
        targets=targets,
        notes=[
            "cost per phase = (wall of a game to 1905 - wall of a game to 1901) / the phases "
            "between; both on the runner's SQLite checkpointer with an output folder",
            "engine work = time inside the engine boundary (wargraph.graphs.diplomacy.rules's engine, "
            "orders, geography, press, render modules), nested calls counted once",
            "long texts: the scripted decider with 80-150-word diaries, digests and messages "
            "(ScriptedLongTexts), diplomacy.message_chars and diary_chars 1000",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(payload: dict[str, Any]) -> None:
    cost = payload["phase_cost"]
    games = cost["games"]
    cols = [
        "game",
        "phases",
        "wall s",
        "decider s",
        "engine s",
        "framework s",
        "ckpt s",
        "ckpt writes",
        "graph steps",
    ]
    rows = [
        [
            f"to {y}",
            g["phases"],
            g["wall_s"],
            g["decider_s"],
            g["engine_s"],
            g["framework_s"],
            g["checkpoint_s"],
            g["checkpoint_writes"],
            g["graph_steps"],
        ]
        for y, g in games.items()
    ]
    pp = cost["per_phase_s"]
    rows.append(
        [
            f"per phase (x{cost['phases_between']} between)",
            1,
            pp["wall_s"],
            pp["decider_s"],
            pp["engine_s"],
            pp["framework_s"],
            pp["checkpoint_s"],
            cost["checkpoint_writes_per_phase"],
            cost["graph_steps_per_phase"],
        ]
    )
    console.print(
        rich_table(
            f"8. Diplomacy cost per phase, scripted decider, SQLite saver (median of "
            f"{cost['repeats']})",
            cols,
            rows,
        )
    )
    bare = cost["bare"]
    long = games[str(LONG_YEAR)]
    bare_ms = 1000 * bare["bare_loop_s"] / max(bare.get("phases") or 1, 1)
    console.print(
        rich_table(
            "Diplomacy engine work in the game loop vs a bare engine loop (same phases, orders)",
            [
                "phases",
                "bare loop s",
                "engine in loop s",
                "final map s",
                "engine / bare",
                "bare ms/phase",
                "engine ms/phase",
            ],
            [
                [
                    bare.get("phases"),
                    bare.get("bare_loop_s"),
                    long["engine_loop_s"],
                    long["maps_s"],
                    cost["engine_ratio"],
                    bare_ms,
                    1000 * long["engine_loop_s"] / max(long["phases"], 1),
                ]
            ],
            caption="the final map is drawn once when the game is over (not per phase)",
        )
    )
    if cost.get("engine_top"):
        console.print(
            rich_table(
                "Engine time by function (inclusive; nested calls count in both)",
                ["function", "calls", "seconds"],
                [[e["function"], e["calls"], e["seconds"]] for e in cost["engine_top"]],
            )
        )
    p = payload["order_prompt"]
    budgets = payload["budgets"]
    console.print(
        rich_table(
            f"Order prompt tokens through {p['year']} with 80-150-word diaries and messages "
            f"({p['order_calls']} order calls; largest {p['max_tokens']} in {p['largest'].get('ask_id')})",
            ["section", "max tokens", "mean tokens", "budget"],
            [[k, v, p["section_mean"].get(k), budgets.get(k)] for k, v in p["section_max"].items()]
            + [
                [
                    "whole prompt (system + user)",
                    p["max_tokens"],
                    p["mean_tokens"],
                    ORDER_PROMPT_LIMIT,
                ]
            ],
            caption=f"tokens: {p['tokenizer']}; mean by round: {p['mean_by_round']}",
        )
    )
    console.print(targets_table("Targets (diplomacy lean)", payload["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.diplomacy_lean", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="one game of each length")
    parser.add_argument("--repeats", type=int, help="games of each length (median)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, repeats=args.repeats, write=not args.no_write)


if __name__ == "__main__":
    main()
