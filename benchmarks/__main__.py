"""`python -m benchmarks` (`make bench`): run every benchmark (`benchmarks.BENCHMARKS`), print
their tables and write benchmarks/results/<name>.json; end with every target, met or missed.

    python -m benchmarks                      # all (play_quality: an hour or more on 2 cores)
    python -m benchmarks --quick              # smaller games, fewer repeats (a minute or two)
    python -m benchmarks --only overhead --only storage
    python -m benchmarks --results-dir /tmp/bench   # write the JSON elsewhere

A benchmark that fails is reported and the others still run; the exit status is 1 then. A
missed target is a finding, not a failure: the exit status stays 0.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from pathlib import Path

from benchmarks import BENCHMARKS, common
from benchmarks.common import console, machine_info, targets_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="small games and few repeats")
    parser.add_argument("--only", action="append", choices=BENCHMARKS, help="run only these")
    parser.add_argument("--results-dir", type=Path, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if args.results_dir:
        common.RESULTS_DIR = args.results_dir  # write_result reads it at call time
    chosen = args.only or list(BENCHMARKS)
    m = machine_info()
    console.rule("wargraph benchmarks")
    console.print(
        f"{m['cpu_count']} x {m['cpu_model']}, {m['memory_gb']} GB, Python {m['python']}, "
        f"load average {m['load_average']}, commit {m['git_commit']}"
        + (" (quick mode)" if args.quick else "")
    )
    all_targets, failed, durations = [], [], {}
    for name in chosen:
        console.rule(name)
        start = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.{name}")
            payload = module.run(quick=args.quick)
            all_targets += payload.get("targets", [])
        except Exception:  # one broken benchmark must not hide the others' results
            failed.append(name)
            console.print(f"[red]{name} failed:[/]")
            console.print(traceback.format_exc())
        durations[name] = time.perf_counter() - start
    console.rule("summary")
    console.print(targets_table("All targets", all_targets))
    console.print(
        "Durations: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in durations.items())
        + f"; total {sum(durations.values()):.0f} s. Results in {common.RESULTS_DIR}"
    )
    if failed:
        console.print(f"[red]failed: {', '.join(failed)}[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
