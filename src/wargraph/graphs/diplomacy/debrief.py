"""The debrief after the last phase: the game's scores as a narration for the record and, when
the run has an output folder, the measures' files and the maps (`diplomacy.maps`) written there
(the relationship chart only on request: `wargraph eval diplomacy`).
All are pure functions of the record, so a resumed game rewrites the same files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wargraph.graphs.diplomacy.engine import phase_info
from wargraph.graphs.diplomacy.measures import game_measures, write_measures
from wargraph.graphs.diplomacy.phase import saved_of
from wargraph.graphs.diplomacy.render import write_maps
from wargraph.graphs.diplomacy.scenario import SECRETARY, diplomacy_scenario
from wargraph.kernel.parts import Debrief

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Scores(Debrief):
    """Game scores for the record; the measures' files when the run has an output folder."""

    def debrief(self, table: Table) -> dict[str, Any]:
        from wargraph.runs.records import build_record

        s = diplomacy_scenario(table)
        record = build_record(dict(table.state), thread_id="", trace_path=table.context.trace_path)
        measures = game_measures(record)
        folder = run_folder(table)
        if folder is not None:
            write_measures(measures, folder)
            saved = saved_of(table)
            phases = {"final": [phase_info(saved).name], "all": None, "none": []}
            write_maps(saved, folder / "maps", phases[s.diplomacy.maps])
        scores = measures["scores"]
        text = f"Game scores (max year {s.diplomacy.max_year}): " + ", ".join(
            f"{p} {v:g}" for p, v in sorted(scores.items(), key=lambda x: -x[1])
        )
        return {
            "events": [
                table.event(
                    kind="narration",
                    author=SECRETARY,
                    text=text,
                    data={"scores": scores, "centres": measures["centres"]},
                )
            ]
        }


def run_folder(table: Table) -> Path | None:
    """The run's output folder: where the runner puts the trace (None: no files are written)."""
    trace = table.context.trace_path
    return Path(trace).parent if trace else None
