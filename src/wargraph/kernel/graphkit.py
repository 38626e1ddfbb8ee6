"""Assemble a game graph: `setup`, phase nodes (the spine) and one agent node per seat.

A phase node returns a state update. If it sets `asks`, the graph fans out to the agent nodes
of those roles (each reads its role's asks from the state), which route back to the same phase
(by `state["phase"]`), so the phase collects their answers from `pending`. With no asks it
moves on to `next`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

from langgraph.channels import EphemeralValue
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

import wargraph.kernel.late_writes as late_writes
from wargraph.kernel.ahead import prepare_while_asked
from wargraph.kernel.context import GameContext, context_of
from wargraph.kernel.heap import settle_heap
from wargraph.kernel.phase import PhaseFn, PhaseSpec, phase_spec
from wargraph.kernel.scenario import Scenario, ScenarioError, load_scenario
from wargraph.kernel.state import CLEAR, GameInput, GameState, make_event
from wargraph.kernel.state import BadStateEdit as BadStateEdit  # the server maps it to 422
from wargraph.kernel.table import Table, scenario_of
from wargraph.kernel.world import NARRATIVE, World
from wargraph.models.faults import new_game
from wargraph.prompts import family_prompts
from wargraph.seats.agents import agent_node_name, make_agent_node, newest_checkpoints
from wargraph.seats.asks import Ask

S = TypeVar("S", bound=Scenario)
# a phase: a plain function of a game's own, or one declared with the seats it asks
Phase = PhaseSpec | PhaseFn
# A game's graph, run with a GameContext (a bare StateGraph is typed as having no context).
GameGraph = StateGraph[Any, GameContext, Any, Any]
SEAT_RETRY = RetryPolicy(max_attempts=2, initial_interval=0.5)


class KitState(GameState, total=False):
    # Ephemeral: a phase's asks are in the checkpoint its step writes (what a person waiting at
    # an interrupt is asked, what Studio shows) and gone after the seats' step, so the prompts
    # are not copied into every later checkpoint; the seats' answers land in `pending`.
    asks: Annotated[list[Ask], EphemeralValue(list)]
    next: str
    # each seat's own checkpoint (its notes) as of this state, by namespace: a game forked or
    # replayed from an earlier state gives each seat its notes of then (seats/agents.py)
    seat_checkpoints: Annotated[dict[str, str], newest_checkpoints]


def opening_events(scenario: Scenario) -> list:
    """Round 0: the setting for everyone, and each seat's private brief (persona, goals, secrets)."""
    events = [
        make_event(
            round=0,
            phase="setup",
            kind="setting",
            author="scenario",
            text=f"{scenario.title}\n{scenario.setting}",
        )
    ]
    for name, role in scenario.players.items():
        brief = [f"You are {name}."]
        if role.persona_text:
            brief.append(f"Persona: {role.persona_text}")
        if role.goals:
            # "Take Tunis.; Pick one ally" read badly: a goal's own full stop gives way to the ";"
            brief.append("Goals: " + "; ".join(g.strip().rstrip(".;") for g in role.goals))
        if role.secrets:
            brief.append("Known only to you: " + " ".join(role.secrets))
        events.append(
            make_event(
                round=0,
                phase="setup",
                kind="brief",
                author="scenario",
                text="\n".join(brief),
                audience=[name],
                key=name,
            )
        )
    return events


class WrongSeats(ValueError):
    """A game graph invoked on a scenario with seats it was not built for."""


def make_setup(roster: list[str], first: str, world: World) -> Callable:
    def setup(state: GameInput, runtime: Runtime[GameContext]) -> dict[str, Any]:
        if state.get("spec"):  # resumed or forked games keep their scenario
            return {"next": first, "asks": []}
        new_game()  # its model faults in a row count from zero, even on a reused thread id
        try:
            overrides = dict(state.get("overrides") or {})
            if state.get("rounds"):
                overrides["rounds"] = state["rounds"]
            scenario = load_scenario(state.get("scenario") or "", overrides)
        except ScenarioError as err:
            return {"error": str(err), "done": True, "next": END, "asks": []}
        missing = sorted(set(scenario.roles) - set(roster))
        if missing:
            # A mistake in the caller's code, not a game that went wrong: raised, as a LangGraph
            # user expects, rather than a normal return with 0 events and state["error"].
            raise WrongSeats(
                f"this graph was built for the seats {sorted(roster)}; the scenario also has "
                f"{missing}. Build the graph for this scenario (graphs.<family>.build(scenario))."
            )
        update: KitState = {
            "spec": scenario.model_dump(),
            "round": 1,
            "done": False,
            "events": opening_events(scenario),
            "pending": {CLEAR: True},
            "next": first,
            "asks": [],
        }
        opening: KitState = {**update, "phase": "setup"}
        table = Table(scenario, context_of(runtime), opening, world)
        try:
            with family_prompts(scenario.family):
                opened = world.opening.open(table)
        except ScenarioError as err:
            return {"error": str(err), "done": True, "next": END, "asks": []}
        return {**update, **opened}

    return setup


class UnansweredAsk(RuntimeError):
    """A phase asked again a question its seat had answered: it never reads that answer, so
    the game would ask forever (until LangGraph's recursion limit)."""


def _check_not_asked_again(name: str, table: Table, update: dict[str, Any]) -> None:
    if (update.get("pending") or {}).get(CLEAR):
        return  # the phase cleared its answers: asking anew is a new question
    answered = table.pending
    asks: list[Ask] = update["asks"]
    again = next((a for a in asks if a["id"] in answered), None)
    if again is None:
        return
    raise UnansweredAsk(
        f"phase {name!r} in round {table.round} asked {again['id']!r} (task "
        f"{again['task']!r}, seat {again['role']!r}) again after it was answered: the phase "
        f"looks for the answer under another ask id (an answer is read under the id of the "
        f"question asked: `table.ask_id(question.task, seat, key)`)"
    )


def make_phase(name: str, fn: Phase, order: list[str], end: list[str], world: World) -> Callable:
    def phase(state: KitState, runtime: Runtime[GameContext]) -> dict[str, Any]:
        settle_heap()
        current: KitState = {**state, "phase": name}
        table = Table(scenario_of(state), context_of(runtime), current, world)
        with family_prompts(table.scenario.family):  # a plug-in's own templates first
            update = fn(table.state, table) or {}
        update["phase"] = name
        update.setdefault("asks", [])
        _check_not_asked_again(name, table, update)
        if update["asks"]:
            prepare_while_asked(world, table, update)
        elif "next" not in update:
            update.update(_after(name, table, update, order, end))
        return update

    phase.__name__ = name
    return phase


def _after(
    name: str, table: Table, update: dict[str, Any], spine: list[str], end: list[str]
) -> dict[str, Any]:
    """Where a finished phase leads: the next spine phase, the next round, or the end phases.
    A game that ends mid-round still passes through the round's remaining phases (they find
    nothing to do), so every phase has one way forward and the graph draws the round's rhythm."""
    if name in end:
        i = end.index(name)
        return {"next": end[i + 1] if i + 1 < len(end) else END}
    finished = update.get("done") or table.state.get("done")
    i = spine.index(name)
    if i + 1 < len(spine):
        return {"next": spine[i + 1]}
    if not finished and table.round < table.scenario.rounds:
        # the scenario again, unchanged: a load then finds it within the round (see `spec`)
        return {"next": spine[0], "round": table.round + 1, "spec": table.state["spec"]}
    return {"next": end[0] if end else END, "done": True}


def route_phase(state: KitState) -> list[str] | str:
    """The asked seats' agent nodes, which run together and read their own asks from `asks`
    (each keeps the asks of its role). Plain edges rather than `Send`: a Send's payload is
    stored as a write and again in the next checkpoint, so every prompt would be stored twice
    more than the `asks` channel already holds it."""
    asks = state.get("asks") or []
    if not asks:
        return state.get("next") or END
    return [agent_node_name(r) for r in dict.fromkeys(a["role"] for a in asks)]


def route_back(state: KitState) -> str:
    return state["phase"]


def checked(route: Callable[[KitState], Any], node: str, targets: list[str]) -> Any:
    """`route` for `node`'s branch, refusing a destination outside its path map by name (the
    map alone would fail with a bare KeyError). Keeps the route's name: a branch is stored
    under it in every checkpoint."""
    allowed = set(targets)

    def inner(state: KitState) -> Any:
        got = route(state)
        wrong = [d for d in ([got] if isinstance(got, str) else got) if d not in allowed]
        if wrong:
            raise BadStateEdit(
                f"after {node!r} this state leads to {', '.join(map(repr, wrong))}, which "
                f"{node!r} cannot reach (it goes on to {', '.join(sorted(allowed))}); an edit "
                "of a game's state names the node it stands for (as_node) and fits that node"
            )
        return got

    inner.__name__ = route.__name__
    inner.__qualname__ = route.__qualname__
    return inner


def seats_of(fn: Phase, scenario: Scenario | None, world: World, roster: list[str]) -> list[str]:
    """The seats a phase may ask (declared with `nodes.seats.asks`: a PhaseSpec)."""
    declared = phase_spec(fn).seats
    if declared is None or scenario is None:
        return list(roster)
    return [r for r in declared(scenario, world) if r in roster]


def build_game(
    spine: Mapping[str, Phase],
    roster: list[str],
    *,
    world: World | None = None,
    scenario: Scenario | None = None,
    end: Mapping[str, Phase] | None = None,
    state_schema: type = KitState,
) -> GameGraph:
    """`spine`: the phases of one round, in order; `end`: phases after the last round (analysis);
    `roster`: every seat that can be asked; `world`: the rules the phases consult.

    Edges follow the phase order. A phase that asks seats fans out to their agent nodes, which
    return only to the phases that ask them; the last phase of a round branches to the next
    round or the end; a phase that loops (negotiation exchanges) may run again."""
    late_writes.install()
    world = world or NARRATIVE
    end = end or {}
    phases = {**spine, **end}
    order, closing = list(spine), list(end)
    g: GameGraph = StateGraph(state_schema, context_schema=GameContext, input_schema=GameInput)
    g.add_node("setup", make_setup(roster, order[0], world))
    for name, fn in phases.items():
        g.add_node(name, make_phase(name, fn, order, closing, world))
    seats = {name: seats_of(fn, scenario, world, roster) for name, fn in phases.items()}
    asked = [r for r in roster if any(r in s for s in seats.values())]
    for role in asked:
        # a failed call is retried once: the seat's step runs again from its saved state
        g.add_node(agent_node_name(role), make_agent_node(role), retry_policy=SEAT_RETRY)
    g.add_edge(START, "setup")
    g.add_conditional_edges(
        "setup", checked(route_phase, "setup", [order[0], END]), {order[0]: order[0], END: END}
    )
    finish = closing[0] if closing else END
    for name, fn in phases.items():
        targets: list[str] = [agent_node_name(r) for r in seats[name]]
        if phase_spec(fn).loops:
            targets.append(name)
        if name in closing:
            i = closing.index(name)
            targets.append(closing[i + 1] if i + 1 < len(closing) else END)
        else:
            i = order.index(name)
            targets += [order[i + 1]] if i + 1 < len(order) else [order[0], finish]
        targets = list(dict.fromkeys(targets))
        if len(targets) == 1:
            g.add_edge(name, targets[0])
        else:
            g.add_conditional_edges(
                name, checked(route_phase, name, targets), {t: t for t in targets}
            )
    for role in asked:
        back = [name for name in phases if role in seats[name]]
        node = agent_node_name(role)
        if len(back) == 1:
            g.add_edge(node, back[0])
        else:
            g.add_conditional_edges(node, checked(route_back, node, back), {n: n for n in back})
    return g


def family_scenario(scenario: Any, cls: type[S], family: str) -> S:
    """The scenario a family's `build` was given (a name, a mapping or a Scenario), loaded and
    checked to be of that family's scenario class: another family's is a ScenarioError."""
    sc = load_scenario(scenario)
    if not isinstance(sc, cls):
        raise ScenarioError(
            f"family: the {family} graph needs family '{family}' (got {sc.family!r})"
        )
    return sc
