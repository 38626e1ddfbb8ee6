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

import importlib
import importlib.metadata
import importlib.resources
import re
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


_SHIPPED = "wargraph.scenarios"

BUILTIN: tuple[Family, ...] = (
    Family("crisis", "wargraph.scenario:Scenario", "wargraph.graphs.crisis", _SHIPPED,
           "players and teams state plans; the control narrates"),
    Family("tabletop", "wargraph.worlds.tabletop:TabletopScenario", "wargraph.graphs.tabletop",
           _SHIPPED, "an incident, inject cards and a die"),
    Family("waragent", "wargraph.worlds.waragent.game:WarAgentScenario",
           "wargraph.graphs.waragent", _SHIPPED, "WarAgent-style historical simulations"),
    Family("diplomacy", "wargraph.worlds.diplomacy.world:DiplomacyScenario",
           "wargraph.graphs.diplomacy", _SHIPPED, "full-press Diplomacy on the real engine"),
    Family("flow", "wargraph.scenario:Scenario", "wargraph.graphs.flow", _SHIPPED,
           "a game composed from the phase library by the scenario"),
    Family("blotto", "wargraph.worlds.blotto:BlottoScenario", "wargraph.graphs.blotto",
           _SHIPPED, "Colonel Blotto: forces across fronts under a budget"),
)  # fmt: skip


@cache
def _registry() -> tuple[dict[str, Family], dict[str, str]]:
    found = {f.name: f for f in BUILTIN}
    problems: dict[str, str] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        where = f"plug-in {ep.name!r} ({ep.value})"
        if ep.name in found:
            problems[ep.name] = f"{where}: the name {ep.name!r} is taken by a built-in family"
            continue
        try:
            fam = ep.load()
        except Exception as exc:  # a broken plug-in must not take the other games down
            problems[ep.name] = f"{where}: cannot be loaded ({type(exc).__name__}: {exc})"
            continue
        why = _invalid(fam, ep.name)
        if why:
            problems[ep.name] = f"{where}: {why}"
            continue
        found[ep.name] = fam
    return found, problems


def _invalid(fam: Any, name: str) -> str | None:
    if not isinstance(fam, Family):
        return f"expected a wargraph.families.Family, got {type(fam).__name__}"
    if fam.name != name:
        return f"the entry point is named {name!r} but the family {fam.name!r}"
    if not NAME.match(fam.name):
        return "a family name is lower-case letters, digits and _"
    if ":" not in fam.scenario_class:
        return f"scenario_class {fam.scenario_class!r} is not of the form module:Class"
    return None


def refresh() -> None:
    """Read the entry points again (after installing or removing a plug-in in this process)."""
    _registry.cache_clear()


def families() -> dict[str, Family]:
    """Every usable family by name: the built-ins first, then plug-ins."""
    return dict(_registry()[0])


def problems() -> dict[str, str]:
    """Plug-ins that were found but cannot be used, with the reason."""
    return dict(_registry()[1])


def get(name: str) -> Family:
    fams, bad = _registry()
    if name in fams:
        return fams[name]
    if name in bad:
        raise FamilyError(bad[name])
    raise FamilyError(f"unknown game family {name!r} (known: {sorted(fams)})")


def scenario_class(name: str) -> type:
    fam = get(name)
    module, _, cls = fam.scenario_class.partition(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise FamilyError(
            f"family {name!r}: its scenario class {fam.scenario_class} cannot be loaded ({exc})"
        ) from None


def graph_module(name: str) -> ModuleType:
    fam = get(name)
    try:
        module = importlib.import_module(fam.graph)
    except ImportError as exc:
        raise FamilyError(f"game family {name!r} is not available ({exc})") from None
    if not callable(getattr(module, "build", None)):
        raise FamilyError(f"family {name!r}: its graph module {fam.graph} has no build(scenario)")
    return module


def shipped_scenarios() -> dict[str, Path]:
    """Every family's shipped scenario files by name; the first family to ship a name keeps it
    (built-ins first), so a plug-in cannot shadow a shipped game."""
    out: dict[str, Path] = {}
    seen: set[str] = set()
    for fam in families().values():
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
