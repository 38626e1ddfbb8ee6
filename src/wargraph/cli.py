"""The `wargraph` command line (Typer + Rich)."""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.table import Column
from rich.table import Table as RichTable

import wargraph.kernel.familyargs as familyargs
from wargraph.kernel.familyargs import EvalCommand, PlayCommand
from wargraph.models.faults import (
    DEFAULT_MAX_FAULTS,
    EXIT_MODEL_UNAVAILABLE,
    ModelUnavailable,
    summary_text,
)
from wargraph.models.langsmith_env import offline_unless_keyed
from wargraph.seats.terminal import SHOW_CHOICES, safe, text
from wargraph.seats.terminal_form import HOW, example, field_hint, fill_in

if TYPE_CHECKING:  # imported where used: the CLI starts without loading the game machinery
    from wargraph.kernel.context import GameContext
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.state import Event
    from wargraph.runs.runner import PlayResult, Progress

# Offline by default: nothing may try to reach LangSmith unless a key is set.
offline_unless_keyed(say=lambda line: print(f"note: {line}", file=sys.stderr))

app = typer.Typer(
    help="Wargames and negotiation games played by language models and people, on LangGraph.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)


_thread: list[str] = []  # the game this command works on: every error names it
# How to go on after an unexpected failure: a game resumes by thread; an experiment or a
# tournament by running the same command again (its finished games are kept).
_go_on: list[str] = []
_STOP_SAID: list[bool] = []  # a command said what Ctrl-C left behind: main() adds nothing


@app.callback()
def _each_command() -> None:
    """Runs before every command: a command run in the same process after another one (tests,
    scripts using the Typer app) does not name the earlier command's game in its errors."""
    _thread.clear()
    _go_on.clear()
    _STOP_SAID.clear()


def fail(message: str, code: int = 2) -> NoReturn:
    if _thread and _thread[0] not in message:
        message = f"{message} (thread {_thread[0]})"
    err.print(f"[bold red]error:[/] {safe(message)}", highlight=False)
    raise typer.Exit(code)


def _on_thread(thread_id: str) -> str:
    """Say which game this command plays, before anything else happens."""
    _thread[:] = [thread_id]
    console.print(text(f"thread: {thread_id}"), highlight=False)
    return thread_id


def _whole_thread(db: str, given: str) -> str:
    """The thread id a --thread names (the start of one game's id will do)."""
    from wargraph.runs.listing import resolve_thread

    try:
        return resolve_thread(db, given)
    except _known_errors() as exc:
        fail(str(exc))


DB_HELP = "Checkpoint store: a SQLite file, or a postgresql:// URL."
PROFILE_HELP = (
    "Model profile of every AI seat: small or capable (default: from each seat's model; "
    "docs/model-profiles.md)."
)


_KNOWN_ERRORS = (
    ("wargraph.kernel.scenario", "ScenarioError"),
    ("wargraph.store.errors", "StoreError"),
    ("wargraph.kernel.graphkit", "UnansweredAsk"),
    ("wargraph.prompts", "PromptError"),
    ("wargraph.models.chat", "ModelRefError"),
    ("wargraph.runs.records", "RecordError"),
    ("wargraph.kernel.families", "FamilyError"),
    ("wargraph.seats.script", "ScriptError"),
)


def _known_errors() -> tuple[type[Exception], ...]:
    """The errors a command reports in one line. Only from modules already loaded: an error
    whose module was never imported cannot have been raised, and importing it here (the game
    machinery for `UnansweredAsk`) cost a failing light command seconds."""
    found = [
        getattr(sys.modules[module], name)
        for module, name in _KNOWN_ERRORS
        if module in sys.modules
    ]
    return (*found, FileNotFoundError, ModelUnavailable)


def _context(
    model: str,
    role_model: list[str],
    seed: int,
    human: list[str],
    max_faults: int,
    *,
    profile: str | None = None,
    role_profile: list[str] | None = None,
    call_timeout: float | None = None,
    script: list[str] | None = None,
) -> GameContext:
    from wargraph.kernel.context import GameContext
    from wargraph.models.chat import parse_model_ref
    from wargraph.models.profiles import parse_role_profiles, profile_named

    parse_model_ref(model)
    per_role: dict[str, str] = {}
    for item in role_model:
        role, sep, ref = item.partition("=")
        if not sep or not role or not ref:
            fail(f"--role-model {item!r}: expected ROLE=MODEL, e.g. control=openai:gpt-4o-mini")
        parse_model_ref(ref)
        per_role[role] = ref
    scripts: dict[str, Any] = {}
    for item in script or []:
        role, sep, path = item.partition("=")
        if not sep or not role or not path:
            fail(f"--script {item!r}: expected SEAT=FILE, e.g. bob=bob.yaml")
        from wargraph.seats.script import load_script

        scripts[role] = load_script(path, f"--script {role}")
    if max_faults < 1:
        fail(f"--max-faults {max_faults}: expected 1 or more")
    if profile is not None:
        profile_named(profile)
    if call_timeout is not None and not call_timeout > 0:
        fail(f"--call-timeout {call_timeout:g}: expected seconds above 0")
    return GameContext(
        model=model,
        role_models=per_role,
        seed=seed,
        humans=list(human),
        max_faults=max_faults,
        profile=profile,
        role_profiles=parse_role_profiles(role_profile or []),
        call_timeout=call_timeout,
        scripts=scripts,
    )


def _open_cache(setting: bool | str | None, db: str) -> str | None:
    """Where a game keeps and reuses model answers (wargraph.models.cache), opened now."""
    from wargraph.models import cache

    where = cache.location(setting, db)
    cache.check(where)
    return where


def _preflight(scenario: Any, ctx: Any, after: str) -> None:
    """Each distinct model of the game asked once before it starts (wargraph.models.preflight): one
    line naming the seats and the URL, and exit 2, when one cannot answer."""
    from wargraph.models.preflight import PreflightError, preflight

    try:
        with _spinner("checking the models ..."):
            preflight(scenario, ctx, after=after)
    except PreflightError as exc:
        err.print(f"[bold red]error:[/] {safe(exc)}", highlight=False)
        raise typer.Exit(2) from None


def _stopped(exc: ModelUnavailable) -> NoReturn:
    """The model cannot answer: the game stops, saved; say so, sum up, exit non-zero."""
    console.print(text(summary_text(exc.trace_path, exc.thread_id)), highlight=False)
    fail(str(exc), EXIT_MODEL_UNAVAILABLE)


_SPINNING: list[Status] = []  # the game's spinner, stopped while a person types


@contextmanager
def _spinner(message: str) -> Iterator[None]:
    """A spinner with what is being waited on (wargraph.models.waits): the seat, its phase and
    round, the model, the seconds so far and, on the embedded model, the tokens written. Where
    nothing animates (output to a file or a pipe) the same line is printed on standard error
    every WARGRAPH_PROGRESS_EVERY seconds (30) that one call lasts."""
    from wargraph.models import waits

    with console.status(message) as status, waits.watch():
        _SPINNING.append(status)
        ticker = _WaitTicker(status, message)
        ticker.start()
        try:
            yield
        finally:
            ticker.stop()
            _SPINNING.pop()


class _WaitTicker(threading.Thread):
    def __init__(self, status: Status, message: str) -> None:
        super().__init__(name="wargraph-progress", daemon=True)
        self.status, self.message = status, message
        self.done = threading.Event()
        self.live = console.is_terminal
        raw = os.environ.get("WARGRAPH_PROGRESS_EVERY", "30")
        try:
            self.every = max(0.05, float(raw))
        except ValueError:
            self.every = 30.0

    def run(self) -> None:
        from wargraph.models import waits

        said = 0.0  # when the last line was printed (non-terminal)
        while not self.done.wait(0.5 if self.live else min(0.5, self.every / 2)):
            now = time.monotonic()
            waiting = waits.now_waiting()
            line = waits.summary(waiting, now)
            if self.live:
                self.status.update(f"{self.message}\n  {safe(line)}" if line else self.message)
            elif waiting and now - waiting[0].started >= self.every and now - said >= self.every:
                said = now
                err.print(text(f"still {line}"), highlight=False, soft_wrap=True)

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=2)


def _same_command() -> str:
    import shlex

    return shlex.join(["wargraph", *sys.argv[1:]])


@contextmanager
def _on_interrupt(saved: str, again: str | None = None) -> Iterator[None]:
    """Ctrl-C (at a person's prompt or while models think): say what is saved and the exact
    command that goes on, then exit 130. Typer would turn the interrupt into a silent exit."""
    try:
        yield
    except KeyboardInterrupt:
        for spinning in _SPINNING:
            spinning.stop()
        _STOP_SAID.append(True)
        err.print(
            f"[yellow]stopped[/]: {safe(saved)}; go on with: {safe(again or _same_command())}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None


def _resume_command(thread: str, db: str) -> str:
    import shlex

    return shlex.join(["wargraph", "resume", "--thread", thread, "--db", db])


def terminal_human(payload: dict[str, Any]) -> Any:
    """One person at the terminal answers a seat's question; invalid answers come back with the
    error. The spinner stops meanwhile: it would draw over the typing, and while it runs Rich
    holds back what is written to the terminal until a newline and reads it as markup (the
    prompt showed only after Enter, and without its "[send]")."""
    spinning = _SPINNING[-1] if _SPINNING else None
    if spinning is not None:
        spinning.stop()
    try:
        return _ask_person(payload)
    except KeyboardInterrupt:
        err.print()  # Ctrl-C while typing: what follows starts on a line of its own
        raise
    finally:
        if spinning is not None:
            spinning.start()


def _ask_person(payload: dict[str, Any]) -> Any:
    seat = safe(payload.get("seat", "?"))
    if payload.get("task") == "review":
        draft = json.dumps(payload.get("draft"), indent=2, ensure_ascii=False)
        console.print(Panel(text(draft), title=f"{seat}: review"))
    else:
        view = text(payload.get("view", ""))
        console.print(Panel(view, title=f"what {seat} knows", expand=False))
    if payload.get("error"):
        console.print(f"[red]Your last answer was not accepted:[/] {safe(payload['error'])}")
    console.print(f"[bold]{seat}[/], {safe(payload.get('question', ''))}")
    props = payload.get("schema", {}).get("properties", {})
    text_only = len(props) == 1 and next(iter(props.values())).get("type") == "string"
    if not text_only:
        for name, spec in props.items():
            about = f" - {spec['description']}" if spec.get("description") else ""
            console.print(text(f"  {name}: {field_hint(spec)}{about}"))
        console.print(text(HOW))
        if any(spec.get("type") in ("array", "object") for spec in props.values()):
            # a list or an object is hard to write from its hint alone: show one well formed
            console.print(text("For example: " + json.dumps(example(props), ensure_ascii=False)))
    try:
        if text_only:
            return input("> ")
        return fill_in(payload["schema"], input, lambda line: console.print(text(line)))
    except EOFError:
        fail(
            "no answer on standard input; the game is saved, continue it with `wargraph resume`", 3
        )


PROGRESS_KINDS = ("narration", "inject", "answer", "verdict", "incident")


def _progress_printer(shown: Callable[[Event], bool] = lambda event: True) -> Progress:
    """Print the game's public-facing events as they happen; `shown` says which events the
    people at this terminal may see (wargraph.seats.terminal.audience_filter)."""

    def show(node: str, values: dict[str, Any]) -> None:
        for e in values.get("events", []) or []:
            if e.get("kind") in PROGRESS_KINDS and shown(e):
                # a family that names its rounds says so in the event (Diplomacy: S1901M)
                named = (e.get("data") or {}).get("phase")
                where = f"round {e['round']}" + (f" · {named}" if isinstance(named, str) else "")
                console.print(
                    f"[dim]{safe(where)}[/] [bold]{safe(e['author'])}[/] · {safe(e['kind'])}"
                )
                body = "  " + preview(str(e["text"])).replace("\n", "\n  ")
                console.print(text(body), highlight=False)

    return show


PREVIEW_CHARS = 1000


def preview(whole: str, limit: int = PREVIEW_CHARS) -> str:
    """An event's text as the progress prints it: whole up to `limit` characters, else cut at
    the last line (or word) end before it, saying how much more the records hold."""
    if len(whole) <= limit:
        return whole
    cut = whole.rfind("\n", 0, limit)
    if cut < limit // 2:
        cut = whole.rfind(" ", 0, limit)
    cut = cut if cut > 0 else limit
    more = len(whole) - cut
    return f"{whole[:cut].rstrip()} ... ({more} more characters in the transcript)"


SHOW_HELP = (
    "What the progress shows: 'seats' (with --human: only what the people's seats may see) "
    "or 'all' (the facilitator's full view, every seat's secrets)."
)


def _check_show(show: str) -> str:
    if show not in SHOW_CHOICES:
        raise typer.BadParameter(f"{show!r}: expected one of {', '.join(SHOW_CHOICES)}")
    return show


def _seat_progress(scenario: Scenario, humans: list[str], show: str) -> Progress:
    from wargraph.seats.terminal import audience_filter

    return _progress_printer(audience_filter(scenario, humans, show))


def _report(result: PlayResult) -> None:
    """ "Game over" only for a game that is over; a game that stopped early says so and fails."""
    if result.values.get("error"):
        fail(result.values["error"])
    if result.out_dir:
        trace = result.out_dir / "trace.jsonl"
        console.print(text(summary_text(trace, result.thread_id)), highlight=False)
        console.print(
            text(f"Records in {result.out_dir}/ (record.json, trace.jsonl, transcript.md)")
        )
    if result.interrupts:
        seats = safe(", ".join(str(i["value"].get("seat", "?")) for i in result.interrupts))
        console.print(
            f"[yellow]Waiting for: {seats}.[/] Resume with `wargraph resume --thread "
            f"{safe(result.thread_id)}`."
        )
    elif result.finished:
        console.print(f"[green]Game over[/] after round {safe(result.values.get('round'))}.")
    else:
        fail(
            f"the game stopped in round {result.values.get('round')} before its end; continue "
            f"it with `wargraph resume --thread {result.thread_id}`",
            1,
        )
    console.print(text(f"thread: {result.thread_id}"))


CacheFlag = Annotated[
    bool,
    typer.Option(
        "--cache",
        help="Reuse model answers kept in the games' store, keep new ones there: the same call "
        "(model, messages, settings) is never paid twice.",
    ),
]
CacheAt = Annotated[
    str | None,
    typer.Option(help="Keep and reuse model answers in this SQLite file or postgresql:// URL."),
]


def _cache_setting(cache: bool, cache_at: str | None) -> bool | str | None:
    """`--cache-at WHERE`, else `--cache` (the games' store), else None (the file's own)."""
    return cache_at or (True if cache else None)


@app.command(cls=PlayCommand)
def play(
    command: typer.Context,
    scenario: Annotated[str, typer.Argument(help="A shipped scenario name or a YAML path.")],
    model: Annotated[
        str, typer.Option(help="embedded | scripted | gguf:PATH | openai:MODEL\\[@URL]")
    ] = "embedded",
    role_model: Annotated[list[str], typer.Option(help="ROLE=MODEL, repeatable.")] = [],
    rounds: Annotated[int | None, typer.Option(help="Number of moves/rounds.")] = None,
    seed: Annotated[int, typer.Option()] = 0,
    human: Annotated[
        list[str], typer.Option(help="Play this role at the terminal; repeatable.")
    ] = [],
    set_: Annotated[list[str], typer.Option("--set", help="KEY=VALUE scenario override.")] = [],
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    thread: Annotated[str | None, typer.Option(help="Thread id (default: new).")] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for record.json, trace.jsonl, transcript.md, one game per folder "
            "(default runs/THREAD)."
        ),
    ] = None,
    max_faults: Annotated[
        int, typer.Option(help="Failed model calls in a row before the game stops (resumable).")
    ] = DEFAULT_MAX_FAULTS,
    show: Annotated[str, typer.Option(help=SHOW_HELP, callback=_check_show)] = "seats",
    profile: Annotated[str | None, typer.Option(help=PROFILE_HELP)] = None,
    role_profile: Annotated[
        list[str], typer.Option(help="ROLE=small|capable, repeatable; overrides --profile.")
    ] = [],
    call_timeout: Annotated[
        float | None,
        typer.Option(help="Seconds one model call may take (default: the profile's, 60 or 300)."),
    ] = None,
    script: Annotated[
        list[str],
        typer.Option(
            help="SEAT=FILE: the seat's answers (YAML/JSON list in the order asked, or a "
            "mapping by task), then seeded scripted ones; repeatable."
        ),
    ] = [],
    cache: CacheFlag = False,
    cache_at: CacheAt = None,
) -> None:
    """Play a game; any role can be a person (--human) or another model (--role-model). The
    game's family may take options of its own (below), given after the scenario."""
    import uuid

    from wargraph.kernel.scenario import load_scenario
    from wargraph.runs.runner import check_scenario
    from wargraph.runs.runner import play as run_play

    # a thread the user named is said at once; a new one only when its game is about to be
    # created, so that an error before (a bad scenario, a dead model) names no game that isn't
    given = thread
    thread = _on_thread(given) if given else uuid.uuid4().hex[:12]
    out = out or Path("runs") / thread

    overrides = list(set_)
    if rounds is not None:
        overrides.append(f"rounds={rounds}")
    try:
        ctx = _context(
            model,
            role_model,
            seed,
            human,
            max_faults,
            profile=profile,
            role_profile=role_profile,
            call_timeout=call_timeout,
            script=script,
        )
        ctx.model_cache = _open_cache(_cache_setting(cache, cache_at), db)
        if familyargs.pending(command):  # the family's own options: known once its scenario is read
            family = load_scenario(scenario, overrides).family
            own = familyargs.values(command, family, "play_options", "wargraph play")
            overrides += [f"{key}={value}" for key, value in own.items()]
        sc = check_scenario(scenario, overrides)
        familyargs.check(command, sc.family, "play_options", "wargraph play")
        _preflight(sc, ctx, "no game was created")
        if not given:
            _on_thread(thread)
        saved = f"the game is saved in {db} up to its last finished step (thread {thread})"
        with (
            _on_interrupt(saved, _resume_command(thread, db)),
            _spinner(f"playing {safe(scenario)} on {safe(model)} ..."),
        ):
            result = run_play(
                sc,  # checked once, with its overrides applied
                context=ctx,
                db=db,
                thread_id=thread,
                out_dir=out,
                human_io=terminal_human,  # asked only when a person's seat or a review waits
                progress=_seat_progress(sc, human, show),
            )
    except ModelUnavailable as exc:
        _stopped(exc)
    except _known_errors() as exc:
        fail(str(exc))
    _report(result)


@app.command()
def resume(
    thread: Annotated[str, typer.Option(help="Thread id of the game.")],
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    out: Annotated[
        Path | None, typer.Option(help="Folder for the records (default: where the game wrote).")
    ] = None,
    show: Annotated[str, typer.Option(help=SHOW_HELP, callback=_check_show)] = "seats",
    model: Annotated[
        str | None,
        typer.Option(help="Go on with this default model (recorded; see `wargraph games`)."),
    ] = None,
    role_model: Annotated[
        list[str], typer.Option(help="ROLE=MODEL: go on with this model for a seat; repeatable.")
    ] = [],
) -> None:
    """Continue a stored game from its last checkpoint, on the same models or others."""
    import dataclasses

    from wargraph.runs.runner import load_run
    from wargraph.runs.runner import resume as run_resume

    thread = _on_thread(_whole_thread(db, thread))
    try:
        sc, ctx = load_run(db, thread)  # its people's seats, for what the terminal shows
        per_role = _context(model or ctx.model, role_model, 0, [], 1).role_models
        unknown = sorted(set(per_role) - set(sc.roles))
        if unknown:
            fail(f"--role-model {unknown[0]}: no such seat (seats: {', '.join(sc.roles)})")
        if model or per_role:
            changed = dataclasses.replace(
                ctx, model=model or ctx.model, role_models={**ctx.role_models, **per_role}
            )
            _preflight(sc, changed, "the game was not resumed")
        saved = f"the game is saved in {db} up to its last finished step (thread {thread})"
        with (
            _on_interrupt(saved, _resume_command(thread, db)),
            _spinner(f"resuming {safe(thread)} ..."),
        ):
            result = run_resume(
                db=db,
                thread_id=thread,
                out_dir=out,
                human_io=terminal_human,
                progress=_seat_progress(sc, ctx.humans, show),
                model=model,
                role_models=per_role,
            )
    except ModelUnavailable as exc:
        _stopped(exc)
    except _known_errors() as exc:
        fail(str(exc))
    _report(result)


@app.command()
def games(
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON list of the games, for programs.")
    ] = False,
) -> None:
    """List a store's games: thread, family, scenario, who started it (cli or serve, and the
    game it was copied from), status, round, last update. Commands that take --thread accept
    the start of an id when only one game's id starts so."""
    from wargraph.runs.listing import as_json as row_json
    from wargraph.runs.listing import list_games

    try:
        rows = list_games(db)
    except _known_errors() as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps([row_json(g) for g in rows], ensure_ascii=False) + "\n")
        return

    # thread ids and families whole, however narrow the terminal: the thread is what resume
    # takes, the family what a reader looks for; the scenario and models wrap instead
    def whole(name: str, values: list[str]) -> Column:
        widest = max((len(v) for v in values), default=len(name))
        return Column(name, no_wrap=True, min_width=widest, overflow="fold")

    table = RichTable(
        whole("thread", [g.thread_id for g in rows]),
        whole("family", [g.family for g in rows]),
        "scenario",
        "via",
        "status",
        "round",
        "models",
        "last update",
    )
    for g in rows:
        table.add_row(
            text(g.thread_id),
            text(g.family),
            text(g.scenario),
            text(f"{g.via}, copy of {g.copy_of}" if g.copy_of else g.via),
            text(g.status),
            str(g.round),
            text(g.models),
            g.updated,
        )
    # to a pipe or a file (no terminal to wrap in, 80 columns assumed): 200 columns, so that
    # a line is a game and nothing is cut
    out = console if console.is_terminal else Console(width=max(console.width, 200))
    out.print(table if rows else text(f"no games in {db}"))


@app.command()
def scenarios() -> None:
    """List the shipped scenarios of every game family (plug-ins included)."""
    from wargraph.kernel.scenario import ScenarioError, load_scenario, shipped_scenarios

    table = RichTable("name", "family", "title", "seats")
    for name, _path in sorted(shipped_scenarios().items()):
        try:
            sc = load_scenario(name)
            table.add_row(text(name), text(sc.family), text(sc.title), str(len(sc.roles)))
        except (ScenarioError, ImportError) as exc:
            table.add_row(text(name), "?", text(str(exc)[:80], "red"), "")
    console.print(table)
    from wargraph.kernel.families import problems

    for why in problems().values():  # plug-ins found but unusable: say so, list the rest
        console.print(f"[yellow]warning[/] {safe(why)}")


class _Notes:
    """Library notes (warnings.warn with ScenarioNote) shown as one `note:` line each; other
    warnings keep Python's own display."""

    def __init__(self) -> None:
        self.default = warnings.showwarning

    def __call__(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        from wargraph.kernel.scenario import ScenarioNote

        if issubclass(category, ScenarioNote):
            err.print(f"[yellow]note:[/] {safe(message)}", highlight=False)
        else:
            self.default(message, category, filename, lineno, file, line)


warnings.showwarning = _Notes()


def _yaml_output(path: Path) -> Path:
    """`prepare -o`: a .yaml file name, checked before the model is asked (a bare name without
    .yaml would later play the shipped scenario of that name)."""
    if path.is_dir() or path.suffix not in (".yaml", ".yml"):
        raise typer.BadParameter(f"{path}: give a file name ending in .yaml")
    return path


@app.command()
def validate(
    file: Annotated[str, typer.Argument(help="Scenario name or YAML path.")],
    set_: Annotated[list[str], typer.Option("--set")] = [],
) -> None:
    """Check a scenario file; a bad one gets one clear message per problem."""
    from wargraph.runs.runner import check_scenario

    try:
        sc = check_scenario(file, set_)
    except _known_errors() as exc:
        fail(str(exc))
    console.print(
        f"[green]ok[/] {safe(sc.title)} ({safe(sc.family)}, {len(sc.roles)} seats, "
        f"{sc.rounds} rounds)"
    )


@app.command()
def graph(
    scenario: Annotated[str, typer.Argument()],
    set_: Annotated[list[str], typer.Option("--set")] = [],
    xray: Annotated[
        bool, typer.Option("--xray", help="Also draw each seat's inner steps (decide, review ...).")
    ] = False,
) -> None:
    """Print the Mermaid text of the compiled game graph (each seat one node, as in README)."""
    from wargraph.kernel.scenario import load_scenario
    from wargraph.runs.runner import build_for

    try:
        g = build_for(load_scenario(scenario, set_)).compile()
    except _known_errors() as exc:
        fail(str(exc))
    sys.stdout.write(g.get_graph(xray=xray).draw_mermaid())


@app.command()
def prepare(
    prompt: Annotated[str, typer.Argument(help="A short description of the game to prepare.")],
    output: Annotated[
        Path,
        typer.Option("-o", "--output", help="Scenario YAML to write.", callback=_yaml_output),
    ],
    family: Annotated[
        str | None,
        typer.Option(help="The game family (default: the one the description fits, else crisis)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing OUTPUT.")] = False,
    model: Annotated[str, typer.Option()] = "embedded",
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """The control prepares a scenario of any family (setting, players, injects) from a prompt;
    the file is validated before it is written."""
    from wargraph.runs.prepare import choose_family, write_checked
    from wargraph.runs.prepare import prepare as prepare_game

    if output.exists() and not force:
        fail(f"{output} exists; give --force to replace it")
    try:
        chosen = family or choose_family(prompt).family
        with (
            _on_interrupt(f"nothing was written ({output} is as it was)"),
            _spinner(f"the control prepares a {safe(chosen)} scenario on {safe(model)} ..."),
        ):
            done = prepare_game(prompt, family=family, model=model, seed=seed)
        write_checked(done.data, output, force=force)
    except _known_errors() as exc:
        fail(str(exc))
    console.print(text(f"family: {done.choice.family} ({done.choice.why})"), highlight=False)
    if done.source == "fallback":
        tried = "; ".join(f"answer {i + 1}: {p}" for i, p in enumerate(done.problems))
        err.print(
            text(
                f"could not prepare what was asked: no answer of {model} fits the description"
                + (f" ({tried})" if tried else "")
                + ". The description itself is the setting."
            ),
            style="yellow",
            highlight=False,
        )
    if done.kept:
        err.print(
            text(
                f"not written from the description: {'; '.join(done.kept)}. Edit them in "
                f"{output} before playing."
            ),
            style="yellow",
            highlight=False,
        )
    console.print(f"[green]wrote[/] {safe(output)}; play it with `wargraph play {safe(output)}`")


@app.command()
def ask(
    record: Annotated[Path, typer.Argument(help="record.json or its folder.")],
    question: Annotated[str, typer.Argument()],
    option: Annotated[list[str], typer.Option(help="A multiple-choice option; repeatable.")] = [],
    model: Annotated[str, typer.Option()] = "embedded",
) -> None:
    """Ask the control a follow-up question about a finished game."""
    from wargraph.runs.posthoc import ask_record
    from wargraph.runs.records import load_record

    try:
        with (
            _on_interrupt("nothing was saved (the record is only read)"),
            _spinner(f"the control reads the record and answers on {safe(model)} ..."),
        ):
            answer = ask_record(load_record(record), question, options=option, model=model)
    except _known_errors() as exc:
        fail(str(exc))
    # JSON on standard output, whole (no wrapping, no markup): for people and for `jq`
    sys.stdout.write(json.dumps(answer, indent=2, ensure_ascii=False, default=str) + "\n")


SERVE_DB_HELP = (
    "Keep the games in this store (SQLite file or postgresql:// URL), as the CLI does: "
    "wargraph games/view/resume read them (default: the server's own, in its state folder)."
)
ALLOW_MODEL_HELP = (
    "A model reference games on this server may use besides embedded and scripted, e.g. "
    "openai:gpt-4o-mini or openai:*@http://10.0.0.5:8000/v1 (repeatable)."
)


@app.command()
def serve(
    port: Annotated[int, typer.Option(min=1, max=65535)] = 2024,
    host: Annotated[
        str, typer.Option(help="Loopback only unless you put a proxy in front.")
    ] = "127.0.0.1",
    config: Annotated[Path | None, typer.Option(help="A langgraph.json of your own.")] = None,
    state_dir: Annotated[
        Path | None, typer.Option(help="Server state (default ./.wargraph-server).")
    ] = None,
    scenario: Annotated[
        list[Path] | None,
        typer.Option(help="A scenario file the facilitator may start by name (repeatable)."),
    ] = None,
    allow_model: Annotated[list[str] | None, typer.Option(help=ALLOW_MODEL_HELP)] = None,
    db: Annotated[str | None, typer.Option(help=SERVE_DB_HELP)] = None,
    jobs: Annotated[
        int,
        typer.Option(min=1, max=256, help="Games whose steps run at once (more wait their turn)."),
    ] = 4,
) -> None:
    """Start the LangGraph server (langgraph dev) offline, with the players' and facilitator's pages."""
    _run_server("serve", host, port, config, state_dir, scenario, allow_model, db, jobs=jobs)


@app.command()
def studio(
    port: Annotated[int, typer.Option(min=1, max=65535)] = 2024,
    host: Annotated[str, typer.Option(help="Loopback only (127.0.0.1, ::1).")] = "127.0.0.1",
    config: Annotated[Path | None, typer.Option(help="A langgraph.json of your own.")] = None,
    state_dir: Annotated[
        Path | None, typer.Option(help="Server state (default ./.wargraph-studio).")
    ] = None,
    scenario: Annotated[
        list[Path] | None, typer.Option(help="A scenario file runs may name (repeatable).")
    ] = None,
    allow_model: Annotated[list[str] | None, typer.Option(help=ALLOW_MODEL_HELP)] = None,
    db: Annotated[str | None, typer.Option(help=SERVE_DB_HELP)] = None,
) -> None:
    """Debug games in LangGraph Studio: langgraph dev on loopback with Studio allowed, no seats."""
    _run_server("studio", host, port, config, state_dir, scenario, allow_model, db)


def _run_server(
    mode: str,
    host: str,
    port: int,
    config: Path | None,
    state_dir: Path | None,
    scenario: list[Path] | None,
    allow_model: list[str] | None,
    db: str | None,
    **more: Any,
) -> NoReturn:
    try:
        module = importlib.import_module(f"wargraph.server.{mode}")
    except ModuleNotFoundError:
        fail("the server package is not installed")
    raise typer.Exit(
        getattr(module, mode)(
            host=host,
            port=port,
            config=config,
            state_dir=state_dir,
            scenarios=scenario or [],
            allow_models=allow_model or [],
            db=db,
            **more,
        )
    )


@app.command()
def replay(
    thread: Annotated[str, typer.Option(help="Thread id of the stored game.")],
    phase: Annotated[
        str, typer.Option(help="Where to fork: an engine phase (F1903M) or a round number.")
    ],
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    runs: Annotated[int, typer.Option(help="How many replays.")] = 3,
    set_: Annotated[
        list[str], typer.Option("--set", help="KEY=VALUE change to the stored scenario.")
    ] = [],
    model: Annotated[str | None, typer.Option(help="Default model for the replays.")] = None,
    phases: Annotated[int, typer.Option(help="Phases (rounds) to replay from the fork.")] = 1,
    out: Annotated[Path, typer.Option(help="Folder for the report and each run's record.")] = Path(
        "runs/replay"
    ),
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Also replay the stored condition with the same seeds and report the "
            "difference in the family's measures with 95% intervals (OUT/compare.md, .csv).",
        ),
    ] = False,
    cache: CacheFlag = False,
    cache_at: CacheAt = None,
) -> None:
    """Fork a stored game at a phase and replay it N times under a change (the original stays)."""
    from wargraph.runs.replay import print_report
    from wargraph.runs.replay import replay as run_replay

    thread = _on_thread(_whole_thread(db, thread))
    try:
        answers = _open_cache(_cache_setting(cache, cache_at), db)
    except _known_errors() as exc:
        fail(str(exc))
    if compare:
        from wargraph.runs.replay_compare import compare as run_compare
        from wargraph.runs.replay_compare import print_comparison

        try:
            with console.status(f"replaying {thread} at {phase}: baseline and change ..."):
                both = run_compare(
                    db=db,
                    thread_id=thread,
                    phase=phase,
                    runs=runs,
                    overrides=list(set_),
                    model=model,
                    out_dir=out,
                    phases=phases,
                    cache=answers,
                )
        except _known_errors() as exc:
            fail(str(exc))
        print_comparison(both, console)
        return
    try:
        with (
            _on_interrupt(
                f"the original game is untouched; replays already played are kept as threads "
                f"{thread}-replay-* in {db}, without a report"
            ),
            _spinner(f"replaying {safe(thread)} at {safe(phase)}: {runs} run(s) ..."),
        ):
            result = run_replay(
                db=db,
                thread_id=thread,
                phase=phase,
                runs=runs,
                overrides=list(set_),
                model=model,
                out_dir=out,
                phases=phases,
                cache=answers,
            )
    except _known_errors() as exc:
        fail(str(exc))
    print_report(result, console)


@app.command()
def persuade(
    study: Annotated[
        str, typer.Argument(help="A study YAML or a shipped study's name (persuasion).")
    ] = "persuasion",
    model: Annotated[
        list[str], typer.Option(help="Every seat's model in the forks; repeat to compare models.")
    ] = [],
    runs: Annotated[
        int | None, typer.Option(help="Runs per strategy (and of the control).")
    ] = None,
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    thread: Annotated[
        str | None,
        typer.Option(help="Fork this stored game (default: play the study's base game first)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for the report and every run.")] = Path(
        "runs/persuasion"
    ),
    cache: CacheFlag = False,
    cache_at: CacheAt = None,
) -> None:
    """A persuasion study on a critical state: at a stored phase a persuader sends each
    strategy's message to the persuadee; how often its orders change, with intervals."""
    from wargraph.evals.persuasion import StudyError, load_study, run_study

    errors: tuple[type[Exception], ...] = (StudyError, *_known_errors())
    try:
        several = {"models": model} if len(model) > 1 else {"model": model[0]} if model else {}
        plan = load_study(study, runs=runs, **several)
        where = _open_cache(_cache_setting(cache, cache_at), db)
        if thread:
            thread = _on_thread(_whole_thread(db, thread))
        with _spinner(
            f"{safe(plan.name)}: {len(plan.strategies) + 1} x {plan.runs} forks at {plan.phase} ..."
        ):
            data = run_study(plan, db=db, thread=thread, out=out, cache=where)
    except errors as exc:
        fail(str(exc))
    for ref, result in data["models"].items():
        for name, s in result["strategies"].items():
            said = f"{ref}, {name}: orders of {plan.persuadee} changed in {s['text']}"
            console.print(text(said))
    console.print(text(f"report: {out / 'persuasion.html'}"), highlight=False)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="An AI_Diplomacy game file (lmvsgame.json).")],
    db: Annotated[str, typer.Option(help=DB_HELP)] = "wargraph.sqlite",
    thread: Annotated[
        str | None, typer.Option(help="Thread id in the store (default aidip-GAMEID).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Folder for record.json (default runs/THREAD).")
    ] = None,
) -> None:
    """Import a published AI_Diplomacy game into a record and the store: then view, eval
    diplomacy and replay --phase work on it."""
    from wargraph.evals.ai_diplomacy import import_game

    try:
        done = import_game(file, db=db, thread_id=thread and _on_thread(thread), out=out)
    except _known_errors() as exc:
        fail(str(exc))
    models = ", ".join(f"{p} {m}" for p, m in sorted(done.models.items())) or "not named"
    console.print(
        text(f"Imported {len(done.phases)} phases ({done.phases[0]} to {done.phases[-1]})")
    )
    console.print(text(f"models: {models}"))
    console.print(text(f"record: {done.record}"), highlight=False)
    console.print(text(f"thread: {done.thread_id} in {done.db}"), highlight=False)


@app.command()
def view(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A game folder (record.json, trace.jsonl).")
    ] = None,
    thread: Annotated[str | None, typer.Option(help="A stored game's thread id.")] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help=DB_HELP + " Default: the store the game was played with, else wargraph.sqlite."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="The page (default: view.html in the game's folder).")
    ] = None,
) -> None:
    """Write one self-contained HTML page that replays a game: who knew what, phase by phase."""
    from wargraph.view import ViewError, write_stored_view, write_view

    if (run_dir is None) == (thread is None):
        fail("give a game folder (wargraph view RUN_DIR) or a stored game (--thread ID --db DB)")
    errors: tuple[type[Exception], ...] = (ViewError, *_known_errors())
    try:
        with (
            _on_interrupt("no page was written (the game is only read)"),
            _spinner("drawing the game's page, phase by phase ..."),
        ):
            if thread is not None:
                store = db or "wargraph.sqlite"
                thread = _on_thread(_whole_thread(store, thread))
                path = write_stored_view(store, thread, out)
            else:
                assert run_dir is not None  # exactly one of the two, checked above
                path = write_view(run_dir, out, db=db)
    except errors as exc:
        fail(str(exc))
    console.print(str(path), highlight=False, soft_wrap=True)


@app.command("eval", cls=EvalCommand, no_args_is_help=True)
def eval_(
    command: typer.Context,
    family: Annotated[str, typer.Argument(help="The game family whose eval scores the records.")],
    records: Annotated[list[Path], typer.Argument(help="record.json files or folders.")],
    out: Annotated[Path | None, typer.Option(help="Folder (default runs/eval_FAMILY).")] = None,
) -> None:
    """Score finished games with their family's own eval: waragent (accuracy against history:
    per-run scores, mean ± sd, board figures), diplomacy (game scores, order statistics,
    relationships, token use; promises kept or broken with --promises-model)."""
    import wargraph.kernel.families as families

    try:
        run = families.attribute(family, "eval_command")
        if run is None:
            having = [n for n, f in families.families().items() if f.eval_command]
            fail(
                f"the {family} family has no eval command (families with one: {', '.join(having)})"
            )
        options = familyargs.values(command, family, "eval_options", f"wargraph eval {family}")
        where = out or Path("runs") / f"eval_{family}"
        with _on_interrupt(f"the records are only read; {where}/ may hold part of the eval"):
            run(records, where, **options)
    except _known_errors() as exc:
        fail(str(exc))


@app.command()
def experiment(
    file: Annotated[str, typer.Argument(help="Experiment YAML (or a shipped experiment name).")],
    runs: Annotated[
        int | None, typer.Option(help="Runs per condition (overrides the file).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Every model of the file, judge included.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Folder (default runs/experiments/NAME).")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Checkpoint store: a postgresql:// URL (shared by machines) or a SQLite file "
            "(default OUT/checkpoints.sqlite)."
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run each game as a Ray task: 'auto' (this machine's cluster, else a local "
            "one), 'local', or a cluster ADDRESS. Needs wargraph\\[scale]."
        ),
    ] = None,
    cpus_per_game: Annotated[
        float,
        typer.Option(
            help="With --ray: CPUs Ray reserves per game (0.25 = four games per CPU, for games "
            "that wait on an inference endpoint)."
        ),
    ] = 1.0,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=64, help="Games at once in this process (overrides the file)."),
    ] = None,
    endpoint_concurrency: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Model calls at once per OpenAI-compatible endpoint (default "
            "WARGRAPH_ENDPOINT_CONCURRENCY, else max(8, seats of a game)); give it at least "
            "--concurrency x seats if the endpoint takes them.",
        ),
    ] = None,
    pages: Annotated[
        bool,
        typer.Option("--pages", help="Also write each game's page (view.html), after the games."),
    ] = False,
    cache: CacheFlag = False,
    cache_at: CacheAt = None,
) -> None:
    """Run an experiment: a grid of conditions x runs, judged, reported with intervals and figures."""
    from wargraph.evals.experiment import run_from_cli

    _go_on[:] = [f"run `wargraph experiment {file}` again: its finished games are kept"]

    code = run_from_cli(
        file,
        runs=runs,
        model=model,
        out=out,
        console=console,
        db=db,
        ray=ray,
        cpus_per_game=cpus_per_game,
        concurrency=concurrency,
        calls_per_endpoint=endpoint_concurrency,
        pages=pages,
        cache=_cache_setting(cache, cache_at),
    )
    if code:
        _STOP_SAID.append(code == 130)  # it said what was kept and how to go on
        raise typer.Exit(code)


@app.command()
def tournament(
    file: Annotated[
        str, typer.Argument(help="Tournament YAML (src/wargraph/scenarios/tournaments/*.yaml).")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Folder (default runs/tournaments/NAME).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Every entrant's model but bots' and people's (checks).")
    ] = None,
    db: Annotated[str | None, typer.Option(help="Checkpoint store (as for experiment).")] = None,
    ray: Annotated[str | None, typer.Option(help="Games as Ray tasks (as for experiment).")] = None,
    cpus_per_game: Annotated[float, typer.Option(help="With --ray: CPUs per game.")] = 1.0,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=64, help="Games at once in this process.")
    ] = None,
    endpoint_concurrency: Annotated[
        int | None, typer.Option(min=1, help="Model calls at once per endpoint.")
    ] = None,
    report_only: Annotated[
        bool, typer.Option("--report-only", help="Rebuild the report from the stored games.")
    ] = False,
    pages: Annotated[
        bool,
        typer.Option("--pages", help="Also write each game's page (view.html), after the games."),
    ] = False,
    cache: CacheFlag = False,
    cache_at: CacheAt = None,
) -> None:
    """Run a tournament: a fair schedule of seats, ratings with intervals, a report."""
    from wargraph.evals.tournament.cli import run_from_cli as run_tournament_cli

    _go_on[:] = [f"run `wargraph tournament {file}` again: its finished games are kept"]
    code = run_tournament_cli(
        file,
        out=out,
        model=model,
        db=db,
        ray=ray,
        cpus_per_game=cpus_per_game,
        concurrency=concurrency,
        calls_per_endpoint=endpoint_concurrency,
        only_report=report_only,
        pages=pages,
        console=console,
        cache=_cache_setting(cache, cache_at),
    )
    if code:
        _STOP_SAID.append(code == 130)
        raise typer.Exit(code)


def _ctrl_c_at_the_terminal() -> None:
    """Ctrl-C stops a command a person runs at a terminal even when it started with SIGINT
    ignored (a parent that ignores it: a script's background job, Ray's in-process driver), as
    `wargraph serve` does: Python leaves an inherited SIG_IGN alone, and a person at a prompt
    could then not stop the game. A terminal sends SIGINT to its foreground job only, so a
    background job that meant to ignore it still never receives it."""
    import signal

    try:
        if sys.stdin.isatty() and signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError, AttributeError):  # not the main thread, no stdin
        pass


def main() -> None:
    """The console entry point: an unexpected failure is one clear line, its details in a log."""
    _ctrl_c_at_the_terminal()
    try:
        app()
    except SystemExit as exc:
        if exc.code == 130 and not any(_STOP_SAID):  # Typer's exit for Ctrl-C: say it
            err.print(
                f"[yellow]stopped[/]; run the same command again: {safe(_same_command())}",
                highlight=False,
                soft_wrap=True,
            )
        raise
    except KeyboardInterrupt:
        go_on = (
            _go_on[0] if _go_on else "a game in progress resumes with `wargraph resume --thread ID`"
        )
        err.print(f"stopped; {safe(go_on)}", highlight=False)
        raise SystemExit(130) from None
    except OSError as exc:  # a path the system refused: which one and what to do, no log
        from wargraph.runs.userfiles import explain_os_error

        err.print(f"[bold red]error:[/] {safe(explain_os_error(exc))}", highlight=False)
        raise SystemExit(2) from None
    except Exception as exc:  # the documented fallback for bugs: no traceback on the terminal
        import traceback

        from wargraph.runs.errorlog import write_error_log

        try:
            log: Path | str = write_error_log(traceback.format_exc())
        except OSError as exc2:  # no log: say so rather than fail again
            log = f"(no log: {exc2.strerror or exc2})"
        where = f" (thread {_thread[0]})" if _thread else ""
        err.print(
            f"[bold red]error:[/] unexpected {type(exc).__name__}: {safe(exc)}{safe(where)}",
            highlight=False,
        )
        go_on = _go_on[0] if _go_on else "games in progress resume with `wargraph resume`"
        err.print(f"details in {log}; {safe(go_on)}", highlight=False)
        raise SystemExit(1) from None


if __name__ == "__main__":  # pragma: no cover
    main()
