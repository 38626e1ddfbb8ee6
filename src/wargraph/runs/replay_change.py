"""A replay's change takes effect from the fork on, or is refused (issue 29, item 4).

What a seat reads comes from two places: the stored scenario (`spec`), which every phase reads
again (instructions, prompt variants, models, a WarAgent country's agent setting), and the events
the game's `setup` wrote once (the setting, each seat's brief with its persona, goals and
secrets, WarAgent's profiles and trigger). A fork copies the events, so a change to a persona
would only reach the scenario and never the seat. Here the change is applied to both: the game's
opening is made again under the changed scenario (the family's own `setup`, run alone on an
in-memory store) and every opening event it writes differently replaces the stored one, keeping
its id, with the text it replaced in its data (`changed_at_fork`).

A change that cannot take effect at the fork is refused, naming the key: one that changes
nothing, one that changes the opening position itself (the map, a country's starting forces:
the forked game's position is the stored one), an inject of a round already played, and a
default model (`--model`) no seat plays because each has its own.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario, ScenarioError, load_scenario, parse_overrides
from wargraph.kernel.state import Event
from wargraph.runs.runner import GameError, build_for, thread_config


@dataclass
class AppliedChange:
    """What a replay's runs start from: the fork's events under the change, and the run's
    per-role models (a role whose model the change sets no longer takes the stored run's)."""

    events: list[Event]
    rewritten: list[str] = field(default_factory=list)  # ids of the opening events replaced
    role_models: dict[str, str] = field(default_factory=dict)


def opening_of(scenario: Scenario, ctx: GameContext) -> dict[str, Any]:
    """The state the family's `setup` writes for `scenario` (its events and opening world),
    played alone on an in-memory store: no model is asked."""
    graph = build_for(scenario).compile(checkpointer=InMemorySaver())
    config = thread_config("opening")
    run_ctx = dataclasses.replace(ctx, trace_path=None, humans=[])
    graph.invoke(
        {"scenario": scenario.model_dump()}, config, context=run_ctx, interrupt_after=["setup"]
    )
    values = dict(graph.get_state(config).values)
    if values.get("error"):
        raise GameError(f"the changed scenario does not open: {values['error']}")
    return values


def _by_id(events: list[Event]) -> dict[str, Event]:
    return {e["id"]: e for e in events}


def _differs(a: Event, b: Event) -> bool:
    return any(a.get(k) != b.get(k) for k in ("text", "audience", "data", "kind", "author"))


def check_model(model: str | None, scenario: Scenario, ctx: GameContext) -> None:
    """`--model` is the default model: refused when every AI seat has its own."""
    if not model:
        return
    own = {
        name: ctx.role_models.get(name) or role.model
        for name, role in scenario.roles.items()
        if role.kind != "human"
    }
    if own and all(own.values()):
        named = ", ".join(f"{r}={m}" for r, m in own.items())
        raise GameError(
            f"--model {model}: no seat of this game plays the default model (each has its own: "
            f"{named}); change a seat with --set players.ROLE.model=MODEL"
        )


def apply_change(
    stored: Scenario,
    changed: Scenario,
    overrides: list[str] | dict[str, Any] | None,
    start: dict[str, Any],
    ctx: GameContext,
    *,
    phase: str,
) -> AppliedChange:
    """The fork's events under `changed` (the stored scenario with `overrides`), or a GameError
    naming the first override that cannot take effect at the fork."""
    events = list(start.get("events") or [])
    role_models = dict(ctx.role_models)
    if not overrides:
        return AppliedChange(events, [], role_models)
    items = parse_overrides(overrides)
    before = opening_of(stored, ctx)
    fork_round = int(start.get("round") or 0)
    stored_rounds = getattr(stored, "rounds", None)
    for key, value in items.items():
        try:
            alone = load_scenario(stored, {key: value})
        except ScenarioError as err:
            raise GameError(str(err)) from None
        if alone.model_dump() == stored.model_dump():
            raise GameError(
                f"--set {key}: the stored game already has this value; nothing to change"
            )
        past = [
            i.round for i in alone.injects if i.round < fork_round and i not in stored.injects
        ] + [i.round for i in stored.injects if i.round < fork_round and i not in alone.injects]
        if past:
            raise GameError(
                f"--set {key}: changes an inject of round {min(past)}, already played at the "
                f"fork (round {fork_round}); fork earlier to change it"
            )
        rounds = getattr(alone, "rounds", None)
        # a game that would be over before the fork has nothing left to play
        if isinstance(rounds, int) and rounds != stored_rounds and rounds < fork_round:
            raise GameError(
                f"--set {key}: the game would end after round {rounds}, but the fork is in "
                f"round {fork_round}; fork earlier, or set rounds to {fork_round} or more"
            )
        opened = opening_of(alone, ctx)
        if opened.get("world") != before.get("world"):
            raise GameError(
                f"--set {key}: changes the game's opening position, which a fork at {phase} "
                "keeps as the stored game played it; play a new game to change it"
            )
        parts = key.split(".")
        if len(parts) == 3 and parts[0] in ("players", "roles") and parts[2] == "model":
            role_models.pop(parts[1], None)  # the study's change wins over the stored run's
    after = opening_of(changed, ctx)
    old, new = _by_id(before.get("events") or []), _by_id(after.get("events") or [])
    missing = sorted(set(old) ^ set(new))
    if missing:  # an opening event that appears or disappears: no place for it in the record
        raise GameError(
            f"--set {', '.join(items)}: adds or removes an opening event ({missing[0]}); "
            "a fork cannot change which events the game opened with"
        )
    changed_ids = [eid for eid in new if _differs(old[eid], new[eid])]
    rewritten: list[str] = []
    out: list[Event] = []
    for e in events:
        if e["id"] in changed_ids:
            fresh = copy.deepcopy(new[e["id"]])
            data = dict(fresh.get("data") or {})
            data["changed_at_fork"] = {"phase": phase, "before": e.get("text", "")}
            fresh["data"] = data
            out.append(fresh)
            rewritten.append(e["id"])
        else:
            out.append(e)
    return AppliedChange(out, rewritten, role_models)
