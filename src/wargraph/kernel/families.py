"""The registry of game families: every family, built-in or plug-in, is found one way.

A family is one `Family` record declaring everything it has: its scenario class, graph module,
shipped scenarios, prompt templates, view panels, measures, report figure, replay hooks, its own
command-line options and its eval command. Every family is the target of an entry point in the
group `wargraph.families`; wargraph declares its six in its own pyproject.toml exactly as another
package declares a plug-in:

    [project.entry-points."wargraph.families"]
    duel = "wargraph_duel.family:FAMILY"

Three steps, each lazy: `names()` reads the installed metadata alone (no family code imported);
`get(name)` imports the entry point's target (the declaration: keep that module light); `load(name)`
resolves and checks every reference the family declares, the first time its code is needed (a
game built, a hook, its measures ...), so a missing or misspelled module, attribute, hook or
option is a `FamilyError` naming the family, the field and the reference before anything runs.

Built-ins are the entry points declared by the distribution `wargraph` itself; their names cannot
be taken over by a plug-in. A plug-in that cannot be used is reported (`problems()`) and the
others still play; a built-in that cannot be used is a hard error (a bug of wargraph). Run from a
source tree that was never installed, or by an install older than its pyproject.toml (whose
metadata declares no families), the built-ins are read from that source tree's pyproject.toml;
with neither, every command fails saying to reinstall wargraph.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import inspect
import os
import re
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from types import ModuleType, UnionType
from typing import Any, Union, get_args, get_origin

from wargraph.kernel.hooks import HOOKS, mismatch

GROUP = "wargraph.families"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
FLAG = re.compile(r"^--[a-z][a-z0-9]*(-[a-z0-9]+)*$")
OWN_DIST = "wargraph"


class FamilyError(ValueError):
    """An unknown family, or one that cannot be used; the message says which, what and why."""


@dataclass(frozen=True)
class Option:
    """A command-line option a family adds to a wargraph command (`play`, `eval`), given after
    the command's own arguments: `wargraph play diplomacy --max-year 1902`."""

    flag: str
    """The option as typed: `--max-year` (lower case, words joined by `-`)."""
    key: str
    """What it sets. A play option: the scenario override (`diplomacy.max_year`, as `--set
    diplomacy.max_year=VALUE`; checked against the scenario class when the family loads). An
    eval option: the keyword argument of the family's eval command (`promises_model`)."""
    help: str = ""
    metavar: str = "VALUE"


@dataclass(frozen=True)
class Bot:
    """A scripted player of known strength that a family ships: `bot:<name>` as a seat's model
    (`--role-model FRANCE=bot:greedy`, a tournament entrant). Its strategy answers the asks it
    knows from the public facts the world puts on them; every other ask it answers as the seeded
    scripted decider does (`wargraph.seats.bots`)."""

    name: str
    """What follows `bot:` (lower-case letters, digits and `_`; unique across families)."""
    strategy: str
    """`"module:function"`: `function(ask, rng) -> answer dict | None` (None: no strategy for
    this ask)."""
    help: str = ""


@dataclass(frozen=True)
class Family:
    """One game family: everything it has, declared once.

    Every reference is a string, `"module"` or `"module:attribute"`, imported only when the
    family's code is needed, so listing families imports no plug-in. A built-in family and a
    plug-in's are declared alike, as the target of a `wargraph.families` entry point. When the
    family loads, each reference is resolved and checked (see `load`)."""

    name: str
    """The family's name: lower-case letters, digits and `_` (the scenario's `family:`)."""
    scenario_class: str
    """`"module:Class"` of its `wargraph.kernel.scenario.Scenario` subclass."""
    graph: str
    """The module exporting `build(scenario) -> StateGraph` (and `graph`, `DEFAULT_SCENARIO`
    for the server)."""
    scenarios: str | None = None
    """A package whose `*.yaml` files are this family's shipped scenarios."""
    description: str = ""
    view_panels: str | None = None
    """`"module:function"` adding this family's panels to `wargraph view`:
    `function(record, phases, lines) -> {phase index: [panel, ...]}` (`src/wargraph/view/panels.py`);
    without it a game gets the generic view."""
    prompts: str | None = None
    """A package holding this family's prompt templates (`v1/<name>.txt`, ...), looked up before
    wargraph's own `src/wargraph/prompts/` while its games run (see `wargraph.prompts`)."""
    measures: str | None = None
    """`"module:function"` computing a finished game's measures: `function(record, path)` with
    the record (a dict) and its `record.json` path, returning a (nested) dict whose numbers and
    booleans become the measures of experiment outcomes and reports; its `scores` (seat ->
    number) rank tournament games scored by `centres` or `points`."""
    report_figure: str | None = None
    """`"module:function"` drawing one finished game for an experiment's report:
    `function(record_path, figure_path, title)` writes a PNG at `figure_path`."""
    seat_world: str | None = None
    """`"module:function"`: `function(scenario, values, seat) -> [panel, ...]`, what a person's
    seat page shows of the world (a map, tables): only what that seat may know (the public board,
    its own beliefs); panels as `src/wargraph/server/seat_world.py` documents them. Without it the
    page shows the seat's events alone."""
    # --- `wargraph replay` (src/wargraph/runs/replay.py); without them the round-based rules apply ---
    critical_state: str | None = None
    """`"module:function"`: `critical_state(phase) -> predicate(snapshot) -> bool`, the moment
    `--phase` names (raise ValueError for a phase this family cannot name)."""
    checkpoint_label: str | None = None
    """`"module:function"`: `checkpoint_label(values) -> str | None`, a checkpoint's name in
    messages listing the moments a game has."""
    replay_stop: str | None = None
    """`"module:function"`: `replay_stop(start, values, phases) -> bool`, when a run ends."""
    replay_outcome: str | None = None
    """`"module:function"`: `replay_outcome(start, end) -> dict`, what one run changed."""
    replay_summary: str | None = None
    """`"module:function"`: `replay_summary(outcomes) -> dict`, the distribution over runs."""
    replay_files: str | None = None
    """`"module:function"`: `replay_files(start, end, run_dir) -> list[Path]`, a run's own files."""
    replay_points: str | None = None
    """`"module:function"`: `replay_points(record, phases) -> {phase index: label} | None`, the
    `--phase` each phase of `wargraph view` offers to fork at (default: the round numbers)."""
    # --- the command line ---
    play_options: tuple[Option, ...] = ()
    """Options `wargraph play` takes for this family's games, each setting a scenario override."""
    eval_command: str | None = None
    """`"module:function"` behind `wargraph eval <family> RECORD... [--out DIR]`:
    `function(records: list[Path], out: Path, **eval options)`."""
    eval_options: tuple[Option, ...] = ()
    """Options of `wargraph eval <family>`, each passed as a keyword argument."""
    bots: tuple[Bot, ...] = ()
    """Scripted players of known strength for this family's seats (`bot:<name>`)."""


# How each reference is resolved when a family loads: a class, a module, a package or a function.
CLASS, MODULE, PACKAGE, FUNCTION = "class", "module", "package", "function"
REPLAY_HOOKS = (
    "critical_state",
    "checkpoint_label",
    "replay_stop",
    "replay_outcome",
    "replay_summary",
    "replay_files",
    "replay_points",
)
REFERENCES: dict[str, str] = {
    "scenario_class": CLASS,
    "graph": MODULE,
    "scenarios": PACKAGE,
    "prompts": PACKAGE,
    "view_panels": FUNCTION,
    "measures": FUNCTION,
    "report_figure": FUNCTION,
    "seat_world": FUNCTION,
    **dict.fromkeys(REPLAY_HOOKS, FUNCTION),
    "eval_command": FUNCTION,
}
FUNCTIONS = tuple(k for k, kind in REFERENCES.items() if kind == FUNCTION)


# --- where families are declared ------------------------------------------------------------------


def _canonical(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _own(ep: importlib.metadata.EntryPoint) -> bool:
    """Declared by wargraph's own distribution (a built-in), not by another package."""
    dist = getattr(ep, "dist", None)
    return dist is not None and _canonical(dist.name) == OWN_DIST


def source_declared() -> dict[str, str]:
    """wargraph's families as the pyproject.toml of the source tree it runs from declares them
    ({} when it does not run from a source tree)."""
    path = Path(__file__).resolve().parents[3] / "pyproject.toml"  # src/wargraph/kernel/
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    project = data.get("project") or {}
    if project.get("name") != OWN_DIST:
        return {}
    return dict((project.get("entry-points") or {}).get(GROUP) or {})


@cache
def _builtin() -> dict[str, importlib.metadata.EntryPoint]:
    """The built-in families' entry points by name, in alphabetical order (the order installed
    metadata keeps them in); nothing imported."""
    try:
        dist = importlib.metadata.distribution(OWN_DIST)
        found = {ep.name: ep for ep in dist.entry_points if ep.group == GROUP}
    except importlib.metadata.PackageNotFoundError:
        found = {}
    if not found:  # never installed, or installed before its families were declared
        found = {
            name: importlib.metadata.EntryPoint(name=name, value=value, group=GROUP)
            for name, value in source_declared().items()
        }
    if not found:
        raise FamilyError(
            "wargraph's own game families are declared nowhere: its installed metadata names "
            f"no {GROUP!r} entry points and no source tree is at hand; reinstall wargraph "
            "(`pip install -e .` or `make venv` in a source tree)"
        )
    return dict(sorted(found.items()))


@cache
def _declared() -> tuple[dict[str, importlib.metadata.EntryPoint], dict[str, str]]:
    """Plug-ins by name, from the installed packages' entry-point metadata: nothing imported."""
    builtin = _builtin()
    found: dict[str, importlib.metadata.EntryPoint] = {}
    problems: dict[str, str] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        if _own(ep):
            continue
        if ep.name in builtin:
            problems[ep.name] = f"{_where(ep)}: the name {ep.name!r} is taken by a built-in family"
        else:
            found.setdefault(ep.name, ep)
    return found, problems


def _where(ep: importlib.metadata.EntryPoint) -> str:
    return f"plug-in {ep.name!r} ({ep.value})"


def builtin_names() -> tuple[str, ...]:
    """The built-in families, alphabetically (also langgraph.json's order)."""
    return tuple(_builtin())


def is_builtin(name: str) -> bool:
    return name in _builtin()


def names() -> list[str]:
    """Every family's name, built-ins first, from metadata alone: no family code is imported."""
    return [*_builtin(), *_declared()[0]]


# --- declarations (get) and their loading (load) -------------------------------------------------

_got: dict[str, Family] = {}
_failed: dict[str, str] = {}
_checked: set[Family] = set()
_resolved: dict[tuple[Family, str], Any] = {}
_lock = threading.RLock()
_loading: set[Family] = set()


def get(name: str) -> Family:
    """A family's declaration by name (a plug-in's is imported here, the first time)."""
    if name in _got:
        return _got[name]
    if name in _failed:
        raise FamilyError(_failed[name])
    builtin = _builtin()
    ep = builtin.get(name) or _declared()[0].get(name)
    if ep is None:
        clashes = _declared()[1]
        if name in clashes:
            raise FamilyError(clashes[name])
        hint = ""
        if name in source_declared():
            hint = "; the source tree declares it but the installed metadata does not: reinstall"
        raise FamilyError(f"unknown game family {name!r} (known: {sorted(names())}){hint}")
    where = f"built-in family {name!r} ({ep.value})" if name in builtin else _where(ep)
    try:
        fam = guarded_import(where, ep.load) if name not in builtin else _plain(where, ep.load)
    except PluginError as exc:
        _failed[name] = str(exc)
        raise FamilyError(str(exc)) from None
    try:
        # checking a plug-in's packages imports their parents (find_spec does): guarded too
        why = (
            _invalid(fam, name)
            if name in builtin
            else guarded_import(where, lambda: _invalid(fam, name))
        )
    except PluginError as exc:
        _failed[name] = str(exc)
        raise FamilyError(str(exc)) from None
    if why:
        _failed[name] = f"{where}: {why}"
        raise FamilyError(_failed[name])
    _got[name] = fam
    return fam


def _plain(where: str, load: Callable[[], Any]) -> Any:
    """A built-in's import: trusted code, not redirected; a failure names it all the same."""
    try:
        return load()
    except Exception as exc:
        raise PluginError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from None


def load(name: str) -> Family:
    """The family with every reference it declares resolved and checked (once per process):
    each module, class and function found, each function callable, the scenario class a
    Scenario, the graph module with `build`, each package findable, each option well formed
    and pointing at something that exists. A failure is a FamilyError naming the family, the
    field and the reference; a plug-in's is remembered (and listed by `problems()`)."""
    fam = get(name)
    if fam in _checked:
        return fam
    with _lock:
        if fam in _checked or fam in _loading:  # done meanwhile, or asked again while loading
            return fam
        _loading.add(fam)
        try:
            for field in REFERENCES:
                if getattr(fam, field):
                    _resolve(fam, field)
            _check_options(fam)
            for bot in fam.bots:
                bot_strategy(fam.name, bot)
        except FamilyError as exc:
            if not is_builtin(name):
                _failed[name] = str(exc)
                _got.pop(name, None)
            raise
        finally:
            _loading.discard(fam)
        _checked.add(fam)
    return fam


def families() -> dict[str, Family]:
    """Every usable family's declaration by name: the built-ins first, then plug-ins (this
    imports every plug-in's declaration; commands for one game use `get`)."""
    found = {name: get(name) for name in _builtin()}
    for name in _declared()[0]:
        with contextlib.suppress(FamilyError):
            found[name] = get(name)
    return found


def problems() -> dict[str, str]:
    """Plug-ins that were found but cannot be used, with the reason: each plug-in is loaded
    (all its references resolved), so a misspelled hook is listed here too."""
    out = dict(_declared()[1])
    out.update(_bot_clashes())
    for name in _declared()[0]:
        try:
            load(name)
        except FamilyError as exc:
            out[name] = str(exc)
    return out


def refresh() -> None:
    """Read the entry points again (after installing or removing a plug-in in this process)."""
    _builtin.cache_clear()
    _declared.cache_clear()
    _got.clear()
    _failed.clear()
    _checked.clear()
    _resolved.clear()


# --- resolving references -----------------------------------------------------------------------


def scenario_class(name: str) -> type:
    """The family's scenario class. Only this reference is resolved (validating a scenario needs
    nothing else of the family); the rest is checked when the family's game is built."""
    return _resolve(get(name), "scenario_class")


def graph_module(name: str) -> ModuleType:
    """The family's graph module (the family is loaded: every reference checked)."""
    return _resolve(load(name), "graph")


def attribute(name: str, field: str) -> Any:
    """The object a family's reference field names (`measures`, `view_panels`, a replay hook
    ...), or None when the family declares none. The family is loaded first, so a misspelled
    reference anywhere in its declaration is a FamilyError naming it."""
    if field not in REFERENCES:
        raise FamilyError(
            f"{field!r} is not a reference of a family (those are {list(REFERENCES)})"
        )
    fam = load(name)
    return _resolve(fam, field) if getattr(fam, field) else None


def _resolve(fam: Family, field: str) -> Any:
    key = (fam, field)
    if key in _resolved:
        return _resolved[key]
    ref = getattr(fam, field)
    kind = REFERENCES[field]
    what = f"family {fam.name!r}: its {field} {ref!r}"
    if kind == PACKAGE:
        if not _findable(ref):
            raise FamilyError(f"{what} cannot be found (no such package)")
        found: Any = ref
    elif kind == MODULE:
        try:
            found = _import(fam.name, ref)
        except (ImportError, PluginError) as exc:
            raise FamilyError(f"game family {fam.name!r} is not available ({exc})") from None
        if not callable(getattr(found, "build", None)):
            raise FamilyError(f"family {fam.name!r}: its graph module {ref} has no build(scenario)")
        why = mismatch("graph", found.build)
        if why:
            raise FamilyError(f"family {fam.name!r}: its graph module {ref}: build {why}")
    else:
        module, _, attr = ref.partition(":")
        try:
            found = getattr(_import(fam.name, module), attr)
        except (ImportError, AttributeError, PluginError) as exc:
            raise FamilyError(f"{what} cannot be loaded ({exc})") from None
        if kind == CLASS:
            # Read, not imported: the scenario module imports this registry. A class that
            # subclasses Scenario was made after that module loaded, so it is there to read.
            scenario = sys.modules.get("wargraph.kernel.scenario")
            base = getattr(scenario, "Scenario", None)
            if not (isinstance(found, type) and base is not None and issubclass(found, base)):
                raise FamilyError(f"{what} is not a subclass of wargraph.kernel.scenario.Scenario")
        elif not callable(found):
            raise FamilyError(f"{what} is not a function")
        elif field in HOOKS and (why := mismatch(field, found)):
            raise FamilyError(f"{what} {why}")
    _resolved[key] = found
    return found


def _import(family: str, module: str) -> ModuleType:
    """A family's module; a plug-in's is imported under `guarded_import` the first time."""
    if module in sys.modules or is_builtin(family):
        return importlib.import_module(module)
    return guarded_import(f"plug-in {family!r} ({module})", lambda: importlib.import_module(module))


def _check_options(fam: Family) -> None:
    """Flags well formed and distinct; a play option's key a path of the scenario's fields; an
    eval option's key a keyword argument the eval command takes."""
    for field in ("play_options", "eval_options"):
        options = getattr(fam, field)
        if not isinstance(options, tuple | list):
            raise FamilyError(f"family {fam.name!r}: its {field} must be a tuple of Option")
        seen: set[str] = set()
        for opt in options:
            where = f"family {fam.name!r}: its {field}"
            if not isinstance(opt, Option):
                raise FamilyError(f"{where} holds {opt!r}, not a wargraph.kernel.families.Option")
            if not FLAG.match(opt.flag):
                raise FamilyError(f"{where} {opt.flag!r} is not of the form --lower-case-words")
            if opt.flag in seen:
                raise FamilyError(f"{where} declare {opt.flag} twice")
            seen.add(opt.flag)
            why = _bad_key(fam, field, opt.key)
            if why:
                raise FamilyError(f"{where} {opt.flag} sets {opt.key!r}, {why}")
    if fam.eval_options and not fam.eval_command:
        raise FamilyError(f"family {fam.name!r}: eval_options without an eval_command")


def _bad_key(fam: Family, field: str, key: str) -> str | None:
    if field == "eval_options":
        if not key.isidentifier():
            return "not a keyword argument name"
        if not fam.eval_command:
            return None  # said by the caller
        params = inspect.signature(_resolve(fam, "eval_command")).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        return None if key in params or takes_any else f"which {fam.eval_command} does not take"
    model: Any = _resolve(fam, "scenario_class")
    for part in key.split("."):
        if model is None:
            return None  # inside a mapping or list: checked when the scenario is validated
        known = getattr(model, "model_fields", {})
        if part not in known:
            return f"but {model.__name__} has no field {part!r}"
        model = _model_in(known[part].annotation)
    return None


def _model_in(annotation: Any) -> type | None:
    """The pydantic model a field holds (`X`, `X | None`), else None."""
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    if get_origin(annotation) in (Union, UnionType):
        models = [m for m in map(_model_in, get_args(annotation)) if m is not None]
        return models[0] if len(models) == 1 else None
    return None


# --- bots ---------------------------------------------------------------------------------------


def bots() -> dict[str, tuple[str, Bot]]:
    """Every usable family's bots by name: (family, bot); built-ins first, and a name a family
    before it has taken is left out (reported by `problems()`)."""
    found: dict[str, tuple[str, Bot]] = {}
    for name, fam in families().items():
        for bot in fam.bots:
            found.setdefault(bot.name, (name, bot))
    return found


def find_bot(name: str) -> tuple[str, Bot] | None:
    """The bot of that name, (family, bot): the built-ins' first, so a built-in bot imports no
    plug-in (one that hangs at import or exits cannot stop `bot:greedy`); plug-ins are imported
    only for a name the built-ins do not have."""
    for family in builtin_names():
        for bot in get(family).bots:
            if bot.name == name:
                return family, bot
    return bots().get(name)


def _bot_clashes() -> dict[str, str]:
    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    for name, fam in families().items():
        for bot in fam.bots:
            if bot.name in seen and seen[bot.name] != name:
                out[name] = f"family {name!r}: its bot {bot.name!r} is {seen[bot.name]!r}'s already"
            seen.setdefault(bot.name, name)
    return out


def bot_strategy(family: str, bot: Bot) -> Callable[..., Any]:
    """The function a bot's `strategy` names (a plug-in's imported under the guard)."""
    module, _, attr = bot.strategy.partition(":")
    what = f"family {family!r}: its bot {bot.name!r} strategy {bot.strategy!r}"
    try:
        found = getattr(_import(family, module), attr)
    except (ImportError, AttributeError, PluginError) as exc:
        raise FamilyError(f"{what} cannot be loaded ({exc})") from None
    if not callable(found):
        raise FamilyError(f"{what} is not a function")
    why = mismatch("bot", found)
    if why:
        raise FamilyError(f"{what} {why}")
    return found


# --- a plug-in's import, guarded ---------------------------------------------------------------


class PluginError(Exception):
    """A plug-in's code failed or tried to end the program while it was imported."""


# A plug-in that takes longer than this to import is named on stderr while it goes on.
SLOW_IMPORT_S = 10.0


def guarded_import(where: str, load: Callable[[], Any]) -> Any:
    """`load()` (an import of plug-in code) with its output kept off stdout and `SystemExit`
    contained; every failure names `where`. It runs in the calling thread (an import cannot be
    abandoned safely in another one): a plug-in that hangs is named on stderr after
    SLOW_IMPORT_S and can be stopped with Ctrl-C, and only commands that use its family import it.
    """
    slow = threading.Timer(
        SLOW_IMPORT_S,
        lambda: print(
            f"note: {where} is still importing after {SLOW_IMPORT_S:.0f} s; Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        ),
    )
    slow.daemon = True
    slow.start()
    try:
        with _stdout_to_stderr():
            return load()
    except SystemExit as exc:
        raise PluginError(f"{where}: exits at import (SystemExit({exc.code!r}))") from None
    except Exception as exc:  # a broken plug-in must not take the other games down
        raise PluginError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from None
    finally:
        slow.cancel()


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Everything written to stdout meanwhile, by Python or by C code on file descriptor 1, goes
    to stderr: a command's output (e.g. `wargraph graph`) stays what the command printed."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (a closed stdout): Python-level redirect only
        saved = None
    try:
        if saved is not None:
            os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _invalid(fam: Any, name: str) -> str | None:
    """What is wrong with a declaration's shape (nothing imported)."""
    if not isinstance(fam, Family):
        return f"expected a wargraph.kernel.families.Family, got {type(fam).__name__}"
    if fam.name != name:
        return f"the entry point is named {name!r} but the family {fam.name!r}"
    if not NAME.match(fam.name):
        return "a family name is lower-case letters, digits and _"
    if not isinstance(fam.scenario_class, str) or ":" not in fam.scenario_class:
        return f"scenario_class {fam.scenario_class!r} is not of the form module:Class"
    if not isinstance(fam.graph, str) or not fam.graph or ":" in fam.graph:
        return f"graph {fam.graph!r} is not a module name"
    if fam.prompts is not None and not _findable(fam.prompts):
        return f"its prompts package {fam.prompts!r} cannot be found"
    for field in FUNCTIONS:
        ref = getattr(fam, field)
        if ref is not None and (not isinstance(ref, str) or ":" not in ref):
            return f"{field} {ref!r} is not of the form module:function"
    if not isinstance(fam.bots, tuple | list):
        return "bots must be a tuple of wargraph.Bot"
    for bot in fam.bots:
        if not isinstance(bot, Bot):
            return f"bots holds {bot!r}, not a wargraph.Bot"
        if not NAME.match(bot.name):
            return f"bot name {bot.name!r} is not lower-case letters, digits and _"
        if not isinstance(bot.strategy, str) or ":" not in bot.strategy:
            return f"bot {bot.name!r}: strategy {bot.strategy!r} is not of the form module:function"
    return None


def _findable(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def package_files(family: str, package: str) -> Traversable:
    """The files of a family's data package (`scenarios=`, `prompts=`). Reaching them imports
    the package: a plug-in's is imported under `guarded_import` like the rest of its code, and
    one that fails makes the family unusable (FamilyError naming it), the others unharmed."""
    if is_builtin(family) or package in sys.modules:
        return importlib.resources.files(package)
    if family in _failed:
        raise FamilyError(_failed[family])
    where = f"plug-in {family!r} ({package})"
    try:
        guarded_import(where, lambda: importlib.import_module(package))
    except PluginError as exc:
        _failed[family] = str(exc)
        _got.pop(family, None)
        raise FamilyError(str(exc)) from None
    return importlib.resources.files(package)


# --- shipped scenarios --------------------------------------------------------------------------


def find_shipped(name: str) -> Path | None:
    """The shipped scenario file of that name: the built-ins' first, so playing a built-in game
    imports no plug-in; plug-ins are imported only for a name the built-ins do not ship."""
    return shipped_scenarios(plugins=False).get(name) or shipped_scenarios().get(name)


def shipped_scenarios(*, plugins: bool = True) -> dict[str, Path]:
    """Every family's shipped scenario files by name; the first family to ship a name keeps it
    (built-ins first), so a plug-in cannot shadow a shipped game. `plugins=False`: the
    built-ins' alone (no plug-in imported)."""
    out: dict[str, Path] = {}
    seen: set[str] = set()
    every = families().values() if plugins else [get(n) for n in _builtin()]
    for fam in every:
        if not fam.scenarios or fam.scenarios in seen:
            continue
        seen.add(fam.scenarios)
        try:
            root = package_files(fam.name, fam.scenarios)
            files = sorted(root.iterdir(), key=lambda p: p.name)
        except FamilyError:
            continue  # a plug-in whose package fails: left out (`problems()` says why)
        except (ImportError, TypeError, FileNotFoundError, NotADirectoryError):
            continue  # a plug-in without its folder ships nothing; its graph still plays files
        for p in files:
            if p.name.endswith((".yaml", ".yml")):
                out.setdefault(Path(p.name).stem, Path(str(p)))
    return out
