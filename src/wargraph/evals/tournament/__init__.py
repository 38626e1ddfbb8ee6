"""Tournaments: entrants (models, prompts, personas, bots of known strength) play a scenario
over a fair schedule of seats, and are rated with intervals.

One concern per module: `spec` (the file), `schedule` (seat rotation, balance), `play` (games
as experiment games: resume, leases, concurrency, Ray), `results` (a game's ranking from its
record), `ratings` (Plackett-Luce / Bradley-Terry with bootstrap intervals, OpenSkill,
pairwise, crosstable), `report` (report.md, summary.json, figures), `run` and `cli`."""

from wargraph.evals.tournament.run import TournamentResult, report_only, run_tournament
from wargraph.evals.tournament.spec import Entrant, Tournament, TournamentError, load_tournament

__all__ = [
    "Entrant",
    "Tournament",
    "TournamentError",
    "TournamentResult",
    "load_tournament",
    "report_only",
    "run_tournament",
]
