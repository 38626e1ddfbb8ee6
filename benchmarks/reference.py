"""AI_Diplomacy's figures, measured on these machines: the one place the benchmarks take them
from, each with what was run, how, and the load it ran at. The benchmarks cannot run
AI_Diplomacy themselves (it needs Python 3.13, and none of its code may be committed here), so
its figures were measured by hand in one run alternated game by game with wargraph's own
command (`SAME_RUN`), and wargraph's figure from that run is kept beside them
(`WARGRAPH_IN_THE_SAME_RUN`). A ratio to a stored figure holds only for a wargraph run of the same
shape (`Reference.setting`) on this kind of machine at a similar load: machines of this
workplace gave AI_Diplomacy's phase 0.473 s (27 November), 0.27 s (28 November) and 0.95 s (29
November, probe) of CPU, and under load 9-24 its own work between waves grew (its 2-round phase
took 4.5-5.3 s): a ratio measured in one run is the figure that carries."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# What every AI_Diplomacy figure below ran as (issue 43; /work/shared/NOTES.md, 2026-11-28/29).
AI_DIPLOMACY_RUN = (
    "AI_Diplomacy 91dba40 on its uv.lock pins (Python 3.13), its CLI (lm_game.py), its own "
    "game files and maps as it writes them, every model call over HTTP to a loopback "
    "OpenAI-compatible stub, on the same 2-core machine"
)


@dataclass(frozen=True)
class Reference:
    """One measured figure: `value` in `unit`, what it is, the setting it was measured at, the
    machine's load then, and the spread where repeats were run."""

    name: str
    value: float
    unit: str
    what: str
    setting: str
    load: str
    spread: str = ""
    brief: str = ""
    """How and when, in a few words, for a table's cell (the load's whole text otherwise)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"run": AI_DIPLOMACY_RUN}

    def label(self) -> str:
        """One line for a table's caption: value, setting, load."""
        spread = f", {self.spread}" if self.spread else ""
        return f"AI_Diplomacy {self.value} {self.unit} ({self.setting}; {self.load}{spread})"


# How the CPU figures below were measured (issue 43, 2026-11-29; /work/shared/NOTES.md): AI_Diplomacy
# 91dba40, wargraph 6ae714e and wargraph 687b023 (the code before the day's cuts) alternated game
# by game to 1905, all against loopback stubs answering at once (AI_Diplomacy in the formats it
# parses: 331 calls, every one parsed; wargraph as benchmarks/fake_endpoint.py does: 241 calls),
# each process's CPU read at every adjudication by the engine probe (benchmarks/engine_probe):
# CPU from the end of 1901's last adjudication to the end of 1905's / the 8 movement phases.
SAME_RUN = (
    "measured in one run on a 2-core machine, alternated game by game with wargraph's "
    "like_for_like command (2026-11-29 01:49-02:00, load 0.7-1.4)"
)

WALL_RUN = (
    "measured in one run on a 2-core machine, alternated with wargraph's phase_timeline "
    "command (2026-11-28, load 1.4-2.1)"
)

CPU_PER_MOVEMENT_PHASE = Reference(
    name="cpu_per_movement_phase",
    value=0.950,
    unit="s",
    what="process CPU per movement phase, 1901's last adjudication to 1905's (engine probe), "
    "least of 8 games to 1905",
    setting="stub answering at once in its own formats, --num_negotiation_rounds 1",
    load=SAME_RUN,
    spread="1.015 s the median, 0.950-1.120 s by game; two shorter runs the same day: 0.98 / "
    "0.99 s (4 games), 0.76 / 0.93 s (5 games)",
    brief="same run as wargraph's, load 0.7-1.4",
)

# How fast the machine ran Python in that run: `benchmarks.calibrate`'s seconds, the least of its
# passes interleaved with the games (0.27 s their median: this machine's speed moved by 2x within
# the hour, so only a ratio of one run is firm). like_for_like scales CPU_PER_MOVEMENT_PHASE by its
# own calibration over this one.
CALIBRATION_S = 0.2115

# wargraph's figures in the run that measured CPU_PER_MOVEMENT_PHASE (like_for_like's command)
WARGRAPH_IN_THE_SAME_RUN = {
    "commit": "6ae714e",
    "cpu_per_movement_phase_s": 0.259,
    "median_s": 0.2689,
    "x_ai_diplomacy": 0.273,
    "x_median": 0.265,
    "x_per_repeat": "0.231-0.285",
    "before_the_cuts": {"commit": "687b023", "least_s": 0.2898, "median_s": 0.3254, "x": 0.305},
    "calls_to_1905": 241,
    "ai_diplomacy_calls_to_1905": 331,
}

# The figure by the earlier method (a game to 1905 less one to 1901, whole processes: start-up
# and end included, which varied by seconds) on the machine of 28 November, which ran Python
# 2.5x faster: AI_Diplomacy 0.274 s, wargraph 90773e7 0.0895 s (0.326x) in the same runs.
CPU_PER_MOVEMENT_PHASE_WHOLE_GAMES = Reference(
    name="cpu_per_movement_phase_whole_games",
    value=0.274,
    unit="s",
    what="process CPU per movement phase (least of 11 games to 1905 less least of 11 to 1901)",
    setting="stub answering at once in its own formats, --num_negotiation_rounds 1",
    load="two runs on 28 November's machine, alternated with wargraph (load 0.6-1.9)",
    spread="0.295 s from the medians; wargraph 90773e7 0.0895 s in the same runs (0.326x)",
)

CPU_PER_MOVEMENT_PHASE_EARLIER = Reference(
    name="cpu_per_movement_phase_earlier_machine",
    value=0.473,
    unit="s",
    what="process CPU per movement phase, on an earlier machine (not the same run as wargraph's)",
    setting="stub answering at once, --num_negotiation_rounds 1",
    load="quiet machine",
    spread="0.50 +- 0.18 s over 8 repeats",
)

WALL_NO_PRESS = Reference(
    name="wall_per_movement_phase_0_rounds",
    value=2.17,
    unit="s",
    what="wall per movement phase, 4 waves of calls",
    setting="every answer after 500 ms, --num_negotiation_rounds 0",
    load=WALL_RUN,
    spread="2.17-2.18 s; 2.34 s on an earlier machine at load 2.5-3.9",
    brief="same run as wargraph's, load 1.4-2.1",
)

WALL_ONE_ROUND = Reference(
    name="wall_per_movement_phase_1_round",
    value=2.5,
    unit="s",
    what="wall per movement phase (issue 30's figure)",
    setting="every answer after 500 ms, --num_negotiation_rounds 1",
    load="issue 30's run; load not recorded",
    brief="an earlier machine, issue 30",
)

WALL_TWO_ROUNDS = Reference(
    name="wall_per_movement_phase_2_rounds",
    value=2.93,
    unit="s",
    what="wall per movement phase, 5 waves of calls",
    setting="every answer after 500 ms, --num_negotiation_rounds 2",
    load=WALL_RUN,
    spread="2.93-2.95 s; 3.16 s on an earlier machine at load 2.5-3.9",
    brief="same run as wargraph's, load 1.4-2.1",
)

# requests in flight at the stub at 500 ms (2 rounds; the springs ask a second call per power)
IN_FLIGHT = {"peak": 14, "mean": 7.3}

# measured wall per movement phase by negotiation rounds, at 500 ms an answer
WALL_BY_ROUNDS: dict[int, Reference] = {0: WALL_NO_PRESS, 1: WALL_ONE_ROUND, 2: WALL_TWO_ROUNDS}

ALL = (
    CPU_PER_MOVEMENT_PHASE,
    CPU_PER_MOVEMENT_PHASE_EARLIER,
    WALL_NO_PRESS,
    WALL_ONE_ROUND,
    WALL_TWO_ROUNDS,
)


def ai_diplomacy_waves(rounds: int) -> int:
    """Waves of calls AI_Diplomacy's movement phase waits for (lm_game.py): N rounds, the
    negotiation diary, the orders, the phase-result diary; at no round a state update too."""
    return rounds + 3 if rounds else 4
