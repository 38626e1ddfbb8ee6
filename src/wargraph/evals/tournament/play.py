"""Playing a tournament: its games become experiment games (one thread, lease and folder each)
and run through the experiment runner, so a tournament resumes after a kill without playing
any game twice, runs `--concurrency` games at once, on `--ray` and on a shared `--db`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wargraph.evals.experiment import Experiment, GamePlan, Hooks
from wargraph.evals.experiment.game import write_json
from wargraph.evals.experiment.plan import Condition, scenario_fingerprint, scenario_path
from wargraph.evals.tournament.schedule import (
    Game,
    check_balance,
    pairings,
    rotations,
    schedule_text,
)
from wargraph.evals.tournament.spec import Tournament, TournamentError
from wargraph.kernel.scenario import ScenarioError, resolve_path
from wargraph.seats.bots import family_of, is_bot


@dataclass
class Setup:
    tournament: Tournament
    scenario: str  # the path the games load
    scenario_text: str
    seats: list[str]
    rated: list[str]  # entrants that get a rating (people do not)


@dataclass
class Played:
    games: list[Game]
    outcomes: list[dict[str, Any]]
    stopped_by: str
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0


def setup(t: Tournament) -> Setup:
    """Check the scenario, the family and the seats before anything is scheduled."""
    from wargraph.runs.runner import GameError, check_scenario

    exp_like = Experiment(scenario=t.scenario, base_dir=t.base_dir)
    path = scenario_path(exp_like, t.scenario)
    try:
        sc = check_scenario(path, t.set)
        text = resolve_path(path).read_text(encoding="utf-8")
    except (ScenarioError, GameError, ImportError) as err:
        raise TournamentError(f"scenario: {err}") from None
    if t.family and sc.family != t.family:
        raise TournamentError(
            f"family: the scenario {t.scenario} is a {sc.family} game, not {t.family}"
        )
    seats = list(t.seats or sc.players)
    unknown = [s for s in seats if s not in sc.players]
    if unknown:
        raise TournamentError(
            f"seats: {unknown} are not players of {t.scenario} (players: {', '.join(sc.players)})"
        )
    if len(seats) < 2:
        raise TournamentError("seats: entrants need at least two seats to rotate over")
    if t.score.kind == "centres" and sc.family != "diplomacy":
        raise TournamentError(f"score: centres ranks Diplomacy games, not {sc.family}")
    if t.score.kind == "points" and sc.family != "blotto":
        raise TournamentError(f"score: points ranks Blotto games, not {sc.family}")
    for name, e in t.entrants.items():
        if is_bot(e.model) and family_of(e.model.removeprefix("bot:")) != sc.family:
            raise TournamentError(
                f"entrants.{name}.model: {e.model} plays {family_of(e.model[4:])}, not {sc.family}"
            )
    rated = [n for n, e in t.entrants.items() if e.rated]
    return Setup(t, path, text, seats, rated)


def schedule(s: Setup, blocks: int | None = None) -> list[Game]:
    """The whole schedule (an adaptive tournament: its first `blocks` rotations)."""
    t, names = s.tournament, list(s.tournament.entrants)
    if t.games_per_pairing and len(s.seats) == 2:
        games = pairings(names, s.seats, t.games_per_pairing, t.seed)
    else:
        games = rotations(names, s.seats, blocks or initial_blocks(s), t.seed)
    problems = check_balance(games, names, s.seats)
    if problems:
        raise TournamentError("the schedule is not balanced: " + "; ".join(problems))
    return games


def initial_blocks(s: Setup) -> int:
    t, n = s.tournament, len(s.tournament.entrants)
    if t.rotations:
        return t.rotations
    if t.games:  # whole rotations only: a partial one would favour some seats
        return max(1, t.games // n)
    if t.games_per_pairing:  # more seats than two: every entrant is in every game when n <= k
        if n > len(s.seats):
            raise TournamentError(
                f"games_per_pairing: with {n} entrants for {len(s.seats)} seats not every pair "
                "meets in every game; give rotations (or games) instead"
            )
        return max(1, math.ceil(t.games_per_pairing / n))
    return 1


def experiment_of(t: Tournament) -> Experiment:
    """The experiment the runner sees: no questions, the family's measures, the house model
    for seats no entrant takes (the control, an umpire)."""
    return Experiment(
        name=t.name,
        description=t.description,
        scenario=t.scenario,
        model=t.model,
        context=t.context,
        concurrency=t.concurrency,
        workers=t.workers,
        measures=True,
        langsmith=False,
        base_dir=t.base_dir,
        cache=t.cache,
    )


def game_plan(s: Setup, game: Game) -> GamePlan:
    t = s.tournament
    overrides: dict[str, Any] = dict(t.set)
    role_models: dict[str, str] = {}
    for seat, name in game.seats.items():
        e = t.entrants[name]
        if e.human:
            overrides[f"players.{seat}.kind"] = "human"
        else:
            role_models[seat] = e.model
        if e.persona is not None:
            overrides[f"players.{seat}.persona"] = e.persona
        if e.prompt_variant is not None:
            overrides[f"players.{seat}.prompt_variant"] = e.prompt_variant
        for key, value in e.set.items():
            overrides[f"players.{seat}.{key}"] = value
    cid = f"r{game.block:03d}"
    cond = Condition(
        id=cid,
        label=f"rotation {game.block}",
        levels={"rotation": str(game.block)},
        scenario=s.scenario,
        overrides=overrides,
        model=t.model,
        role_models=role_models,
        context=t.context.model_dump(),
    )
    fp = scenario_fingerprint(cond, game.seed, s.scenario_text)
    return GamePlan(
        condition=cond,
        run=game.index,
        seed=game.seed,
        fingerprint=fp,
        thread_id=f"{t.name}.{cid}.{game.index:04d}.{fp}",
        folder=f"games/{cid}/{game.index:04d}-{fp}",
    )


def models_of(s: Setup, games: list[Game]) -> dict[str, list[str]]:
    """Each distinct model reference the games play, with who plays it ("entrant NAME", or
    "house seat SEAT" for the seats no entrant takes: a control, an umpire, a secretary)."""
    from wargraph.models.preflight import seat_models
    from wargraph.runs.runner import check_scenario

    users: dict[str, list[str]] = {}
    seen: set[tuple[tuple[str, str], ...]] = set()
    for g in games:
        plan = game_plan(s, g)
        key = tuple(sorted(plan.condition.role_models.items()))
        if key in seen:
            continue
        seen.add(key)
        scenario = check_scenario(plan.condition.scenario, plan.condition.overrides)
        for ref, seats in seat_models(scenario, plan.game_context()).items():
            for seat in seats:
                if seat in g.seats:
                    who = f"entrant {g.seats[seat]}"
                else:  # "default": the seats outside the scenario's players play it
                    who = "the house model" if seat == "default" else f"house seat {seat}"
                if who not in users.setdefault(ref, []):
                    users[ref].append(who)
    return users


def write_schedule(out: Path, s: Setup, games: list[Game]) -> str:
    text = schedule_text(games, s.seats)
    out.mkdir(parents=True, exist_ok=True)
    (out / "schedule.md").write_text(f"# Schedule of {s.tournament.name}\n\n{text}\n", "utf-8")
    write_json(
        out / "schedule.json",
        {
            "seats": s.seats,
            "games": [
                {"index": g.index, "block": g.block, "seed": g.seed, "seats": g.seats}
                for g in games
            ],
        },
    )
    return text


def play_games(
    s: Setup,
    games: list[Game],
    out: Path,
    *,
    db: str | None,
    ray: str | None,
    cpus_per_game: float,
    show_progress: bool,
    console: Any,
    hooks: Hooks | None,
) -> tuple[list[dict[str, Any]], dict[str, int], float]:
    plans = []
    for g in games:
        plan = game_plan(s, g)
        if people_of(s, g) and not finished(out / plan.folder):
            continue  # a person plays it (`people_commands`); picked up once its record is there
        plans.append(plan)
    exp = experiment_of(s.tournament)
    if ray:
        from wargraph.evals.experiment import run_experiment_on_ray

        result = run_experiment_on_ray(
            exp,
            out,
            address=ray,
            db=db,
            cpus_per_game=cpus_per_game,
            console=console,
            show_progress=show_progress,
            report=False,
            hooks=hooks,
            plans=plans,
        )
    else:
        from wargraph.evals.experiment import run_experiment

        result = run_experiment(
            exp,
            out,
            db=db,
            console=console,
            show_progress=show_progress,
            report=False,
            hooks=hooks,
            plans=plans,
        )
    return result.outcomes, dict(result.counts), result.elapsed_s


def people_of(s: Setup, game: Game) -> list[str]:
    return [seat for seat, e in game.seats.items() if s.tournament.entrants[e].human]


def finished(gdir: Path) -> bool:
    from wargraph.runs.records import RecordError, load_record

    try:
        return bool(load_record(gdir).get("done"))
    except RecordError:
        return False


def people_commands(s: Setup, games: list[Game], out: Path, db: str | None) -> list[str]:
    """How a person plays each of their games that is not finished: `wargraph play` on the
    game's own thread, store and folder, so the next run of the tournament reads its record."""
    import shlex

    lines = []
    for g in games:
        seats = people_of(s, g)
        plan = game_plan(s, g)
        if not seats or finished(out / plan.folder):
            continue
        cond = plan.condition
        args = ["wargraph", "play", cond.scenario, "--thread", plan.thread_id]
        args += ["--db", str(db or out / "checkpoints.sqlite"), "--out", str(out / plan.folder)]
        args += ["--model", cond.model, "--seed", str(plan.seed)]
        args += [x for seat in seats for x in ("--human", seat)]
        args += [x for r, m in cond.role_models.items() for x in ("--role-model", f"{r}={m}")]
        args += [
            x
            for k, v in cond.overrides.items()
            if not k.endswith(".kind")  # the person's seat is given by --human
            for x in ("--set", f"{k}={v if isinstance(v, str) else json.dumps(v)}")  # JSON is YAML
        ]
        lines.append(shlex.join(args))
    return lines
