"""AI_Diplomacy's figures, measured on these machines: the one place the benchmarks take them
from, each with what was run, how, and the load it ran at. They are facts of a run that cannot
be repeated here (AI_Diplomacy needs Python 3.13); a ratio to one of them holds only for a
wargraph run of the same shape (`Reference.setting`), and only at a similar load: under load
9-24 AI_Diplomacy's own work between waves grew (its 2-round phase took 4.5-5.3 s)."""

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"run": AI_DIPLOMACY_RUN}

    def label(self) -> str:
        """One line for a table's caption: value, setting, load."""
        spread = f", {self.spread}" if self.spread else ""
        return f"AI_Diplomacy {self.value} {self.unit} ({self.setting}; {self.load}{spread})"


CPU_PER_MOVEMENT_PHASE = Reference(
    name="cpu_per_movement_phase",
    value=0.473,
    unit="s",
    what="process CPU per movement phase",
    setting="stub answering at once, --num_negotiation_rounds 1",
    load="quiet machine",
    spread="0.50 +- 0.18 s over 8 repeats",
)

WALL_NO_PRESS = Reference(
    name="wall_per_movement_phase_0_rounds",
    value=2.34,
    unit="s",
    what="wall per movement phase, 4 waves of calls",
    setting="every answer after 500 ms, --num_negotiation_rounds 0",
    load="quiet machine (load 2.5-3.9)",
)

WALL_ONE_ROUND = Reference(
    name="wall_per_movement_phase_1_round",
    value=2.5,
    unit="s",
    what="wall per movement phase (issue 30's figure)",
    setting="every answer after 500 ms, --num_negotiation_rounds 1",
    load="issue 30's run; load not recorded",
)

WALL_TWO_ROUNDS = Reference(
    name="wall_per_movement_phase_2_rounds",
    value=3.16,
    unit="s",
    what="wall per movement phase, 5 waves of calls",
    setting="every answer after 500 ms, --num_negotiation_rounds 2",
    load="quiet machine (load 2.5-3.9)",
)

# requests in flight at the stub at 500 ms (2 rounds; the springs ask a second call per power)
IN_FLIGHT = {"peak": 14, "mean": 7.3}

# measured wall per movement phase by negotiation rounds, at 500 ms an answer
WALL_BY_ROUNDS: dict[int, Reference] = {0: WALL_NO_PRESS, 1: WALL_ONE_ROUND, 2: WALL_TWO_ROUNDS}

ALL = (CPU_PER_MOVEMENT_PHASE, WALL_NO_PRESS, WALL_ONE_ROUND, WALL_TWO_ROUNDS)


def ai_diplomacy_waves(rounds: int) -> int:
    """Waves of calls AI_Diplomacy's movement phase waits for (lm_game.py): N rounds, the
    negotiation diary, the orders, the phase-result diary; at no round a state update too."""
    return rounds + 3 if rounds else 4
