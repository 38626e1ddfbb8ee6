"""The registry of game families: built-in ones and plug-ins from other packages.

A family names three things: its scenario class (`"module:Class"`, a `Scenario` subclass whose
`family` field is the family's name), its graph module (exporting `build(scenario)`; and
`graph`, `DEFAULT_SCENARIO` for the server) and, optionally, the package whose `*.yaml` files are
its shipped scenarios. Another package adds a family without touching wargraph by declaring an
entry point in the group `wargraph.families` that points at a `Family`:

    [project.entry-points."wargraph.families"]
    duel = "wargraph_duel.family:FAMILY"

`load_scenario`, the runner, `wargraph scenarios` and the server consult this registry. Built-in
names cannot be taken over; a plug-in that fails to load is reported (`problems()`) and the
others still play.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

GROUP = "wargraph.families"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class FamilyError(ValueError):
    """An unknown family, or a plug-in that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Family:
    """One game family, as the registry knows it: where its scenario class, graph, shipped
    scenarios, prompt templates, view panels and measures live. Every reference is a module path
    (`"module"` or `"module:attribute"`) imported only when a game of the family needs it, so
    listing families imports no plug-in. A built-in family and a plug-in's are declared alike;
    a plug-in exports one as the target of its `wargraph.families` entry point."""

    name: str
    scenario_class: str
    """`"module:Class"` of its Scenario subclass (imported only when a scenario needs it)."""
    graph: str
    """The module exporting `build(scenario) -> StateGraph`."""
    scenarios: str | None = None
    """A package whose `*.yaml` files are this family's shipped scenarios."""
    description: str = ""
    view_panels: str | None = None
    """`"module:function"` adding this family's panels to `wargraph view` (see
    `wargraph/view/panels.py`); without it a game gets the generic view."""
    prompts: str | None = None
    """A package holding this family's prompt templates (`v1/<name>.txt`, ...), looked up before
    wargraph's own `prompts/` while its games run (see `wargraph.prompts`)."""
    measures: str | None = None
    """`"module:function"` computing a finished game's measures: `function(record, path)` with
    the record (a dict) and its `record.json` path, returning a (nested) dict whose numbers and
    booleans become the measures of experiment outcomes and reports."""
    report_figure: str | None = None
    """`"module:function"` drawing one finished game for an experiment's report:
    `function(record_path, figure_path, title)` writes a PNG at `figure_path`."""


_SHIPPED = "wargraph.scenarios"

BUILTIN: tuple[Family, ...] = (
    Family("crisis", "wargraph.scenario:Scenario", "wargraph.graphs.crisis", _SHIPPED,
           "players and teams state plans; the control narrates"),
    Family("tabletop", "wargraph.worlds.tabletop:TabletopScenario", "wargraph.graphs.tabletop",
           _SHIPPED, "an incident, inject cards and a die"),
    Family("waragent", "wargraph.worlds.waragent.game:WarAgentScenario",
           "wargraph.graphs.waragent", _SHIPPED, "WarAgent-style historical simulations",
           measures="wargraph.evals.waragent:record_measures",
           report_figure="wargraph.evals.waragent:record_figure"),
    Family("diplomacy", "wargraph.worlds.diplomacy.world:DiplomacyScenario",
           "wargraph.graphs.diplomacy", _SHIPPED, "full-press Diplomacy on the real engine",
           measures="wargraph.evals.diplomacy:record_measures"),
    Family("flow", "wargraph.scenario:Scenario", "wargraph.graphs.flow", _SHIPPED,
           "a game composed from the phase library by the scenario"),
    Family("blotto", "wargraph.worlds.blotto:BlottoScenario", "wargraph.graphs.blotto",
           _SHIPPED, "Colonel Blotto: forces across fronts under a budget",
           measures="wargraph.worlds.blotto:record_measures"),
)  # fmt: skip


@cache
def _declared() -> tuple[dict[str, importlib.metadata.EntryPoint], dict[str, str]]:
    """Plug-ins by name, from the installed packages' entry-point metadata: nothing imported."""
    builtin = {f.name for f in BUILTIN}
    found: dict[str, importlib.metadata.EntryPoint] = {}
    problems: dict[str, str] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        if ep.name in builtin:
            problems[ep.name] = f"{_where(ep)}: the name {ep.name!r} is taken by a built-in family"
        else:
            found.setdefault(ep.name, ep)
    return found, problems


_loaded: dict[str, Family] = {}
_failed: dict[str, str] = {}


def _where(ep: importlib.metadata.EntryPoint) -> str:
    return f"plug-in {ep.name!r} ({ep.value})"


def _load(name: str) -> Family | None:
    """Import one plug-in, the first time its family is used; None if it cannot be used (the
    reason is then in `_failed`)."""
    if name in _loaded or name in _failed:
        return _loaded.get(name)
    ep = _declared()[0][name]
    where = _where(ep)
    try:
        fam = guarded_import(where, ep.load)
    except PluginError as exc:
        _failed[name] = str(exc)
        return None
    why = _invalid(fam, name)
    if why:
        _failed[name] = f"{where}: {why}"
        return None
    _loaded[name] = fam
    return fam


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
def _stdout_to_stderr():
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
    if not isinstance(fam, Family):
        return f"expected a wargraph.families.Family, got {type(fam).__name__}"
    if fam.name != name:
        return f"the entry point is named {name!r} but the family {fam.name!r}"
    if not NAME.match(fam.name):
        return "a family name is lower-case letters, digits and _"
    if ":" not in fam.scenario_class:
        return f"scenario_class {fam.scenario_class!r} is not of the form module:Class"
    if fam.prompts is not None and not _findable(fam.prompts):
        return f"its prompts package {fam.prompts!r} cannot be found"
    for field in ("view_panels", "measures", "report_figure"):
        ref = getattr(fam, field)
        if ref is not None and (not isinstance(ref, str) or ":" not in ref):
            return f"{field} {ref!r} is not of the form module:function"
    return None


def _findable(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def refresh() -> None:
    """Read the entry points again (after installing or removing a plug-in in this process)."""
    _declared.cache_clear()
    _loaded.clear()
    _failed.clear()


def names() -> list[str]:
    """Every family's name, built-ins first, from metadata alone: no plug-in is imported."""
    return [f.name for f in BUILTIN] + list(_declared()[0])


def families() -> dict[str, Family]:
    """Every usable family by name: the built-ins first, then plug-ins (this imports every
    plug-in; commands for one game use `get`)."""
    found = {f.name: f for f in BUILTIN}
    for name in _declared()[0]:
        fam = _load(name)
        if fam is not None:
            found[name] = fam
    return found


def problems() -> dict[str, str]:
    """Plug-ins that were found but cannot be used, with the reason (imports every plug-in)."""
    families()
    return {**_declared()[1], **_failed}


def get(name: str) -> Family:
    """A family by name; a plug-in is imported here, the first time it is asked for."""
    builtin = next((f for f in BUILTIN if f.name == name), None)
    if builtin is not None:
        return builtin
    declared, clashes = _declared()
    if name in declared:
        fam = _load(name)
        if fam is None:
            raise FamilyError(_failed[name])
        return fam
    if name in clashes:
        raise FamilyError(clashes[name])
    raise FamilyError(f"unknown game family {name!r} (known: {sorted(names())})")


def scenario_class(name: str) -> type:
    fam = get(name)
    module, _, cls = fam.scenario_class.partition(":")
    try:
        return getattr(_import(name, module), cls)
    except (ImportError, AttributeError, PluginError) as exc:
        raise FamilyError(
            f"family {name!r}: its scenario class {fam.scenario_class} cannot be loaded ({exc})"
        ) from None


def _import(family: str, module: str) -> ModuleType:
    """A family's module; a plug-in's is imported under `guarded_import` the first time."""
    if module in sys.modules or any(f.name == family for f in BUILTIN):
        return importlib.import_module(module)
    return guarded_import(f"plug-in {family!r} ({module})", lambda: importlib.import_module(module))


def attribute(name: str, field: str) -> Any:
    """The object a family's `"module:attribute"` field names (`measures`, `view_panels`), or
    None when the family declares none; a reference that does not resolve is a FamilyError
    naming the family, the field and the reference (a misspelling is never silently ignored)."""
    ref = getattr(get(name), field)
    if not ref:
        return None
    module, _, attr = ref.partition(":")
    try:
        found = getattr(_import(name, module), attr)
    except (ImportError, AttributeError, PluginError) as exc:
        raise FamilyError(
            f"family {name!r}: its {field} {ref!r} cannot be loaded ({exc})"
        ) from None
    if not callable(found):
        raise FamilyError(f"family {name!r}: its {field} {ref!r} is not a function")
    return found


def graph_module(name: str) -> ModuleType:
    fam = get(name)
    try:
        module = _import(name, fam.graph)
    except (ImportError, PluginError) as exc:
        raise FamilyError(f"game family {name!r} is not available ({exc})") from None
    if not callable(getattr(module, "build", None)):
        raise FamilyError(f"family {name!r}: its graph module {fam.graph} has no build(scenario)")
    return module


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
    for fam in families().values() if plugins else BUILTIN:
        if not fam.scenarios or fam.scenarios in seen:
            continue
        seen.add(fam.scenarios)
        try:
            root = importlib.resources.files(fam.scenarios)
            files = sorted(root.iterdir(), key=lambda p: p.name)
        except (ImportError, TypeError, FileNotFoundError, NotADirectoryError):
            continue  # a plug-in without its folder ships nothing; its graph still plays files
        for p in files:
            if p.name.endswith((".yaml", ".yml")):
                out.setdefault(Path(p.name).stem, Path(str(p)))
    return out
