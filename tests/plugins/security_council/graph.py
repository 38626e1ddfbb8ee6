"""One round: brief -> consult (private press) -> draft -> debate (each member in turn) -> vote ->
tellers (the secretary) -> adjudicate (code counts, the control narrates)."""

from typing import Any

from wargraph import GameGraph, build_game, load_scenario, served_graph
from wargraph.nodes.adjudicate import adjudicate
from wargraph.nodes.inject import inject
from wargraph.nodes.negotiate import negotiate
from wargraph.nodes.order import order
from wargraph.nodes.secretary_validate import secretary_validate

from .world import SECURITY_COUNCIL

DEFAULT_SCENARIO = "security_council"


def build(scenario: Any = DEFAULT_SCENARIO) -> GameGraph:
    sc = load_scenario(scenario)
    phases = {"brief": inject, "consult": negotiate, "draft": order, "debate": order, "vote": order}
    phases |= {"tellers": secretary_validate, "adjudicate": adjudicate}
    return build_game(phases, roster=list(sc.roles), world=SECURITY_COUNCIL, scenario=sc)


builder = build()
graph = builder.compile()
make_graph = served_graph("security_council")
