"""Benchmark 9: play quality — do the games say anything? (`python -m benchmarks.play_quality`)

Plays the 2-move azuristan_crimsonia crisis and Diplomacy 1901 (one negotiation round) over
three seeds on a model (default: the embedded SmolLM2-135M; `--model gguf:PATH` or
`--model openai:MODEL@URL` for any other) and reads each game's trace and record
(`benchmarks/quality_metrics.py`): instructions echoed as answers, side names spelled wrongly,
negotiation activity, answers on topic, blocks shown twice in one prompt, the phase a prompt
names vs the phase played, Diplomacy orders that only hold, diaries (of every power) that claim
talks that did not happen or attribute them to a power that sent nothing. Prints each target met or missed with its numbers; writes
`benchmarks/results/play_quality.json` (the file name takes the model's name when it is not the
embedded one).

    python -m benchmarks.play_quality                         # embedded model, 3 seeds
    python -m benchmarks.play_quality --model gguf:/path/to/model.gguf --seeds 1
    python -m benchmarks.play_quality --family crisis --model openai:qwen@http://127.0.0.1:8080/v1
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import quality_metrics as Q
from benchmarks.common import (
    console,
    finish,
    load_average,
    quiet_stderr,
    result_payload,
    rich_table,
    target,
    targets_table,
)

NAME = "play_quality"
GAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "crisis": ("azuristan_crimsonia", {"rounds": 2}),
    "diplomacy": (
        "diplomacy",
        {"diplomacy.negotiation_rounds": 1, "diplomacy.max_year": 1901, "diplomacy.maps": "none"},
    ),
}
SEEDS = (0, 1, 2)


def scenario_words(name: str, overrides: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The scenario's side names and its entities (the sides and the setting's proper nouns),
    from the one place the game takes them (`wargraph.seats.names.scenario_names`)."""
    from wargraph.kernel.scenario import load_scenario
    from wargraph.seats.names import scenario_names

    sides, nouns = scenario_names(load_scenario(name, overrides))
    return sides, sorted({*sides, *nouns})


def play_one(
    family: str, model: str, seed: int, folder: Path, *, replay: bool = False
) -> dict[str, Any]:
    """One game on `model` (`replay`: the game already in `folder`, read again); its metrics."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.records import load_record
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    name, overrides = GAMES[family]
    out = folder / f"{family}-{seed}"
    start = time.perf_counter()
    if not replay:
        with quiet_stderr():
            play(
                name,
                overrides=dict(overrides),
                context=GameContext(model=model, seed=seed, call_timeout=300),
                db=None,
                out_dir=out,
            )
    seconds = time.perf_counter() - start
    trace = list(read_trace(out / "trace.jsonl"))
    record = load_record(out / "record.json")
    sides, entities = scenario_words(name, overrides)
    found = Q.game_quality(trace, record, sides=sides, entities=entities, family=family)
    return {**found, "seconds": round(seconds, 1), "folder": str(out)}


def measure(
    model: str, families: list[str], seeds: list[int], folder: Path, *, replay: bool = False
) -> dict[str, dict[str, Any]]:
    """Per family: every game's metrics and their sum."""
    out = {}
    for family in families:
        games = []
        for seed in seeds:
            console.print(f"  {family}, seed {seed} on {model} ...")
            games.append(play_one(family, model, seed, folder, replay=replay))
        out[family] = {"total": Q.merge(games), "games": games}
    return out


def targets_for(model: str, results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets, per family where the family has the thing measured."""
    out = []
    for family, r in results.items():
        t = r["total"]
        label = f"{family} on {model}"
        out += [
            target(
                f"{label}: answers that echo their instructions ({t.get('echoes', 0)} of "
                f"{t.get('answers', 0)})",
                t.get("echoes", 0),
                0,
                rule="<=",
            ),
            target(
                f"{label}: recorded answers that echo their instructions, after the decider "
                f"leaves restating sentences out ({t.get('recorded_echoes', 0)} of "
                f"{t.get('echoes', 0)} echoing answers)",
                t.get("recorded_echoes", 0),
                0,
                rule="<=",
            ),
            target(
                f"{label}: model answers with a side's name spelled wrongly, as the model wrote "
                f"them ({t.get('misspelled', 0)} of {t.get('answers', 0)}; difflib ratio >= "
                f"{Q.NAME_RATIO})",
                Q.share(t.get("misspelled", 0), t.get("answers")),
                0.05,
                rule="<=",
            ),
            target(
                f"{label}: recorded answers with a side's name spelled wrongly, after the "
                f"names fallback ({t.get('recorded_misspelled', 0)} of "
                f"{t.get('recorded_answers', 0)}; {t.get('corrected_answers', 0)} answers "
                "corrected)",
                Q.share(t.get("recorded_misspelled", 0), t.get("recorded_answers")),
                0.05,
                rule="<=",
            ),
            target(
                f"{label}: prompts showing a block twice ({t.get('prompts_with_repeats', 0)} of "
                f"{t.get('prompts', 0)}; besides, {t.get('prompts_with_copies', 0)} show an answer "
                "the model copied from an earlier one)",
                t.get("prompts_with_repeats", 0),
                0,
                rule="<=",
            ),
            target(
                f"{label}: prompts naming the phase played ({t.get('phase_right', 0)} of "
                f"{t.get('phase_checked', 0)})",
                Q.share(t.get("phase_right", 0), t.get("phase_checked")),
                1.0,
                rule=">=",
            ),
        ]
        if t.get("negotiation_rounds"):
            out.append(
                target(
                    f"{label}: negotiation rounds where every power sent a message "
                    f"({t.get('rounds_everyone_sent', 0)} of {t['negotiation_rounds']}; "
                    f"{t.get('seat_rounds_with_message', 0)} of {t.get('seat_rounds', 0)} "
                    "power-rounds)",
                    Q.share(t.get("rounds_everyone_sent", 0), t["negotiation_rounds"]),
                    0.8,
                    rule=">=",
                )
            )
        if t.get("diaries"):
            out.append(
                target(
                    f"{label}: diaries claiming talks that did not happen or naming a power the "
                    f"writer exchanged no message with ({t.get('false_talk_diaries', 0)} of "
                    f"{t['diaries']}; {t.get('misattributed_claims', 0)} of "
                    f"{t.get('diary_claims', 0)} claims naming a power misattributed)",
                    Q.share(t.get("false_talk_diaries", 0), t["diaries"]),
                    0.1,
                    rule="<=",
                )
            )
    return out


def run(
    *,
    quick: bool = False,
    write: bool = True,
    show: bool = True,
    model: str = "embedded",
    families: list[str] | None = None,
    seeds: list[int] | None = None,
    games: Path | None = None,
) -> dict[str, Any]:
    from wargraph.models.chat import parse_model_ref

    started, load_at_start = time.perf_counter(), load_average()
    ref = str(parse_model_ref(model))  # a bad reference fails here, in one line
    families = families or list(GAMES)
    seeds = seeds if seeds is not None else ([0] if quick else list(SEEDS))
    folder = games or Path(tempfile.mkdtemp(prefix="wargraph-bench-quality-"))
    results = measure(ref, families, seeds, folder, replay=games is not None)
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        model=ref,
        seeds=seeds,
        games={f: {"scenario": GAMES[f][0], "overrides": GAMES[f][1]} for f in families},
        results=results,
        targets=targets_for(ref, results),
        notes=[
            "echo: the answer uses the format's words ('no JSON', 'plain text', 'the plan only, "
            "no ...') or the length's ('in two to four sentences'), or >= "
            f"{Q.ECHO_SHARE:.0%} of its word triples (or of one sentence's, 5 words or more) are "
            "in the instructions (system prompt and the user turn's closing, unquoted "
            "paragraphs); counted in the model's raw output and as recorded (the decider leaves "
            "restating sentences out, wargraph.seats.echoes)",
            f"misspelled: a capitalised word with difflib ratio >= {Q.NAME_RATIO} to a side's "
            "name that is neither the name, a form of it (the name, or the name less one or two "
            "letters, with a demonym's or plural's ending: 'Crimsonians', not 'Azuristania') nor "
            "a word of the prompt; counted in the model's raw output (trace) "
            "and in the record's model-made events (after wargraph.seats.names corrects near-misses "
            "of exactly one side's name in prose)",
            "repeated block: a '#' heading twice, a line of >= "
            f"{Q.BLOCK_CHARS} characters twice, or a list line whose items all appear elsewhere "
            "(quote marks and note labels taken off); a block some answer of the game holds is "
            "the model's copy, counted apart",
            "phase: Diplomacy prompts' first season and year vs the engine phase played; "
            "crisis prompts' first 'move N' vs the move played",
            "negotiation round: one exchange of one game round; its seats: those asked",
            "false talks: a diary (any power's) whose summary claims talks (agreed, proposed, "
            "told ...) in a round its writer sent and received nothing, or names a power in a "
            "sentence claiming talks when neither wrote to the other nor to everyone that round",
        ],
    )
    # one file per model and choice of families: a partial run keeps the full run's file
    name = NAME if ref == "embedded" else f"{NAME}-{re.sub(r'[^A-Za-z0-9]+', '_', ref)[:60]}"
    if families != list(GAMES):
        name += "-" + "-".join(families)
    return finish(name, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    rows = []
    for family, r in p["results"].items():
        t = r["total"]
        rows.append(
            [
                family,
                t.get("games"),
                t.get("answers", 0),
                f"{t.get('echoes', 0)} raw, {t.get('recorded_echoes', 0)} recorded",
                f"{t.get('misspelled', 0)}/{t.get('answers', 0)} raw, "
                f"{t.get('recorded_misspelled', 0)}/{t.get('recorded_answers', 0)} recorded",
                Q.share(t.get("on_topic", 0), t.get("text_answers")),
                f"{t.get('prompts_with_repeats', 0)}/{t.get('prompts', 0)} "
                f"(+{t.get('prompts_with_copies', 0)} copies)",
                f"{t.get('phase_right', 0)}/{t.get('phase_checked', 0)}",
                Q.share(t.get("messages", 0), t.get("seat_rounds")),
                Q.share(t.get("empty_rounds", 0), t.get("negotiation_rounds")),
                Q.share(t.get("hold_only_sets", 0), t.get("order_sets")),
                f"{t.get('silent_diary_claims', 0)}/{t.get('silent_diaries', 0)}"
                if "silent_diaries" in t
                else "",
                f"{t.get('false_talk_diaries', 0)}/{t.get('diaries', 0)}" if "diaries" in t else "",
            ]
        )
    console.print(
        rich_table(
            f"9. Play quality on {p['model']} (seeds {p['seeds']})",
            [
                "family",
                "games",
                "answers",
                "echoes",
                "misspelled",
                "on topic",
                "repeat prompts",
                "phase right",
                "msgs/seat/round",
                "empty rounds",
                "hold-only",
                "silent diaries claiming talks",
                "diaries with false talks",
            ],
            rows,
            caption="; ".join(p["notes"][:2]),
        )
    )
    for family, r in p["results"].items():
        for kind, items in r["total"].get("examples", {}).items():
            if items:
                console.print(f"  {family} {kind}: " + " | ".join(repr(x) for x in items[:3]))
    console.print(targets_table("Targets (play quality)", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.play_quality",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default="embedded", help="embedded | gguf:PATH | openai:M@URL")
    parser.add_argument("--family", action="append", choices=list(GAMES), help="only these")
    parser.add_argument("--seeds", type=int, help="play seeds 0..N-1 (default 3)")
    parser.add_argument("--seed", type=int, action="append", help="play this seed (repeatable)")
    parser.add_argument("--quick", action="store_true", help="one seed")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--games",
        type=Path,
        help="read the games already in this folder (FAMILY-SEED/ with trace.jsonl and "
        "record.json, as a run leaves them) instead of playing",
    )
    args = parser.parse_args(argv)
    from wargraph.models.chat import ModelRefError
    from wargraph.runs.records import RecordError

    try:
        return run(
            quick=args.quick,
            write=not args.no_write,
            model=args.model,
            families=args.family,
            seeds=args.seed or (list(range(args.seeds)) if args.seeds else None),
            games=args.games,
        )
    except (ModelRefError, RecordError) as err:
        parser.exit(2, f"play_quality: {err}\n")


if __name__ == "__main__":
    main()
