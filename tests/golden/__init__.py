"""Fingerprints of scripted games of every family: a restructuring that keeps the rules keeps
them. `python -m tests.golden --write` records new ones (only when a rule or prompt change is
the point; say which in the commit); `--dump DIR` writes the normalised files to compare."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import game_graph, play

FINGERPRINTS = Path(__file__).with_name("fingerprints.json")

# (name, scenario, overrides, humans): short games that still pass every phase of the family
GAMES: list[tuple[str, str, list[str]]] = [
    ("crisis", "azuristan_crimsonia", ["rounds=2"]),
    ("crisis_teams", "strait_standoff", ["rounds=2"]),
    ("tabletop", "haiwire", ["rounds=2"]),
    ("waragent", "wwi", ["rounds=2"]),
    ("diplomacy", "diplomacy", ["diplomacy.max_year=1902"]),
    ("blotto", "blotto", ["rounds=2"]),
    ("flow", "summit", ["rounds=2"]),
]

_UNSTABLE = {"latency_s", "ts", "time", "started", "finished", "elapsed_s", "trace_path"}


def _stable(value: Any) -> Any:
    """The value without wall-clock fields (latencies, timestamps, paths of this run)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _UNSTABLE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def files(name: str, scenario: str, overrides: list[str], out: Path) -> dict[str, str]:
    """The normalised record, transcript and prompts of one scripted game."""
    result = play(
        scenario,
        overrides=overrides,
        context=GameContext(model="scripted", seed=7),
        db=None,
        thread_id=f"golden-{name}",
        out_dir=out,
    )
    record = _stable(result.record)
    calls = [
        _stable(json.loads(line))
        for line in (out / "trace.jsonl").read_text().splitlines()
        if line.strip()
    ]
    graph = game_graph(load_scenario(scenario, overrides), None)
    return {
        # what Studio draws: the phases, the seats and the routes between them
        "graph.mmd": graph.get_graph(xray=1).draw_mermaid(),
        "record.json": json.dumps(record, sort_keys=True, indent=1),
        "transcript.md": (out / "transcript.md").read_text(),
        # parallel seats write their calls in any order: sorted, the set of prompts is compared
        "trace.jsonl": "\n".join(sorted(json.dumps(c, sort_keys=True) for c in calls)),
    }


def fingerprint(texts: dict[str, str]) -> dict[str, str]:
    return {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in texts.items()}


def main(argv: list[str]) -> None:
    import tempfile

    dump = Path(argv[argv.index("--dump") + 1]) if "--dump" in argv else None
    found: dict[str, dict[str, str]] = {}
    for name, scenario, overrides in GAMES:
        with tempfile.TemporaryDirectory() as tmp:
            texts = files(name, scenario, overrides, Path(tmp) / name)
        found[name] = fingerprint(texts)
        if dump:
            for fname, text in texts.items():
                (dump / name).mkdir(parents=True, exist_ok=True)
                (dump / name / fname).write_text(text)
    if "--write" in argv:
        FINGERPRINTS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(json.dumps(found, indent=1))
