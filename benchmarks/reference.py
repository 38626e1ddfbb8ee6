"""AI_Diplomacy's figures, measured on these machines: the one place the benchmarks take them
from, each with what was run, how, and the load it ran at. The benchmarks cannot run
AI_Diplomacy themselves (it needs Python 3.13, and none of its code may be committed here), so
its figures were measured by hand in one run alternated game by game with wargraph's own
command (`SAME_RUN`), and wargraph's figure from that run is kept beside them
(`WARGRAPH_IN_THE_SAME_RUN`). A ratio to a stored figure holds only for a wargraph run of the same
shape (`Reference.setting`) on this kind of machine at a similar load: an earlier machine of
this workplace gave AI_Diplomacy 0.473 s of CPU where this one gives 0.266 s, and under load
9-24 its own work between waves grew (its 2-round phase took 4.5-5.3 s)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# What every AI_Diplomacy figure below ran as (issue 43; /work/shared/NOTES.md, 2026-11-28).
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


# How the figures below were measured (issue 43, 2026-11-28; /work/shared/NOTES.md): AI_Diplomacy
# 91dba40 and wargraph 6a0d565 alternated game by game, both against one loopback stub that
# answered AI_Diplomacy in the formats it parses (orders from its prompt's possible orders,
# messages, diaries: 330 calls to 1905, every one parsed) and wargraph as benchmarks/
# fake_endpoint.py does; 2 cores (AMD EPYC), load 1.5-2.4 with another process on 1.2-1.6 cores.
SAME_RUN = (
    "measured in two runs on a 2-core machine, alternated game by game with wargraph's "
    "like_for_like command (2026-11-28 23:38-23:53, load 0.6-1.9)"
)

WALL_RUN = (
    "measured in one run on a 2-core machine, alternated with wargraph's phase_timeline "
    "command (2026-11-28, load 1.4-2.1)"
)

CPU_PER_MOVEMENT_PHASE = Reference(
    name="cpu_per_movement_phase",
    value=0.274,
    unit="s",
    what="process CPU per movement phase (least of 11 games to 1905 less least of 11 to 1901)",
    setting="stub answering at once in its own formats, --num_negotiation_rounds 1",
    load=SAME_RUN,
    spread="0.295 s from the medians; 0.274 s per repeat (median); 0.266 s in an earlier run",
    brief="same runs as wargraph's, load 0.6-1.9",
)

# How fast the machine ran Python in those runs: `benchmarks.calibrate`'s seconds, the least of
# its passes interleaved with the games. like_for_like scales CPU_PER_MOVEMENT_PHASE by its own
# calibration over this one: the same code ran up to 1.4x slower from one hour to the next.
CALIBRATION_S = 0.0841

# wargraph's figure in the runs that measured CPU_PER_MOVEMENT_PHASE (like_for_like's command,
# this session's final code); an earlier run (6a0d565, 8 games each) gave 0.084 s against
# AI_Diplomacy's 0.266 s: 0.315x
WARGRAPH_IN_THE_SAME_RUN = {
    "commit": "90773e7",
    "cpu_per_movement_phase_s": 0.0895,
    "from_medians_s": 0.0949,
    "per_repeat_s": 0.0931,
    "x_ai_diplomacy": 0.326,
    "x_from_medians": 0.322,
    "x_per_repeat": 0.340,
    "calls_to_1905": 241,
    "ai_diplomacy_calls_to_1905": 330,
}

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
