"""Benchmark 13: what a seat reads, per profile (issue 39).

Diplomacy from S1901 to F1910 (two negotiation rounds) on the capable-model stand-in
(`tests/capable_standin.py`: press of several sentences, Markdown diaries, each text tagged),
played twice, side by side: under the small profile (the lean views, each section within its
SmolLM2 token budget) and under the capable one (every text of the current and previous phase
whole within a 16,000-token context budget). Per movement phase and profile: prompt tokens per
ask (system and user message, estimated by `wargraph.kernel.views.estimate_tokens` (re-exported by Diplomacy's budget), which errs
high for large vocabularies; the stand-in reports no real counts), the order prompt apart, and
the game's view coverage (the share of the characters given to the seats' views shown whole);
wall and CPU per movement phase. Next to it, AI_Diplomacy's order prompt: 2,520 tokens (issue 39).

Targets: capable coverage 1.0; capable prompts within the budget; small prompts unchanged in
size by this change (report).
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
    result_payload,
    rich_table,
    target,
    targets_table,
)

NAME = "view_tokens"
AI_DIPLOMACY_ORDER_PROMPT_TOKENS = 2520  # its order prompt carries the phase's talks whole
PROFILES = ("small", "capable")


def play_profile(url: str, profile: str, max_year: int, out: Path) -> dict[str, Any]:
    """One game under `profile`: its prompts' estimated tokens per phase and task, coverage,
    wall and CPU."""
    from wargraph.graphs.diplomacy.budget import (
        estimate_tokens,  # (re-exported: runs on older code)
    )
    from wargraph.kernel.context import GameContext
    from wargraph.runs.runner import play

    wall, cpu = time.perf_counter(), time.process_time()
    result = play(
        "diplomacy",
        overrides=[f"diplomacy.max_year={max_year}", "diplomacy.negotiation_rounds=2"],
        context=GameContext(model=f"openai:frontier@{url}", seed=11, profile=profile),
        db=None,
        thread_id=f"view-tokens-{profile}",
        out_dir=out,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    phase_of = {
        e["round"]: e["data"].get("phase")
        for e in result.record["events"]
        if e["kind"] == "narration" and e["phase"] == "adjudicate"
    }
    per_phase: dict[str, dict[str, list[int]]] = {}
    seen: set[str] = set()
    for line in (out / "trace.jsonl").read_text().splitlines():
        c = json.loads(line) if line.strip() else {}
        if c.get("event") != "call" or c["ask_id"] in seen:
            continue
        seen.add(c["ask_id"])
        phase = phase_of.get(c["round"]) or f"round {c['round']}"
        tokens = estimate_tokens("\n".join(m["content"] for m in c["messages"]))
        row = per_phase.setdefault(phase, {"all": [], "orders": []})
        row["all"].append(tokens)
        if c["task"] == "orders":
            row["orders"].append(tokens)
    movement = [p for p in per_phase if p.endswith("M")]
    return {
        "profile": profile,
        "finished": result.finished,
        "phases": {
            p: {
                "asks": len(v["all"]),
                "mean": round(statistics.mean(v["all"])),
                "max": max(v["all"]),
                "orders_mean": round(statistics.mean(v["orders"])) if v["orders"] else None,
                "orders_max": max(v["orders"]) if v["orders"] else None,
            }
            for p, v in per_phase.items()
            if v["all"]
        },
        "view_coverage": {
            k: v for k, v in result.record.get("view_coverage", {}).items() if k != "per_seat"
        },
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "movement_phases": len(movement),
        "wall_per_movement_phase_s": round(wall / max(len(movement), 1), 3),
        "cpu_per_movement_phase_s": round(cpu / max(len(movement), 1), 3),
    }


def run(*, quick: bool = False, write: bool = True, show: bool = True) -> dict[str, Any]:
    from tests.capable_standin import CapableStandIn
    from wargraph.models.profiles import CAPABLE

    started, load_at_start = time.perf_counter(), load_average()
    max_year = 1902 if quick else 1910
    games = {}
    with CapableStandIn(tag=True) as endpoint, tempfile.TemporaryDirectory() as tmp:
        play_profile(endpoint.url, "small", 1901, Path(tmp) / "warm-up")  # imports, engine load
        for profile in PROFILES:
            games[profile] = play_profile(endpoint.url, profile, max_year, Path(tmp) / profile)
            console.print(f"{profile}: {games[profile]['wall_s']} s", highlight=False)
    capable = games["capable"]
    largest = max(p["max"] for p in capable["phases"].values())
    targets = [
        target(
            "capable profile: view coverage (share of characters shown whole)",
            capable["view_coverage"].get("share"),
            1.0,
            rule=">=",
        ),
        target(
            "capable profile: largest prompt, estimated tokens",
            largest,
            getattr(CAPABLE, "context_tokens", None) or 16_000,
            rule="<=",
            unit="tokens",
        ),
    ]
    payload = result_payload(
        NAME,
        started,
        load_at_start,
        max_year=max_year,
        ai_diplomacy_order_prompt_tokens=AI_DIPLOMACY_ORDER_PROMPT_TOKENS,
        token_count="estimated: wargraph.kernel.views.estimate_tokens (calibrated on SmolLM2)",
        context_tokens=getattr(CAPABLE, "context_tokens", None),
        games=games,
        targets=targets,
    )
    return finish(NAME, payload, show_tables, show=show, write=write)


def show_tables(p: dict[str, Any]) -> None:
    small, capable = p["games"]["small"], p["games"]["capable"]
    rows = []
    for phase in capable["phases"]:
        if not phase.endswith("M"):
            continue
        s, c = small["phases"].get(phase, {}), capable["phases"][phase]
        rows.append(
            [
                phase,
                s.get("mean"),
                s.get("orders_mean"),
                c["mean"],
                c["orders_mean"],
                c["max"],
                p["ai_diplomacy_order_prompt_tokens"],
            ]
        )
    console.print(
        rich_table(
            "Prompt tokens per ask by phase (estimated), Diplomacy with two negotiation rounds",
            [
                "phase",
                "small mean",
                "small orders",
                "capable mean",
                "capable orders",
                "capable max",
                "AI_Diplomacy orders",
            ],
            rows,
            caption=f"view coverage: small {small['view_coverage'].get('share')}, capable "
            f"{capable['view_coverage'].get('share')}; wall / CPU per movement phase: small "
            f"{small['wall_per_movement_phase_s']} / {small['cpu_per_movement_phase_s']} s, "
            f"capable {capable['wall_per_movement_phase_s']} / "
            f"{capable['cpu_per_movement_phase_s']} s",
        )
    )
    console.print(targets_table("Targets", p["targets"]))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.view_tokens", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="to 1902 instead of 1910")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    return run(quick=args.quick, write=not args.no_write)


if __name__ == "__main__":
    main()
