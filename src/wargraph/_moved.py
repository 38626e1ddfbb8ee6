"""Old import paths (before the one-root layout) kept working for one release: importing one
gives the module at its new path, with a DeprecationWarning naming it. Plug-ins written against
the old paths keep running while their authors move to the new ones."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

# (an old module whose name is now a package, wargraph.models and wargraph.store, is not
# listed: its name leads to the package)
MOVED: dict[str, str] = {
    "wargraph.agents": "wargraph.seats.agents",
    "wargraph.batch": "wargraph.runs.batch",
    "wargraph.bots": "wargraph.seats.bots",
    "wargraph.choices": "wargraph.kernel.choices",
    "wargraph.context": "wargraph.kernel.context",
    "wargraph.copying": "wargraph.store.copying",
    "wargraph.deciders": "wargraph.seats.deciders",
    "wargraph.echoes": "wargraph.seats.echoes",
    "wargraph.evals.diplomacy": "wargraph.games.diplomacy.eval",
    "wargraph.evals.waragent": "wargraph.games.waragent.eval",
    "wargraph.families": "wargraph.kernel.families",
    "wargraph.familyargs": "wargraph.kernel.familyargs",
    "wargraph.faults": "wargraph.models.faults",
    "wargraph.fence": "wargraph.store.fence",
    "wargraph.filelock": "wargraph.store.filelock",
    "wargraph.graphkit": "wargraph.kernel.graphkit",
    "wargraph.graphs": "wargraph.games",
    "wargraph.graphs.blotto": "wargraph.games.blotto.graph",
    "wargraph.graphs.blotto_family": "wargraph.games.blotto",
    "wargraph.graphs.crisis": "wargraph.games.crisis.graph",
    "wargraph.graphs.crisis_family": "wargraph.games.crisis",
    "wargraph.graphs.diplomacy": "wargraph.games.diplomacy.graph",
    "wargraph.graphs.diplomacy_family": "wargraph.games.diplomacy",
    "wargraph.graphs.flow": "wargraph.games.flow.graph",
    "wargraph.graphs.flow_family": "wargraph.games.flow",
    "wargraph.graphs.tabletop": "wargraph.games.tabletop.graph",
    "wargraph.graphs.tabletop_family": "wargraph.games.tabletop",
    "wargraph.graphs.waragent": "wargraph.games.waragent.graph",
    "wargraph.graphs.waragent_family": "wargraph.games.waragent",
    "wargraph.langsmith_env": "wargraph.models.langsmith_env",
    "wargraph.lease": "wargraph.store.lease",
    "wargraph.llama_build": "wargraph.models.llama_build",
    "wargraph.names": "wargraph.seats.names",
    "wargraph.plaintext": "wargraph.seats.plaintext",
    "wargraph.posthoc": "wargraph.runs.posthoc",
    "wargraph.pruning": "wargraph.store.pruning",
    "wargraph.records": "wargraph.runs.records",
    "wargraph.replay": "wargraph.runs.replay",
    "wargraph.rundir": "wargraph.runs.rundir",
    "wargraph.runner": "wargraph.runs.runner",
    "wargraph.sampling": "wargraph.models.sampling",
    "wargraph.scenario": "wargraph.kernel.scenario",
    "wargraph.state": "wargraph.kernel.state",
    "wargraph.table": "wargraph.kernel.table",
    "wargraph.terminal": "wargraph.seats.terminal",
    "wargraph.terminal_form": "wargraph.seats.terminal_form",
    "wargraph.trace": "wargraph.runs.trace",
    "wargraph.userfiles": "wargraph.runs.userfiles",
    "wargraph.view.diplomacy": "wargraph.games.diplomacy.panels",
    "wargraph.views": "wargraph.kernel.views",
    "wargraph.worlds.base": "wargraph.kernel.world",
    "wargraph.worlds.blotto": "wargraph.games.blotto.world",
    "wargraph.worlds.blotto_bots": "wargraph.games.blotto.bots",
    "wargraph.worlds.diplomacy": "wargraph.games.diplomacy.rules",
    "wargraph.worlds.diplomacy.adjudication": "wargraph.games.diplomacy.adjudication",
    "wargraph.worlds.diplomacy.bots": "wargraph.games.diplomacy.bots",
    "wargraph.worlds.diplomacy.budget": "wargraph.games.diplomacy.budget",
    "wargraph.worlds.diplomacy.debrief": "wargraph.games.diplomacy.debrief",
    "wargraph.worlds.diplomacy.diary": "wargraph.games.diplomacy.diary",
    "wargraph.worlds.diplomacy.engine": "wargraph.games.diplomacy.engine",
    "wargraph.worlds.diplomacy.geography": "wargraph.games.diplomacy.geography",
    "wargraph.worlds.diplomacy.measures": "wargraph.games.diplomacy.measures",
    "wargraph.worlds.diplomacy.negotiation": "wargraph.games.diplomacy.negotiation",
    "wargraph.worlds.diplomacy.orders": "wargraph.games.diplomacy.orders",
    "wargraph.worlds.diplomacy.phase": "wargraph.games.diplomacy.phase",
    "wargraph.worlds.diplomacy.powers": "wargraph.games.diplomacy.powers",
    "wargraph.worlds.diplomacy.press": "wargraph.games.diplomacy.press",
    "wargraph.worlds.diplomacy.render": "wargraph.games.diplomacy.render",
    "wargraph.worlds.diplomacy.replay": "wargraph.games.diplomacy.replay",
    "wargraph.worlds.diplomacy.scenario": "wargraph.games.diplomacy.scenario",
    "wargraph.worlds.diplomacy.schemas": "wargraph.games.diplomacy.schemas",
    "wargraph.worlds.diplomacy.secretary": "wargraph.games.diplomacy.secretary",
    "wargraph.worlds.diplomacy.unit_orders": "wargraph.games.diplomacy.unit_orders",
    "wargraph.worlds.diplomacy.view": "wargraph.games.diplomacy.view",
    "wargraph.worlds.diplomacy.world": "wargraph.games.diplomacy.world",
    "wargraph.worlds.parts": "wargraph.kernel.parts",
    "wargraph.worlds.parts.cast": "wargraph.kernel.parts.cast",
    "wargraph.worlds.parts.debrief": "wargraph.kernel.parts.debrief",
    "wargraph.worlds.parts.diary": "wargraph.kernel.parts.diary",
    "wargraph.worlds.parts.opening": "wargraph.kernel.parts.opening",
    "wargraph.worlds.parts.orders": "wargraph.kernel.parts.orders",
    "wargraph.worlds.parts.press": "wargraph.kernel.parts.press",
    "wargraph.worlds.parts.resolution": "wargraph.kernel.parts.resolution",
    "wargraph.worlds.parts.secretary": "wargraph.kernel.parts.secretary",
    "wargraph.worlds.question": "wargraph.kernel.question",
    "wargraph.worlds.tabletop": "wargraph.games.tabletop.world",
    "wargraph.worlds.waragent": "wargraph.games.waragent.rules",
    "wargraph.worlds.waragent.actions": "wargraph.games.waragent.actions",
    "wargraph.worlds.waragent.anonymise": "wargraph.games.waragent.anonymise",
    "wargraph.worlds.waragent.board": "wargraph.games.waragent.board",
    "wargraph.worlds.waragent.config": "wargraph.games.waragent.config",
    "wargraph.worlds.waragent.countries": "wargraph.games.waragent.countries",
    "wargraph.worlds.waragent.game": "wargraph.games.waragent.game",
    "wargraph.worlds.waragent.orders": "wargraph.games.waragent.orders",
    "wargraph.worlds.waragent.prompt_text": "wargraph.games.waragent.prompt_text",
    "wargraph.worlds.waragent.resolution": "wargraph.games.waragent.resolution",
    "wargraph.worlds.waragent.rounds": "wargraph.games.waragent.rounds",
    "wargraph.worlds.waragent.scenario": "wargraph.games.waragent.scenario",
    "wargraph.worlds.waragent.scripted": "wargraph.games.waragent.scripted",
    "wargraph.worlds.waragent.secretariat": "wargraph.games.waragent.secretariat",
    "wargraph.worlds.waragent.secretary": "wargraph.games.waragent.secretary",
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name and loads it as the module at the new name (one object)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self) -> None:
        self._own: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} has moved to {new}; the old name goes away in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
        module = importlib.import_module(new)
        self._own[spec.name] = module.__spec__
        if not hasattr(module, "__path__") and any(k.startswith(spec.name + ".") for k in MOVED):
            # an old package now a module (wargraph.worlds.diplomacy is ...diplomacy.rules): its
            # old submodules are found here, but Python asks the parent to be a package first
            module.__path__ = []  # read, never searched: empty
        return module

    def exec_module(self, module: ModuleType) -> None:
        # importlib gave the module the old name's spec: give it back its own
        old = module.__spec__.name if module.__spec__ else ""
        if old in self._own:
            module.__spec__ = self._own.pop(old)


def install() -> None:
    if not any(isinstance(f, _Moved) for f in sys.meta_path):
        sys.meta_path.insert(0, _Moved())  # before the path finder, which would find an old
        # name under a moved package (wargraph.graphs is wargraph.games) as a second module
