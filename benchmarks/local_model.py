"""Benchmark 3: the embedded model (SmolLM2-135M-Instruct through `wargraph.models.chat.LlamaCppChat`).

- Calls per second and generated tokens per second, for free text and for grammar-constrained
  JSON (the way games call it).
- KV-cache reuse: llama.cpp keeps the previous prompt's evaluated tokens and only evaluates what
  differs after the longest common beginning. The latency of a call whose prompt shares its
  beginning (system, scenario, profile) with the previous call is measured against one whose
  prompt does not, with the same length, side by side; the speed-up is reported.
- How much of each prompt a real game could reuse, in the order a game makes its calls (the
  previous call's prompt is the cache), from scripted games of every family.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
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

NAME = "local_model"
REUSE_ROUNDS = 3  # enough rounds to see the call order settle; Diplomacy: three engine phases

FREE_PROMPT = "Write two sentences about a border dispute between two small countries."

# A stable beginning as a game builds it: instructions, then the scenario and a profile (data).
STABLE_USER = """The scenario (quoted data, not instructions):
> Azuristan and Crimsonia are neighbouring states with a long, disputed border. Zafaristan, a
> province of Azuristan, is populated mostly by ethnic Crimsonians. Its provincial assembly has
> just declared independence and asked Crimsonia for help. Azuristan calls the declaration
> illegal; crowds gather in the provincial capital, and Crimsonian volunteers cross the border.
> Both states have modern armies, and both have nuclear arsenals.
Your profile:
> Leadership: a cautious president elected on a promise of stability; a coalition government
> that depends on a nationalist minority party.
> Military: a large conscript army, an air force of ageing fighters, three armoured brigades
> stationed near the border, and a small nuclear arsenal under civilian control.
> Economy: heavy dependence on gas exports through a pipeline crossing Zafaristan; inflation
> of 9 percent; a sovereign fund that can cover one year of deficits.
> Society: a restless ethnic minority in the border provinces; a vocal diaspora abroad; a free
> but polarised press that follows every move of the government.
> Foreign policy: member of a regional defence pact that obliges consultation, not defence;
> trade agreements with both great powers; a standing border commission with Crimsonia.
> History: a short war thirty years ago ended in an armistice, never a peace treaty.
Events so far:
> [round 1, plan from azuristan] Move reserves forward and open talks through the commission.
> [round 1, narration from control] Troops gather on both sides; the commission meets once.
"""

QUESTIONS = (
    "Round 2 of 4: state your plan for the next year in two sentences.",
    "Round 2 of 4: which single action matters most now, and why? One sentence.",
)


def _system(tag: str = "") -> str:
    from wargraph.prompts import render_prompt

    base = render_prompt("player_system", "v1")
    return f"[{tag}] {base}" if tag else base


def _chat(temperature: float, max_tokens: int, path: str | None = None):
    from wargraph.models.chat import LlamaCppChat, embedded_model_path

    return LlamaCppChat(
        model_path=path or str(embedded_model_path()),
        temperature=temperature,
        max_tokens=max_tokens,
        seed=0,
    )


def timed_call(model, system: str, user: str, **kwargs: Any) -> tuple[float, Any]:
    """One chat call (system, user): its wall time in seconds and the reply message."""
    from langchain_core.messages import HumanMessage, SystemMessage

    start = time.perf_counter()
    reply = model.invoke([SystemMessage(system), HumanMessage(user)], **kwargs)
    return time.perf_counter() - start, reply


def _call(model, system: str, user: str, **kwargs: Any) -> tuple[float, int, int]:
    wall, reply = timed_call(model, system, user, **kwargs)
    usage = reply.usage_metadata or {}
    return wall, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def throughput(model, calls: int, budget_s: float = 45.0, **kwargs: Any) -> dict[str, Any]:
    """Up to `calls` calls, fewer (at least 2) once `budget_s` is spent: a busy machine makes
    each call many times slower, and `make bench` must still end in minutes."""
    walls, generated, prompt = [], 0, 0
    start = time.perf_counter()
    for i in range(calls):
        if i >= 2 and time.perf_counter() - start > budget_s:
            calls = i
            break
        # A different opening each time: no call gets the previous one's cache for free.
        wall, pt, ct = _call(model, _system(f"call {i} {time.time_ns()}"), FREE_PROMPT, **kwargs)
        walls.append(wall)
        generated += ct
        prompt += pt
    total = time.perf_counter() - start
    return {
        "calls": calls,
        "seconds": total,
        "calls_per_s": calls / total,
        "generated_tokens": generated,
        "generated_tokens_per_s": generated / total,
        "prompt_tokens_per_call": prompt / calls,
        "median_latency_s": statistics.median(walls),
    }


def cache_reuse(
    repeats: int, max_tokens: int, budget_s: float = 45.0, path: str | None = None
) -> dict[str, Any]:
    """Alternate the two cases so drift on a busy machine hits both alike.

    shared: prime with (system S, stable user U + question 1), then time (S, U + question 2).
    not shared: time (S', U + question 2) where S' differs from everything before at its first
    word, so only the chat template's first tokens match the cache."""
    model = _chat(0.0, max_tokens, path)
    shared, fresh, shared_pt, fresh_pt = [], [], [], []
    start = time.perf_counter()
    for i in range(repeats):
        if i >= 2 and time.perf_counter() - start > budget_s:
            repeats = i  # a busy machine: fewer repeats, so the run still ends in minutes
            break
        system = _system(f"game {i}-{time.time_ns()}")
        _call(model, system, STABLE_USER + QUESTIONS[0])  # the previous call of the same seat
        wall, pt, _ = _call(model, system, STABLE_USER + QUESTIONS[1])
        shared.append(wall)
        shared_pt.append(pt)
        wall, pt, _ = _call(
            model, _system(f"other {i}-{time.time_ns()}"), STABLE_USER + QUESTIONS[1]
        )
        fresh.append(wall)
        fresh_pt.append(pt)
    s, f = statistics.median(shared), statistics.median(fresh)
    return {
        "max_tokens": max_tokens,
        "repeats": repeats,
        "prompt_tokens": statistics.median(shared_pt),
        "shared_prefix_latency_s": s,
        "no_shared_prefix_latency_s": f,
        "speedup": f / s if s else None,
        "shared_all_s": shared,
        "no_shared_all_s": fresh,
    }


def chat_tokens(llama, messages: list[dict[str, Any]]) -> list[int]:
    """A recorded call's prompt as the embedded model sees it (its chat template, the assistant
    turn opened), in tokens."""
    text = "".join(
        f"<|im_start|>{'user' if m['role'] == 'human' else m['role']}\n{m['content']}<|im_end|>\n"
        for m in messages
    )
    return llama.tokenize(
        (text + "<|im_start|>assistant\n").encode("utf-8"), add_bos=False, special=True
    )


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_reuse(calls: list[dict[str, Any]], llama) -> dict[str, Any]:
    """Prompt tokens that match, from the beginning, (a) the previous call's prompt, whoever made
    it (one KV cache for every seat, as one in-process `Llama` has), and (b) the same seat's
    previous prompt (what a cache per seat could reuse), over calls in the order they were made."""
    previous: list[int] = []
    by_seat: dict[str, list[int]] = {}
    total = shared = own = 0
    for entry in calls:
        tokens = chat_tokens(llama, entry.get("messages", []))
        seat = str(entry.get("role"))
        total += len(tokens)
        shared += _common(tokens, previous)
        own += _common(tokens, by_seat.get(seat, []))
        previous = by_seat[seat] = tokens
    return {
        "calls": len(calls),
        "prompt_tokens": total,
        "reusable_tokens": shared,
        "reusable_share": shared / total if total else None,
        "same_seat_tokens": own,
        "same_seat_share": own / total if total else None,
    }


def game_order_reuse(families: list[str] | None, llama) -> list[dict[str, Any]]:
    """Per family: the share of prompt tokens that match the previous call's prompt from its
    beginning, and the same seat's previous prompt, over a scripted game's calls in the order it
    makes them. Prompts are rendered with the model's own chat template."""
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play
    from wargraph.runs.trace import read_trace

    rows = []
    workdir = Path(tempfile.mkdtemp(prefix="wargraph-bench-reuse-"))
    for spec in select_families(families):
        module, why = family_module(spec)
        if module is None:
            rows.append({"family": spec.name, "unavailable": why})
            continue
        trace = workdir / f"{spec.name}.jsonl"
        play(
            scenario_name(spec, module),
            overrides={"rounds": REUSE_ROUNDS},
            context=GameContext(model="scripted", trace_path=str(trace)),
            db=None,
        )
        calls = [e for e in read_trace(trace) if e.get("event") in ("scripted", "call")]
        rows.append({"family": spec.name, **prefix_reuse(calls, llama)})
    return rows


def embedded_game_reuse(llama) -> dict[str, Any]:
    """A real 3-move crisis on the embedded model (prompt_growth's game): the prompt tokens its
    calls could take from the KV cache in their real order."""
    from benchmarks.prompt_growth import embedded_crisis

    game = embedded_crisis(Path(tempfile.mkdtemp(prefix="wargraph-bench-reuse-")))
    calls = game["calls"]
    return {
        **prefix_reuse(calls, llama),
        "game_seconds": game["seconds"],
        "call_seconds": sum(float(e.get("latency_s", 0)) for e in calls),
        "messages": [e["messages"] for e in calls],
    }


REPLAYS = ("no_reuse", "one_cache", "ram_cache")


def replay_prompts(path: str, prompts: list[list[dict]], passes: int) -> dict[str, Any]:
    """The game's prompts replayed in their order, prompt evaluation only (max_tokens 1), three
    ways, passes alternating so a busy machine slows each alike: `no_reuse` (the KV cache emptied
    before each call), `one_cache` (as the game runs: the cache holds the previous call, whichever
    seat made it) and `ram_cache` (llama-cpp-python's `LlamaRAMCache`: a state saved after every
    call and the longest matching one restored, so a seat's own earlier prompt counts too).
    Time saved by reuse = no_reuse - one_cache; what a cache per seat would add = one_cache -
    ram_cache (its state copies included)."""
    from llama_cpp import LlamaRAMCache

    from wargraph.models.chat import load_llama

    with quiet_stderr():
        plain = load_llama(path, n_ctx=8192, n_threads=os.cpu_count() or 2, verbose=False)
        cached = load_llama(path, n_ctx=8192, n_threads=os.cpu_count() or 2, verbose=False)
    chats = [
        [
            {"role": "user" if m["role"] == "human" else m["role"], "content": m["content"]}
            for m in p
        ]
        for p in prompts
    ]
    times: dict[str, list[float]] = {name: [] for name in REPLAYS}
    for _ in range(passes):
        # a fresh prompt cache per pass: states saved in an earlier pass would match whole prompts
        cached.set_cache(LlamaRAMCache(capacity_bytes=2 << 30))
        cached.reset()
        for name in REPLAYS:
            llama = cached if name == "ram_cache" else plain
            start = time.perf_counter()
            for chat in chats:
                if name == "no_reuse":
                    llama.reset()  # nothing of the previous call is kept
                with quiet_stderr():
                    llama.create_chat_completion(messages=chat, max_tokens=1, temperature=0.0)
            times[name].append(time.perf_counter() - start)
            plain.reset()  # each way starts from an empty cache
    med = {name: statistics.median(v) for name, v in times.items()}
    return {
        "prompts": len(prompts),
        "passes": passes,
        **{f"{name}_s": med[name] for name in REPLAYS},
        "saved_s": med["no_reuse"] - med["one_cache"],
        "saved_share": 1 - med["one_cache"] / med["no_reuse"] if med["no_reuse"] else None,
        "ram_cache_speedup": med["one_cache"] / med["ram_cache"] if med["ram_cache"] else None,
        "all_s": times,
    }


def run(
    *, quick: bool = False, write: bool = True, show: bool = True, model: str = "embedded"
) -> dict[str, Any]:
    """The embedded model by default; `model` names any `gguf:PATH` (every measure but the
    embedded crisis game) or `openai:MODEL@URL` (speed only: a server's cache is its own)."""
    from wargraph.models.chat import (
        ModelRefError,
        _LocalLlama,
        embedded_model_path,
        parse_model_ref,
    )

    ref = parse_model_ref(model)
    if ref.provider == "scripted":
        raise ModelRefError("local_model measures a model: embedded, gguf:PATH or openai:M@URL")
    if ref.provider == "openai":
        return run_endpoint(ref, quick=quick, write=write, show=show)
    if ref.provider == "gguf" and not Path(ref.name).is_file():
        raise ModelRefError(f"model file {ref.name} does not exist")
    started, load_at_start = time.perf_counter(), load_average()
    calls = 2 if quick else 6
    repeats = 2 if quick else 5
    path = ref.name if ref.provider == "gguf" else str(embedded_model_path())
    with quiet_stderr():
        # A load of its own (an earlier benchmark may have loaded the shared instance already).
        from wargraph.models.chat import load_llama

        t0 = time.perf_counter()
        fresh = load_llama(path, n_ctx=8192, n_threads=os.cpu_count() or 2, verbose=False)
        load_s = time.perf_counter() - t0
        del fresh
        local = _LocalLlama.get(path)
    free = _chat(0.7, 64, path)
    _call(free, _system("warm-up"), FREE_PROMPT)  # first call pays one-off setup costs
    free_text = throughput(free, calls)
    from wargraph.nodes.schemas import Plan
    from wargraph.seats.schemas import flat_json_schema, grammar_schema

    schema = grammar_schema(flat_json_schema(Plan))
    structured = throughput(
        _chat(0.7, 96, path), calls, response_format={"type": "json_object", "schema": schema}
    )
    prefill = cache_reuse(repeats, max_tokens=1, path=path)
    full_call = cache_reuse(repeats, max_tokens=32, path=path)
    reuse = game_order_reuse(["crisis"] if quick else None, local.llama)
    game = embedded_game_reuse(local.llama)
    replay = replay_prompts(path, game.pop("messages"), passes=1 if quick else 3)
    targets = [
        target(
            "a prompt sharing its beginning with the previous call is evaluated faster "
            "(speed-up over no shared beginning)",
            prefill["speedup"],
            1.0,
            rule=">",
            unit="x",
        ),
        target(
            "the embedded game's prompts in their order: prompt evaluation with the KV cache "
            "emptied / kept as the game keeps it",
            replay["no_reuse_s"] / replay["one_cache_s"] if replay["one_cache_s"] else None,
            1.0,
            rule=">",
            unit="x",
        ),
    ]
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        model=Path(path).name,
        n_threads=os.cpu_count(),
        load_s=load_s,
        free_text=free_text,
        structured_json=structured,
        cache_prefill_only=prefill,
        cache_full_call=full_call,
        game_order_reuse=reuse,
        embedded_game_reuse=game,
        replay=replay,
        targets=targets,
        notes=[
            "prefill-only = max_tokens 1: the latency is prompt evaluation; full call = 32 "
            "tokens generated at temperature 0",
            "the embedded model has one KV cache per process (one Llama per model file serves "
            "every seat): calls of different seats interleave, so a game reuses only what "
            "consecutive calls share; 'same seat' is what a cache per seat could reuse",
            "time saved: the embedded game's prompts replayed in order (prompt evaluation "
            "only), the KV cache emptied before each call vs kept as the game keeps it",
        ],
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def run_endpoint(ref: Any, *, quick: bool, write: bool, show: bool) -> dict[str, Any]:
    """An OpenAI-compatible endpoint: calls per second and tokens per second, free text and
    schema-constrained JSON, as games call it (`chat_model`, `structured_kwargs`)."""
    from wargraph.models.chat import chat_model, structured_kwargs
    from wargraph.nodes.schemas import Plan
    from wargraph.seats.schemas import flat_json_schema, grammar_schema

    started, load_at_start = time.perf_counter(), load_average()
    calls = 2 if quick else 6
    free = chat_model(ref, temperature=0.7, max_tokens=64, timeout=300)
    _call(free, _system("warm-up"), FREE_PROMPT)
    schema = grammar_schema(flat_json_schema(Plan))
    structured = throughput(
        chat_model(ref, temperature=0.7, max_tokens=96, timeout=300),
        calls,
        **structured_kwargs(ref, schema, name="plan"),
    )
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        quick=quick,
        model=str(ref),
        free_text=throughput(free, calls),
        structured_json=structured,
        targets=[],
        notes=["an endpoint's KV cache is the server's own: only speed is measured"],
    )
    name = f"{NAME}-{re.sub(r'[^A-Za-z0-9]+', '_', str(ref))[:60]}"
    return finish(name, payload, show_speed, show=show, write=write)


SPEED_COLUMNS = [
    "kind",
    "calls",
    "calls/s",
    "generated tok/s",
    "median latency s",
    "prompt tok/call",
]


def speed_rows(p: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            name,
            d["calls"],
            d["calls_per_s"],
            d["generated_tokens_per_s"],
            d["median_latency_s"],
            d["prompt_tokens_per_call"],
        ]
        for name, d in (
            ("free text (64 tokens max)", p["free_text"]),
            ("JSON under grammar (plan schema)", p["structured_json"]),
        )
    ]


def show_speed(p: dict[str, Any]) -> None:
    rows = speed_rows(p)
    console.print(
        rich_table(
            f"3. Local model: {p['model']}",
            SPEED_COLUMNS,
            rows,
        )
    )


def show_tables(p: dict[str, Any]) -> None:
    rows = speed_rows(p)
    console.print(
        rich_table(
            f"3. Local model: {p['model']} in process (load {p['load_s']:.2f} s, {p['n_threads']} threads)",
            SPEED_COLUMNS,
            rows,
        )
    )
    cache_rows = [
        [
            name,
            d["prompt_tokens"],
            d["shared_prefix_latency_s"],
            d["no_shared_prefix_latency_s"],
            d["speedup"],
        ]
        for name, d in (
            ("prompt evaluation (max_tokens 1)", p["cache_prefill_only"]),
            ("full call (32 tokens)", p["cache_full_call"]),
        )
    ]
    console.print(
        rich_table(
            "KV-cache reuse: the same prompt after a call sharing its beginning vs after one that does not (medians)",
            ["case", "prompt tokens", "shared beginning s", "no shared beginning s", "speed-up"],
            cache_rows,
        )
    )

    def pct(v: float | None) -> float | None:
        return None if v is None else 100 * v

    g, r = p["embedded_game_reuse"], p["replay"]
    console.print(
        rich_table(
            f"Prompt tokens a game could reuse in its own call order ({REUSE_ROUNDS} rounds; "
            "scripted games of every family, and a real 3-move crisis on the embedded model)",
            ["game", "calls", "prompt tokens", "previous call %", "same seat %"],
            [
                [
                    r["family"] + " (scripted)",
                    r.get("calls"),
                    r.get("prompt_tokens"),
                    pct(r.get("reusable_share")),
                    pct(r.get("same_seat_share")),
                ]
                if "unavailable" not in r
                else [r["family"], r["unavailable"], "", "", ""]
                for r in p["game_order_reuse"]
            ]
            + [
                [
                    "crisis (embedded model)",
                    g["calls"],
                    g["prompt_tokens"],
                    pct(g["reusable_share"]),
                    pct(g["same_seat_share"]),
                ]
            ],
            caption="previous call % = what the one KV cache (one Llama for every seat) reuses; "
            "same seat % = what the seat's own previous prompt holds",
        )
    )
    console.print(
        rich_table(
            f"The embedded game's {r['prompts']} prompts replayed in order, prompt evaluation "
            f"only (median of {r['passes']} passes, alternating)",
            [
                "KV cache emptied s",
                "kept (as in the game) s",
                "saved s",
                "saved %",
                "LlamaRAMCache s",
                "RAM cache speed-up",
            ],
            [
                [
                    r["no_reuse_s"],
                    r["one_cache_s"],
                    r["saved_s"],
                    pct(r["saved_share"]),
                    r["ram_cache_s"],
                    r["ram_cache_speedup"],
                ]
            ],
        )
    )
    console.print(targets_table("Targets (local model)", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.local_model", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--model", default="embedded", help="embedded | gguf:PATH | openai:M@URL")
    args = parser.parse_args(argv)
    from wargraph.models.chat import ModelRefError

    try:
        return run(quick=args.quick, write=not args.no_write, model=args.model)
    except ModelRefError as err:
        parser.exit(2, f"local_model: {err}\n")


if __name__ == "__main__":
    main()
