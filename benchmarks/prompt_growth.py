"""Benchmark 2: prompt growth.

Prompt tokens per call, by round, over a 10-round game of each family under each memory policy
(`--set memory=full|last_round|diary`). The scripted decider plays (it costs nothing) and the
kernel still records every prompt in trace.jsonl (event "scripted"); the tokens are counted with
the embedded model's own tokenizer (llama.cpp, vocabulary only), so they are the counts the
embedded model would see. Post-game analysis calls read the whole record by design and are
reported apart from the rounds.

Targets, with each family's default policy: growth stops after move 2 (the mean prompt of round
10, or the last round played, costs at most 1.1x that of round 3; issue #12) and round 10 costs
at most 1.5x round 1. The full-history policy is shown beside it for comparison.

And on the embedded model itself: a 3-move crisis (`wargraph play azuristan_crimsonia --rounds
3`), its prompt tokens per move (plans and narration, from the game's trace.jsonl, as llama.cpp
counted them): move 3 at most 1.5x move 1, move 1 no larger than before (1,173).
"""

from __future__ import annotations

import argparse
import atexit
import tempfile
import time
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.common import (
    FamilySpec,
    console,
    family_module,
    finish,
    load_average,
    quiet_stderr,
    result_payload,
    rich_table,
    scenario_name,
    select_families,
    target,
    targets_table,
)

NAME = "prompt_growth"
POLICIES = ("full", "last_round", "diary")
GROWTH_LIMIT = 1.5
STEADY_LIMIT = 1.1  # round 10 / round 3: growth stops after move 2
STEADY_FROM = 3
POST_GAME = {"analyze"}
EMBEDDED_MOVES = 3
MOVE_ONE_LIMIT = 1173  # the 3-move crisis's move 1 before bounded prompts (issue #12)
MOVE_GROWTH_LIMIT = 1.5


@lru_cache(maxsize=1)
def tokenizer():
    """The embedded model's tokenizer (a vocabulary-only load takes a fraction of a second)."""
    from llama_cpp import Llama

    from wargraph.models.chat import embedded_model_path

    with quiet_stderr():
        llama = Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    # closed before the interpreter tears llama_cpp's module down: a close from the finaliser
    # then printed "Exception ignored in Llama.__del__ ... 'NoneType' object is not callable"
    atexit.register(llama.close)
    return llama


def count_tokens(text: str) -> int:
    return len(tokenizer().tokenize(text.encode("utf-8"), add_bos=False, special=False))


def prompt_tokens(entry: dict[str, Any]) -> int:
    """Tokens of every message of one recorded call (the chat template adds a constant few)."""
    return sum(count_tokens(str(m.get("content", ""))) for m in entry.get("messages", []))


PARTS = ("system", "view", "notes", "question")


def play_traced(spec: FamilySpec, scenario: str, overrides: dict[str, Any], workdir: Path):
    """Play with the scripted decider; return the result, the trace's calls, and each call's
    prompt split into its parts (system, the role's view, its private notes, the question and
    answer format), taken where the agent seat assembles the user turn."""
    import wargraph.seats.agents as agents
    from wargraph.kernel.context import GameContext
    from wargraph.kernel.views import unseen_notes
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    trace = workdir / f"{spec.name}-{overrides.get('memory', 'default')}-{time.time_ns()}.jsonl"
    parts: dict[str, dict[str, str]] = {}
    original = agents.user_prompt

    def recording_user_prompt(ask, memory, json_schema):
        text = original(ask, memory, json_schema)
        # user turn = view, notes, then the question and the answer format (user_prompt's order)
        at = text.rfind(ask["question"]) if ask["question"] else -1
        parts[ask["id"]] = {
            "system": ask["system"],
            "view": ask["context"],
            "notes": unseen_notes(memory, ask["context"]),  # as user_prompt shows them
            "question": text[at:] if at >= 0 else "",
        }
        return text

    agents.user_prompt = recording_user_prompt
    try:
        result = play(
            scenario,
            overrides=overrides,
            context=GameContext(model="scripted", trace_path=str(trace)),
            db=None,  # in memory: only the prompts matter here
        )
    finally:
        agents.user_prompt = original
    calls = [e for e in read_trace(trace) if e.get("event") in ("scripted", "call")]
    for entry in calls:
        entry["parts"] = parts.get(entry.get("ask_id", ""))
    return result, calls


def growth_row(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and max prompt tokens per call by round; the ratio of the last round to the first."""
    by_round: dict[int, list[int]] = defaultdict(list)
    part_tokens: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    post: list[int] = []
    for entry in calls:
        tokens = prompt_tokens(entry)
        if entry.get("node") in POST_GAME:
            post.append(tokens)
            continue
        r = int(entry.get("round", 0))
        by_round[r].append(tokens)
        for name, text in (entry.get("parts") or {}).items():
            part_tokens[r][name].append(count_tokens(text) if text else 0)
    rounds = sorted(r for r in by_round if r >= 1)
    mean = {r: sum(by_round[r]) / len(by_round[r]) for r in rounds}
    first, last = (rounds[0], rounds[-1]) if rounds else (None, None)
    return {
        "rounds_played": len(rounds),
        "calls": sum(len(v) for v in by_round.values()),
        "mean_tokens_by_round": {r: round(mean[r], 1) for r in rounds},
        "max_tokens_by_round": {r: max(by_round[r]) for r in rounds},
        "total_tokens_by_round": {r: sum(by_round[r]) for r in rounds},
        "calls_by_round": {r: len(by_round[r]) for r in rounds},
        "first_round": first,
        "last_round": last,
        "ratio_last_to_first": (mean[last] / mean[first]) if rounds and mean[first] else None,
        # After the first full round the view holds a whole previous round: the steady state.
        "ratio_last_to_second": (mean[last] / mean[rounds[1]]) if len(rounds) > 1 else None,
        "ratio_last_to_third": (
            mean[last] / mean[STEADY_FROM] if STEADY_FROM in mean and last > STEADY_FROM else None
        ),
        "mean_part_tokens_by_round": {
            r: {p: round(sum(v) / len(v), 1) for p, v in part_tokens[r].items() if v}
            for r in rounds
        },
        "post_game_calls": len(post),
        "post_game_mean_tokens": (sum(post) / len(post)) if post else None,
    }


def run(
    *,
    quick: bool = False,
    families: list[str] | None = None,
    policies: tuple[str, ...] = POLICIES,
    model: bool = True,
    write: bool = True,
    show: bool = True,
) -> dict[str, Any]:
    from wargraph.kernel.scenario import load_scenario

    started, load_at_start = time.perf_counter(), load_average()
    specs = select_families(families or (["crisis"] if quick else None))
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-growth-"))
    rows: list[dict[str, Any]] = []
    unavailable: dict[str, str] = {}
    targets: list[dict[str, Any]] = []
    for spec in specs:
        module, why = family_module(spec)
        if module is None:
            unavailable[spec.name] = why
            continue
        scenario = scenario_name(spec, module)
        long = dict(spec.long)
        if quick:
            long["rounds"] = 3
        default = load_scenario(scenario, long).memory
        for policy in policies:
            t0 = time.perf_counter()
            result, calls = play_traced(spec, scenario, {**long, "memory": policy}, workdir)
            row = {
                "family": spec.name,
                "scenario": scenario,
                "policy": policy,
                "default": policy == default,
                "finished": result.finished,
                "seconds": time.perf_counter() - t0,
                "note": spec.long_note,
                **growth_row(calls),
            }
            rows.append(row)
            if policy == default:
                targets.append(
                    target(
                        f"{spec.name}: round {row['last_round']} / round {STEADY_FROM} "
                        f"prompt tokens ({policy}, default): growth stops after move 2",
                        row["ratio_last_to_third"],
                        STEADY_LIMIT,
                        rule="<=",
                        unit="x",
                    )
                )
                targets.append(
                    target(
                        f"{spec.name}: round {row['last_round']} / round {row['first_round']} "
                        f"prompt tokens ({policy}, default)",
                        row["ratio_last_to_first"],
                        GROWTH_LIMIT,
                        rule="<=",
                        unit="x",
                    )
                )
    embedded = None
    if model:
        embedded = {k: v for k, v in embedded_crisis(workdir).items() if k != "calls"}
        targets += embedded_targets(embedded)
    notes = []
    for fam in dict.fromkeys(r["family"] for r in rows):
        means = [r["mean_tokens_by_round"] for r in rows if r["family"] == fam]
        if len(means) > 1 and all(m == means[0] for m in means):
            notes.append(
                f"{fam}: every memory policy gives the same prompts (the family builds its own "
                "view and ignores `memory`)"
            )
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        rounds=3 if quick else 10,
        tokenizer="embedded model (SmolLM2-135M-Instruct) via llama_cpp.Llama(vocab_only=True)",
        rows=rows,
        embedded_crisis=embedded,
        unavailable=unavailable,
        targets=targets,
        notes=notes
        + [
            "scripted decider: answers are short generated phrases, so absolute counts are lower "
            "than with a real model; the growth comes from the views and memory policies",
            "post-game analysis calls (which read the whole record by design) are counted apart",
            "tokens = system + user message text; the chat template adds a constant few per call",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def embedded_crisis(workdir: Path, rounds: int = EMBEDDED_MOVES) -> dict[str, Any]:
    """A real game on the embedded model, as `wargraph play azuristan_crimsonia --rounds 3`
    plays it: prompt tokens per move (the plans and the narration; post-game questions apart),
    from its trace.jsonl. Also returns the trace's calls (local_model reads their order)."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    trace = workdir / f"embedded-crisis-{time.time_ns()}.jsonl"
    t0 = time.perf_counter()
    with quiet_stderr():
        result = play(
            "azuristan_crimsonia",
            overrides={"rounds": rounds},
            context=GameContext(model="embedded", trace_path=str(trace)),
            db=None,
        )
    calls = [e for e in read_trace(trace) if e.get("event") == "call"]
    per_move: dict[int, int] = defaultdict(int)
    per_call: dict[int, list[int]] = defaultdict(list)
    for e in calls:
        if e.get("node") in POST_GAME:
            continue
        per_move[int(e["round"])] += int(e.get("prompt_tokens", 0))
        per_call[int(e["round"])].append(int(e.get("prompt_tokens", 0)))
    first, last = min(per_move, default=None), max(per_move, default=None)
    return {
        "scenario": "azuristan_crimsonia",
        "rounds": rounds,
        "finished": result.finished,
        "seconds": round(time.perf_counter() - t0, 1),
        "prompt_tokens_by_move": dict(sorted(per_move.items())),
        "prompt_tokens_by_call": dict(sorted(per_call.items())),
        "ratio_last_to_first": per_move[last] / per_move[first] if per_move else None,
        "trace": str(trace),
        "calls": calls,
    }


def embedded_targets(run: dict[str, Any]) -> list[dict[str, Any]]:
    moves = run["prompt_tokens_by_move"]
    first, last = (min(moves), max(moves)) if moves else (1, EMBEDDED_MOVES)
    return [
        target(
            f"embedded 3-move crisis: move {first} prompt tokens (plans + narration)",
            moves.get(first),
            MOVE_ONE_LIMIT,
            rule="<=",
        ),
        target(
            f"embedded 3-move crisis: move {last} / move {first} prompt tokens",
            run["ratio_last_to_first"],
            MOVE_GROWTH_LIMIT,
            rule="<=",
            unit="x",
        ),
    ]


def show_tables(payload: dict[str, Any]) -> None:
    shown = (1, 2, 3, 5, 8, 10)
    rows = []
    for r in payload["rows"]:
        mean = {int(k): v for k, v in r["mean_tokens_by_round"].items()}
        rows.append(
            [
                r["family"],
                r["policy"] + (" *" if r["default"] else ""),
                r["rounds_played"],
                r["calls"],
                *[mean.get(k) for k in shown],
                r["ratio_last_to_first"],
                r["ratio_last_to_third"],
                r["post_game_mean_tokens"],
            ]
        )
    for fam, why in payload["unavailable"].items():
        rows.append([fam, why] + [""] * (len(shown) + 5))
    console.print(
        rich_table(
            f"2. Prompt growth: mean prompt tokens per call by round ({payload['rounds']}-round "
            "games, scripted decider; * = the family's default policy)",
            [
                "family",
                "memory",
                "rounds",
                "calls",
                *[f"r{k}" for k in shown],
                "last/r1",
                "last/r3",
                "post-game",
            ],
            rows,
            caption="; ".join(
                sorted({f"{r['family']}: {r['note']}" for r in payload["rows"] if r["note"]})
                + [n for n in payload["notes"] if "ignores `memory`" in n]
            ),
        )
    )
    part_rows = []
    for r in payload["rows"]:
        if not r["default"] or not r["mean_part_tokens_by_round"]:
            continue
        parts = {int(k): v for k, v in r["mean_part_tokens_by_round"].items()}
        first, last = parts[min(parts)], parts[max(parts)]
        part_rows.append(
            [r["family"], r["policy"], f"r{min(parts)} -> r{max(parts)}"]
            + [f"{first.get(p, 0):.0f} -> {last.get(p, 0):.0f}" for p in PARTS]
        )
    console.print(
        rich_table(
            "Where the growth is (default policies): mean tokens per call of each part of the "
            "prompt, first round -> last round",
            ["family", "memory", "rounds", *PARTS],
            part_rows,
            caption="view = the role's events under its memory policy; notes = its private "
            "notes (agents.remember, the last 6 shown); question = question + answer format",
        )
    )
    run = payload.get("embedded_crisis")
    if run:
        console.print(
            rich_table(
                f"On the embedded model: a {run['rounds']}-move crisis ({run['scenario']}), prompt "
                f"tokens per move as llama.cpp counted them ({run['seconds']} s)",
                ["move", "calls", "prompt tokens", "per call"],
                [
                    [m, len(run["prompt_tokens_by_call"][m]), t, run["prompt_tokens_by_call"][m]]
                    for m, t in run["prompt_tokens_by_move"].items()
                ],
            )
        )
    console.print(targets_table("Targets (prompt growth)", payload["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.prompt_growth", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="crisis only, 3 rounds")
    parser.add_argument("--family", action="append", help="only these families (repeatable)")
    parser.add_argument("--no-model", action="store_true", help="skip the embedded-model game")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(
        quick=args.quick, families=args.family, model=not args.no_model, write=not args.no_write
    )


if __name__ == "__main__":
    main()
