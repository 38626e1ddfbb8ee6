"""Benchmark 6: one-text-field answers (plan, narrative, diary, digest) on the embedded model,
asked the old way (JSON under a grammar) and the new way (plain text, put into the field in code).

The asks are the real ones of a scripted crisis game (its prompts, its views), replayed on the
embedded model; the two ways alternate ask by ask so a busy machine slows both alike.

- per call: median latency, generated tokens per second;
- per answer: how often the stored text still carries JSON wrapper text (`{"plan": ...`), and how
  often the new way needed a re-ask or its fallback.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

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

NAME = "free_text"
MAX_TOKENS = 200  # GameContext's default per seat
OLD_SYSTEM_LINE = "Answer only with the JSON object you are asked for."
NEW_SYSTEM_LINE = "Answer only in the form you are asked for."


def real_asks(limit: int) -> list[tuple[dict[str, Any], Any, str]]:
    """(ask, schema, memory) of the one-text-field asks of a 2-round scripted crisis game."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play
    from wargraph.seats.plaintext import text_field
    from wargraph.seats.scripted import ScriptedDecider

    found: list[tuple[dict[str, Any], Any, str]] = []
    decide = ScriptedDecider.decide

    def capture(self, ask, schema, *, memory=""):
        if text_field(schema):
            found.append((dict(ask), schema, memory))
        return decide(self, ask, schema, memory=memory)

    ScriptedDecider.decide = capture  # type: ignore[method-assign]
    try:
        play(
            "azuristan_crimsonia",
            overrides={"rounds": 2},
            context=GameContext(model="scripted"),
            db=None,
        )
    finally:
        ScriptedDecider.decide = decide  # type: ignore[method-assign]
    return found[:limit]


def old_way(llm, ask: dict[str, Any], schema, memory: str) -> dict[str, Any]:
    """Today's path before this change: the JSON prompt, a grammar, and a one-text-field reply
    that does not parse kept as it came."""
    from benchmarks.local_model import timed_call
    from wargraph.kernel.views import unseen_notes
    from wargraph.seats.plaintext import text_field
    from wargraph.seats.schemas import flat_json_schema, grammar_schema

    flat = flat_json_schema(schema)
    field = text_field(schema)
    system = ask["system"].replace(NEW_SYSTEM_LINE, OLD_SYSTEM_LINE)
    parts = [
        ask["context"],
        unseen_notes(memory, ask["context"]),  # the same notes as the new way's prompt
        ask["question"],
        f"Answer with one JSON object with the fields: {field}.",
    ]
    user = "\n\n".join(p for p in parts if p)
    fmt = {"type": "json_object", "schema": grammar_schema(flat)}
    wall, reply = timed_call(llm, system, user, response_format=fmt)
    text = str(reply.content)
    try:
        value = json.loads(text)
        stored = value.get(field, text) if isinstance(value, dict) else text
    except json.JSONDecodeError:
        stored = text  # what the old parser recorded as the model's answer
    tokens = (reply.usage_metadata or {}).get("output_tokens", 0)
    return {"latency_s": [wall], "tokens": tokens, "stored": str(stored), "source": "model"}


def new_way(ask: dict[str, Any], schema, memory: str, trace: Path) -> dict[str, Any]:
    from wargraph.runs.trace import read_trace
    from wargraph.seats.deciders import LLMDecider

    trace.unlink(missing_ok=True)
    seat = {"model": "embedded", "max_tokens": MAX_TOKENS, "seed": 0, "trace_path": str(trace)}
    decision = LLMDecider(seat).decide(ask, schema, memory=memory)
    calls = [e for e in read_trace(trace) if e["event"] == "call"]
    return {
        "latency_s": [c["latency_s"] for c in calls],
        "tokens": sum(c["completion_tokens"] for c in calls),
        "stored": next(iter(decision["value"].values())),
        "source": decision["source"],
    }


def wrapped(text: str) -> bool:
    """JSON wrapper text left in a stored answer (an opening brace with a quoted key, a fence)."""
    import re

    return bool(re.search(r'^\s*[\[{]|```|"\w+"\s*:', text))


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [s for r in rows for s in r["latency_s"]]
    seconds = sum(calls)
    return {
        "answers": len(rows),
        "calls": len(calls),
        "median_call_s": statistics.median(calls) if calls else None,
        "generated_tokens_per_s": sum(r["tokens"] for r in rows) / seconds if seconds else None,
        "wrapped_answers": sum(wrapped(r["stored"]) for r in rows),
        "fallbacks": sum(r["source"] == "fallback" for r in rows),
        "examples": [r["stored"][:160] for r in rows[:3]],
    }


def run(*, quick: bool = False, write: bool = True, show: bool = True) -> dict[str, Any]:
    from wargraph.models.chat import LlamaCppChat, embedded_model_path

    started, load_at_start = time.perf_counter(), load_average()
    asks = real_asks(2 if quick else 8)
    llm = LlamaCppChat(model_path=str(embedded_model_path()), max_tokens=MAX_TOKENS, seed=0)
    trace = Path(tempfile.mkdtemp(prefix="wargraph-bench-text-")) / "trace.jsonl"
    old, new = [], []
    with quiet_stderr():
        old_way(llm, *asks[0])  # warm-up: the model load and first-call costs
        for ask, schema, memory in asks:
            old.append(old_way(llm, ask, schema, memory))
            new.append(new_way(ask, schema, memory, trace))
            # as it goes: a busy machine may stop a long run before its table
            console.print(
                f"{ask['id']}: grammar {old[-1]['latency_s']} s, {old[-1]['tokens']} tok; "
                f"plain {new[-1]['latency_s']} s, {new[-1]['tokens']} tok",
                highlight=False,
            )
    before, after = summary(old), summary(new)
    speedup = (
        before["median_call_s"] / after["median_call_s"]
        if before["median_call_s"] and after["median_call_s"]
        else None
    )
    targets = [
        target(
            "one-text-field answers: per-call speed, plain text vs JSON grammar",
            speedup,
            2.0,
            rule=">=",
            unit="x",
        ),
        target(
            "stored answers with JSON wrapper text (plain text)",
            after["wrapped_answers"],
            0,
            rule="<=",
        ),
    ]
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        model=embedded_model_path().name,
        max_tokens=MAX_TOKENS,
        asks=[a["id"] for a, _, _ in asks],
        json_grammar=before,
        plain_text=after,
        speedup=speedup,
        targets=targets,
        notes=[
            "the same real asks, old and new way alternating; per-call latency includes prompt "
            "evaluation; the new way's re-asks count as calls",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    rows = [
        [
            name,
            d["answers"],
            d["calls"],
            d["median_call_s"],
            d["generated_tokens_per_s"],
            d["wrapped_answers"],
            d["fallbacks"],
        ]
        for name, d in (
            ("JSON under grammar (before)", p["json_grammar"]),
            ("plain text (now)", p["plain_text"]),
        )
    ]
    console.print(
        rich_table(
            f"6. One-text-field answers on {p['model']} (max {p['max_tokens']} tokens); "
            f"per-call speed-up {p['speedup'] or 0:.2f}x",
            [
                "way",
                "answers",
                "calls",
                "median s/call",
                "generated tok/s",
                "with JSON wrapper",
                "fallbacks",
            ],
            rows,
        )
    )
    console.print(targets_table("Targets (free text)", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.free_text", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, write=not args.no_write)


if __name__ == "__main__":
    main()
