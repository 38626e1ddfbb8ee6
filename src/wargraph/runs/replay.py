"""Critical state analysis: fork a stored game at a moment and replay it N times under a change.

The moment is the first checkpoint (in the game's order) where a predicate holds: for Diplomacy
the start of an engine phase (`F1903M`: the state before that phase's `negotiate` runs), for the
other families the start of a round (`3`). Each run copies that checkpoint's values into a fresh
thread with `update_state(..., as_node=<the node that wrote it>)` (a new thread, because
`InMemorySaver.copy_thread` is not implemented and the original must stay untouched), together
with every seat's private memory as it stood then (the agents' own checkpoint namespaces), then
plays on until the stop rule holds. The change is a set of `--set` overrides to the stored
scenario (another prompt variant, another model for one power, an instruction for one power)
and/or another default model; it reaches the seats from the fork on, or is refused naming it
(`src/wargraph/runs/replay_change.py`; `--compare`: `src/wargraph/runs/replay_compare.py`). Each run gets its own
seed (base seed + run number), so runs differ even with a deterministic decider.

A family may refine the analysis with hooks its entry declares (`Family.critical_state`,
`checkpoint_label`, `replay_stop`, `replay_outcome`, `replay_summary`, `replay_files`; see
`src/wargraph/kernel/families.py`): `critical_state(phase) -> predicate(snapshot)`,
`checkpoint_label(values) -> str | None`, `replay_stop(start, values, phases) -> bool`,
`replay_outcome(start, end) -> dict`, `replay_summary(outcomes) -> dict` and
`replay_files(start, end, run_dir) -> list[Path]`. They are declared references, checked when
the family loads: a misspelled one is an error naming it, never a hook silently left out.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario, load_scenario
from wargraph.runs.records import build_record, write_record
from wargraph.runs.replay_change import apply_change, check_model
from wargraph.runs.runner import GameError, build_for, load_run, seats_at_once, thread_config
from wargraph.store.saver import Saver, open_saver

Predicate = Callable[[Any], bool]


@dataclass
class ReplayResult:
    source: dict[str, Any]
    change: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)
    original: dict[str, Any] | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "change": self.change,
            "original": self.original,
            "runs": self.runs,
            "summary": self.summary,
        }


# --- generic rules (families may override them) ---------------------------------------------


def _round_of(phase: str) -> int:
    text = phase.strip().lower().removeprefix("round").removeprefix(":").removeprefix("r").strip()
    if not text.isdigit():
        raise GameError(f"--phase {phase!r}: expected a round number (e.g. 3) for this game family")
    return int(text)


def generic_critical_state(phase: str) -> Predicate:
    """The start of round N: the first checkpoint of that round about to run a phase node."""
    n = _round_of(phase)

    def holds(snap: Any) -> bool:
        nxt = tuple(snap.next or ())
        return (
            snap.values.get("round") == n
            and len(nxt) == 1
            and not nxt[0].startswith("agent_")
            and nxt[0] != "setup"
        )

    return holds


def generic_stop(start: dict[str, Any], values: dict[str, Any], phases: int) -> bool:
    return (
        bool(values.get("done"))
        or int(values.get("round", 0)) >= int(start.get("round", 0)) + phases
    )


def generic_outcome(start: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    seen = {e["id"] for e in start.get("events", [])}
    new = [e for e in end.get("events", []) if e["id"] not in seen]
    return {
        "events": [
            {"author": e["author"], "kind": e["kind"], "text": str(e["text"])[:300]} for e in new
        ]
    }


def generic_summary(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    for o in outcomes:
        for e in o.get("events", []):
            counts[f"{e['author']} {e['kind']}: {e['text'][:80]}"] += 1
    return {"events": dict(counts.most_common(50))}


def _hook(family: str, name: str, default: Callable) -> Callable:
    """The family's declared hook, else the generic rule."""
    from wargraph.kernel.families import FamilyError, attribute

    try:
        return attribute(family, name) or default
    except FamilyError as err:
        raise GameError(str(err)) from None


# --- the fork ---------------------------------------------------------------------------------


def _history(graph: Any, thread_id: str) -> list[Any]:
    """The thread's checkpoints in the game's order (oldest first)."""
    return list(reversed(list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))))


def generic_label(values: dict[str, Any]) -> str | None:
    return f"round {values['round']}" if values.get("round") else None


def find_fork(
    history: list[Any], holds: Predicate, phase: str, label: Callable = generic_label
) -> tuple[int, str]:
    """Index of the first checkpoint where `holds`, and the node that wrote it (for as_node)."""
    for i, snap in enumerate(history):
        try:
            ok = holds(snap)
        except (KeyError, TypeError, ValueError, IndexError):
            ok = False
        if not ok:
            continue
        if i == 0:
            raise GameError(f"--phase {phase}: the game's first checkpoint cannot be forked")
        writers = tuple(history[i - 1].next or ())
        if len(writers) != 1:
            raise GameError(
                f"--phase {phase}: that checkpoint was written by {len(writers)} nodes at once; "
                "choose the start of a phase"
            )
        return i, writers[0]
    known = list(dict.fromkeys(x for x in (label(s.values) for s in history) if x))
    raise GameError(
        f"--phase {phase}: no checkpoint of this game is at that point "
        f"(this game has: {', '.join(map(str, known)) or 'nothing to fork'})"
    )


def _copy_memories(
    saver: Saver, thread_id: str, new_thread: str, fork: Any, history: list[Any], roles: Any
) -> int:
    """Each seat's private memory as it stood at the fork, into the new thread's namespaces.

    Agent subgraphs keep their memory in their own namespace (`agent_<role>`); a subgraph
    checkpoint names the parent checkpoint it ran under (`metadata.parents[""]`), so the one to
    copy is the latest that ran under a parent checkpoint before the fork. Only the saver's
    API is used (list and put by checkpoint config), so this works on every store."""
    step_of = {
        s.config["configurable"]["checkpoint_id"]: s.metadata.get("step", -1) for s in history
    }
    fork_step = fork.metadata.get("step", -1)
    copied = 0
    for ns in sorted(f"agent_{role}" for role in roles):
        best = None
        for t in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}):
            parent = (t.metadata.get("parents") or {}).get("")
            before = parent in step_of and step_of[parent] < fork_step
            if before and (best is None or t.metadata["step"] > best.metadata["step"]):
                best = t
        if best is None:
            continue
        saver.put(
            {"configurable": {"thread_id": new_thread, "checkpoint_ns": ns}},
            best.checkpoint,
            {**best.metadata, "source": "fork", "parents": {}},
            dict(best.checkpoint.get("channel_versions", {})),
        )
        copied += 1
    return copied


def _ctx_for(ctx: GameContext, model: str | None, seed: int, run_dir: Path | None) -> GameContext:
    out = dataclasses.replace(ctx, seed=seed, trace_path=None, humans=[])
    if model:
        from wargraph.models.chat import parse_model_ref

        parse_model_ref(model)  # a bad reference fails before any run
        out.model = model
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
        out.trace_path = str(run_dir / "trace.jsonl")
    return out


def _preflight(
    scenario: Scenario, ctx: GameContext, model: str | None, role_models: dict[str, str]
) -> None:
    """Every model the replay's seats play asked once before any fork's thread is made (a dead
    endpoint or a wrong model name used to stop inside the first run, its thread left behind)."""
    from wargraph.models.preflight import PreflightError, preflight

    probe = _ctx_for(ctx, model, ctx.seed, None)
    probe.role_models = dict(role_models)
    try:
        preflight(scenario, probe, after="no replay was forked")
    except PreflightError as err:
        raise GameError(str(err)) from None


def replay(
    *,
    db: str | Path,
    thread_id: str,
    phase: str,
    runs: int = 3,
    overrides: list[str] | dict[str, Any] | None = None,
    model: str | None = None,
    out_dir: str | Path | None = None,
    phases: int = 1,
    progress: Callable[[int, dict[str, Any]], None] | None = None,
    events: list[Any] | None = None,
    cache: str | None = None,
) -> ReplayResult:
    """Fork `thread_id` at `phase` and replay it `runs` times under the change; the original
    thread is only read. Returns the outcome of every run, of the original and their summary.
    `events`: added to the game at the fork (a persuader's message: wargraph.evals.persuasion);
    `cache`: where the runs keep and reuse model answers (wargraph.models.cache; None: none,
    whatever the stored game used)."""
    if runs < 1:
        raise GameError("--runs must be at least 1")
    if phases < 1:
        raise GameError("--phases must be at least 1")
    stored, ctx = load_run(db, thread_id)
    scenario: Scenario = load_scenario(stored, overrides) if overrides else stored
    if set(scenario.roles) != set(stored.roles):
        raise GameError("the change may not add or remove seats of a game in progress")
    family = scenario.family
    critical_state = _hook(family, "critical_state", generic_critical_state)
    try:
        holds = critical_state(phase)
    except ValueError as err:
        raise GameError(str(err)) from None
    label = _hook(family, "checkpoint_label", generic_label)
    stop = _hook(family, "replay_stop", generic_stop)
    outcome_of = _hook(family, "replay_outcome", generic_outcome)
    summarize = _hook(family, "replay_summary", generic_summary)
    files_of = _hook(family, "replay_files", lambda *_: [])
    out = Path(out_dir) if out_dir is not None else None
    tag = uuid.uuid4().hex[:6]

    with open_saver(db, create=False) as saver:
        graph = build_for(scenario).compile(checkpointer=saver)
        history = _history(graph, thread_id)
        if not history:
            raise GameError(f"thread {thread_id!r} has no checkpoints")
        i, writer = find_fork(history, holds, phase, label)
        fork = history[i]
        start = dict(fork.values)
        result = ReplayResult(
            source={
                "db": str(db),
                "thread_id": thread_id,
                "phase": phase,
                "checkpoint_id": fork.config["configurable"]["checkpoint_id"],
                "as_node": writer,
            },
            change={"overrides": overrides or [], "model": model, "phases": phases},
            out_dir=out,
        )
        end = next((s for s in history[i:] if stop(start, dict(s.values), phases)), None)
        result.original = outcome_of(start, dict(end.values)) if end is not None else None

        # the change reaches the seats from the fork on (their briefs, profiles, models), or
        # is refused naming what cannot apply (wargraph.runs.replay_change)
        check_model(model, scenario, ctx)
        applied = apply_change(stored, scenario, overrides, start, ctx, phase=phase)
        result.change["rewritten"] = applied.rewritten
        _preflight(scenario, ctx, model, applied.role_models)
        values = {
            **start,
            "events": [*applied.events, *(events or [])],
            "spec": scenario.model_dump(),
        }
        for k in range(1, runs + 1):
            new_thread = f"{thread_id}-replay-{tag}-{k}"
            run_dir = out / f"run_{k}" if out is not None else None
            run_ctx = _ctx_for(ctx, model, ctx.seed + k, run_dir)
            run_ctx.role_models = dict(applied.role_models)
            run_ctx.model_cache = cache
            config = thread_config(new_thread, seats_at_once(scenario))
            # stored with the fork's first checkpoint (written by update_state below)
            saver.register_run(
                new_thread,
                {"scenario": scenario.model_dump(), "context": dataclasses.asdict(run_ctx)},
            )
            copied = _copy_memories(saver, thread_id, new_thread, fork, history, scenario.roles)
            graph.update_state(config, values, as_node=writer)
            last = values
            for state in graph.stream(
                None, config, context=run_ctx, stream_mode="values", durability="sync"
            ):
                last = state
                if stop(start, state, phases):
                    break
            if graph.get_state(config).interrupts:
                raise GameError(
                    f"replay {new_thread} stopped at a human seat; replays are for AI seats"
                )
            outcome = outcome_of(start, dict(last))
            run = {
                "run": k,
                "thread_id": new_thread,
                "seed": run_ctx.seed,
                "memories_copied": copied,
                "outcome": outcome,
            }
            result.runs.append(run)
            if run_dir is not None:
                record = build_record(
                    dict(last), thread_id=new_thread, trace_path=run_ctx.trace_path
                )
                run["record"] = str(write_record(record, run_dir))
                # the family's own files of a run (Diplomacy: the replayed phases' maps)
                files_of(start, dict(last), run_dir)
            if progress:
                progress(k, run)
    result.summary = summarize([r["outcome"] for r in result.runs])
    if out is not None:
        write_report(result, out)
    return result


def write_report(result: ReplayResult, out: Path) -> list[Path]:
    """replay.json (everything), replay.md and replay.html (a readable summary: the fork, the
    change, each run, the distribution over runs and the original's outcome as tables) and
    replay.csv (one row per run, its outcome's nested keys joined with ':')."""
    from wargraph.evals.report_page import as_markdown, flat_row, table, write_csv, write_page

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "replay.json", out / "replay.md", out / "replay.csv"]
    paths[0].write_text(json.dumps(result.to_dict(), indent=2, default=str), encoding="utf-8")
    src, change = result.source, result.change
    overrides = change.get("overrides") or []
    told = ", ".join(f"`{o}`" for o in overrides) if isinstance(overrides, list) else overrides
    lines = [
        f"# Replay of {src['thread_id']} at {src['phase']}",
        "",
        f"Forked at checkpoint `{src['checkpoint_id']}` (after `{src['as_node']}`) of the store "
        f"`{src['db']}`; {len(result.runs)} run(s) of {change.get('phases', 1)} phase(s) each.",
        "",
        f"- change to the scenario: {told or 'none'}",
        f"- model: {change.get('model') or 'as stored'}",
        "",
        "## Runs",
        "",
        *table(
            ["run", "thread", "seed", "memories copied", "folder"],
            [
                [
                    r["run"],
                    r["thread_id"],
                    r["seed"],
                    r.get("memories_copied", ""),
                    f"run_{r['run']}/",
                ]
                for r in result.runs
            ],
        ),  # fmt: skip
        "",
    ]
    lines += as_markdown(result.summary, "Over the runs", 2)
    if result.original is not None:
        lines += as_markdown(result.original, "The original game over the same stretch", 2)
    lines += [
        "## Files",
        "",
        "- `replay.json`: everything above, and each run's whole outcome",
        "- `replay.csv`: one row per run",
        "- `replay.html`: this summary as one page",
        "- `run_<k>/`: each run's record.json, transcript.md, trace.jsonl",
        "",
    ]
    paths[1].write_text("\n".join(lines), encoding="utf-8")
    rows = [
        {"run": r["run"], "thread_id": r["thread_id"], "seed": r["seed"],
         **flat_row(r.get("outcome") or {})}
        for r in result.runs
    ]  # fmt: skip
    write_csv(paths[2], rows)
    paths.append(write_page(paths[1]))
    return paths


def print_report(result: ReplayResult, console: Any) -> None:
    """Rich tables of the distribution (centres, orders, relationship shifts), else the JSON."""
    from rich.table import Table

    s = result.summary
    src = result.source
    from wargraph.seats.terminal import safe

    console.print(
        f"[bold]Replay[/] of {safe(src['thread_id'])} at {safe(src['phase'])}: "
        f"{len(result.runs)} run(s), change {safe(result.change)}"
    )
    if "centres" in s:
        t = Table(title="centres after the replayed phase (runs)")
        for col in ("power", "original", "mean", "min", "max", "counts"):
            t.add_column(col, justify="left" if col in ("power", "counts") else "right")
        orig = (result.original or {}).get("centres", {})
        for p, c in s["centres"].items():
            counts = ", ".join(f"{k}: {v}" for k, v in sorted(c["counts"].items()))
            t.add_row(
                p, str(orig.get(p, "-")), f"{c['mean']:.2f}", str(c["min"]), str(c["max"]), counts
            )
        console.print(t)
    if s.get("orders"):
        t = Table(title="orders given in the replayed phase (times out of the runs)")
        t.add_column("power")
        t.add_column("unit")
        t.add_column("orders")
        first = (result.original or {}).get("phases", [None])[0] if result.original else None
        orig_orders = set()
        for given in ((result.original or {}).get("orders", {}).get(first) or {}).values():
            orig_orders.update(given)
        for p, units in s["orders"].items():
            for unit, counts in units.items():
                shown = "; ".join(
                    f"{o}{' (original)' if o in orig_orders else ''} ×{n}"
                    for o, n in sorted(counts.items(), key=lambda x: -x[1])
                )
                t.add_row(p, unit, shown)
        console.print(t)
    if s.get("relationships"):
        t = Table(title="relationship shifts (mean over runs; Enemy -2 ... Ally +2)")
        t.add_column("power")
        t.add_column("toward others")
        for p, others in s["relationships"].items():
            t.add_row(
                p,
                ", ".join(f"{o} {v['mean_shift']:+.1f}" for o, v in others.items()),
            )
        console.print(t)
    if not any(k in s for k in ("centres", "orders", "relationships")):
        console.print_json(json.dumps(s, default=str))
    if result.out_dir is not None:
        console.print(
            f"Report in {result.out_dir}/ (replay.html, replay.md, replay.csv, replay.json, run_<k>/)"
        )
