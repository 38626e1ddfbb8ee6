"""wargraph's performance benchmarks (`make bench` / `python -m benchmarks`).

Benchmarks, not timed tests: each prints a Rich table and writes
`benchmarks/results/<name>.json` with the machine's description and every target marked met or
missed. Ratios are measured side by side in one run, on the same machine, so they survive a
noisy neighbour better than absolute numbers do.

1. `overhead`       framework cost of a full game per family (decider / engine / framework)
2. `prompt_growth`  prompt tokens per call by round, per family and memory policy
3. `local_model`    the embedded model's speed and its KV-cache reuse for shared prefixes
4. `concurrency`    N games at once against OpenAI-compatible servers on loopback (a fake
                    one with a fixed latency, llama.cpp's)
5. `storage`        SQLite checkpoint bytes per round and per game; time to resume
6. `scale`          games per minute: in-process vs Ray, SQLite vs PostgreSQL; a Diplomacy
                    game's calls, tokens and bytes (docs/scaling.md plans from them)
7. `free_text`      one-text-field answers: plain text vs JSON under a grammar, per-call speed
8. `diplomacy_lean` Diplomacy's cost per phase, engine work vs a bare engine loop, order prompt
                    tokens per section with long diaries and messages
9. `tournament`     a scripted Diplomacy tournament's harness cost: games per minute in-process
                    and on Ray, the report's cost from stored games
10. `play_quality`  do the games say anything: echoes, misspelled sides, negotiation activity,
                    repeated blocks, phase headers (crisis and Diplomacy 1901 on a model)
11. `sync_async`    N games at once: `invoke` in threads vs `ainvoke` under asyncio.gather, on
                    SQLite and PostgreSQL and against a 200 ms endpoint
12. `seats_at_once` Diplomacy's seven seats against a 500 ms endpoint: wall per movement phase
                    and requests in flight next to AI_Diplomacy's; CPU per movement phase
13. `view_tokens`   what a seat reads per profile: Diplomacy's prompt tokens per ask by phase
                    (S1901-F1910), small vs capable, next to AI_Diplomacy's order prompt; view
                    coverage; wall and CPU per movement phase
14. `like_for_like` CPU per Diplomacy movement phase as AI_Diplomacy's was measured (the CLI,
                    the default store, HTTP to an instant stub, one negotiation round), read
                    between adjudications by the engine probe, with the ratio to its 0.950 s
                    (benchmarks/reference.py: measured with the probe in a run alternated with
                    this command), scaled by benchmarks/calibrate.py
"""

from __future__ import annotations

import os

# Benchmarks run offline: no tracing service, no analytics.
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGSMITH_TEST_TRACKING", "false")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")

BENCHMARKS = (
    "overhead",
    "prompt_growth",
    "local_model",
    "concurrency",
    "storage",
    "scale",
    "free_text",
    "diplomacy_lean",
    "tournament",
    "play_quality",
    "sync_async",
    "seats_at_once",
    "view_tokens",
    "like_for_like",
)
