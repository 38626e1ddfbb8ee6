"""A tournament from start to report: schedule (written and printed before play), games,
more rotations while an adaptive tournament's top entrants are not yet apart, the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import wargraph.evals.tournament.play as play
from wargraph.evals.experiment import Hooks
from wargraph.evals.experiment.game import read_json
from wargraph.evals.experiment.lock import folder_lock
from wargraph.evals.tournament.ratings import plackett_luce, separated
from wargraph.evals.tournament.report import Standing, silent_entrants, standings, write_report
from wargraph.evals.tournament.schedule import Game, rotations
from wargraph.evals.tournament.spec import Tournament, TournamentError


@dataclass
class TournamentResult:
    out: Path
    games: list[Game]
    standing: Standing
    stopped_by: str
    counts: dict[str, int]
    report: Path
    people: list[str]
    # what the ratings cannot say (an entrant whose every model call failed)
    warnings: list[str] = field(default_factory=list)

    def standing_lines(self) -> list[str]:
        """The leaderboard in a few lines, for the terminal."""
        fit = self.standing.fit
        if fit is None:
            return ["no rated games yet"]
        rows = sorted(zip(fit.strength, fit.lo, fit.hi, fit.names, strict=True), reverse=True)
        return [
            f"{i}. {name}: {s:+.2f} [{lo:+.2f}, {hi:+.2f}]"
            for i, (s, lo, hi, name) in enumerate(rows, 1)
        ]


def out_path(t: Tournament, out: str | Path | None) -> Path:
    return Path(out or Path("runs") / "tournaments" / t.name)


def run_tournament(
    t: Tournament,
    out_dir: str | Path | None = None,
    *,
    db: str | None = None,
    ray: str | None = None,
    cpus_per_game: float = 1.0,
    show_progress: bool = True,
    console: Any = None,
    hooks: Hooks | None = None,
    announce: Any = None,
    pages: bool = False,
) -> TournamentResult:
    """Play every scheduled game not yet finished, then write the report (with `pages`, each
    game's page too, after the games). `announce(text)` receives the schedule before play (the
    CLI prints it). Killed, it resumes when run again."""
    out = out_path(t, out_dir)
    s = play.setup(t)
    games = play.schedule(s)
    # every outcome named, at 0 when none came out so (a reader indexes them, as an
    # experiment's Counter allows)
    counts: dict[str, int] = dict.fromkeys(("played", "resumed", "skipped", "crashed"), 0)
    stopped_by = "schedule played"
    while True:
        with folder_lock(out):  # the schedule is written by the run that holds the folder
            text = play.write_schedule(out, s, games)
        if announce:
            announce(text)
        outcomes, c, _ = play.play_games(
            s,
            games,
            out,
            db=db,
            ray=ray,
            cpus_per_game=cpus_per_game,
            show_progress=show_progress,
            console=console,
            hooks=hooks,
        )
        for k, v in c.items():
            counts[k] = counts.get(k, 0) + v
        if t.adaptive is None or t.games_per_pairing:
            break
        why = _stop_reason(s, games, outcomes, out)
        if why:
            stopped_by = why
            break
        block = max(g.block for g in games) + 1
        games = games + rotations(
            list(t.entrants), s.seats, 1, t.seed, first_block=block, first_index=len(games)
        )
    with folder_lock(out):
        standing = standings(s, games, out)
        report = write_report(s, games, standing, out, stopped_by, pages=pages)
    return TournamentResult(
        out, games, standing, stopped_by, counts, report, play.people_commands(s, games, out, db),
        silent_entrants(s, standing),
    )  # fmt: skip


def _stop_reason(s: play.Setup, games: list[Game], outcomes: list[dict], out: Path) -> str:
    """Why an adaptive tournament stops now ("" to go on)."""
    stop = s.tournament.adaptive
    assert stop is not None
    calls = sum(int(o.get("model_calls", 0)) for o in outcomes)
    tokens = sum(int(o.get("tokens", 0)) for o in outcomes)
    if stop.until_separated:
        st = standings(s, games, out)
        top = separated(st.fit) if st.fit is not None else None
        if top and top[2]:
            return f"separated: {top[0]}'s interval lies above {top[1]}'s"
    n = len(s.tournament.entrants)
    if len(games) + n > stop.max_games:
        return (
            f"game budget: {len(games)} games played, another rotation would pass {stop.max_games}"
        )
    if stop.max_calls and calls >= stop.max_calls:
        return f"call budget: {calls} model calls (limit {stop.max_calls})"
    if stop.max_tokens and tokens >= stop.max_tokens:
        return f"token budget: {tokens} tokens (limit {stop.max_tokens})"
    return ""


def report_only(
    t: Tournament, out_dir: str | Path | None = None, *, pages: bool = False
) -> TournamentResult:
    """The report again from the stored games (nothing is played): the schedule as written;
    with `pages`, each game's page where missing."""
    out = out_path(t, out_dir)
    s = play.setup(t)
    data = read_json(out / "schedule.json")
    if data is None:
        raise TournamentError(f"{out}: no schedule.json here; run the tournament first")
    try:
        games = [Game(g["index"], g["block"], g["seed"], g["seats"]) for g in data["games"]]
        if not all(isinstance(g.seats, dict) for g in games):
            raise TypeError("seats")
    except (KeyError, TypeError, IndexError):  # edited by hand, or of another version
        raise TournamentError(
            f"{out / 'schedule.json'}: not a tournament schedule (games with index, block, seed "
            "and seats); run the tournament again into a new folder"
        ) from None
    summary = read_json(out / "summary.json") or {}
    stopped_by = str(summary.get("stopped_by", "schedule played"))
    with folder_lock(out):
        standing = standings(s, games, out)
        report = write_report(s, games, standing, out, stopped_by, pages=pages)
    return TournamentResult(
        out, games, standing, stopped_by, {}, report, [], silent_entrants(s, standing)
    )


__all__ = ["TournamentResult", "plackett_luce", "report_only", "run_tournament"]
