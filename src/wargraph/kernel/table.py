"""The table a phase plays at: the scenario, the run's settings, seats, views and asks."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import Scenario, ScenarioError, validate_data
from wargraph.kernel.state import (
    Event,
    GameState,
    add_events,
    make_event,
    merge_pending,
    merge_world,
)
from wargraph.kernel.views import count_again, counting, view_for
from wargraph.models.profiles import Profile, seat_profile
from wargraph.seats.asks import Ask, Seat
from wargraph.seats.bots import is_bot
from wargraph.seats.names import scenario_names
from wargraph.seats.scripted import stable_seed

if TYPE_CHECKING:
    from wargraph.kernel.question import Question
    from wargraph.kernel.world import World


def _narrative() -> World:
    from wargraph.kernel.world import NARRATIVE  # the worlds import the table's module

    return NARRATIVE


S = TypeVar("S", bound=Scenario)

# The Question fields an Ask carries (under the same names) only when they are set.
_PASSED_WHEN_SET: tuple[
    Literal["schema_args", "reviewable", "memory_slot", "scripted", "facts", "answer_start"], ...
] = ("schema_args", "reviewable", "memory_slot", "scripted", "facts", "answer_start")


def ask_id(round_: int, phase: str, task: str, role: str, key: str = "") -> str:
    """The one way an ask is named: where it is asked (round, the node's mounted name), what
    (task), of whom, and a key when one seat is asked several times in one phase."""
    return f"r{round_}.{phase}.{task}.{role}" + (f".{key}" if key else "")


@lru_cache(maxsize=64)
def _scenario_from_json(spec_json: str) -> Scenario:
    # json.dumps keeps insertion order, so the file's order of players survives the cache
    return validate_data(json.loads(spec_json), "<game state>")


def scenario_of(state: GameState) -> Scenario:
    return _scenario_from_json(json.dumps(state["spec"]))


@dataclass
class Table:
    scenario: Scenario
    context: GameContext
    state: GameState
    world: World = field(default_factory=_narrative)
    # what a world computes once per step (e.g. the loaded engine, legal orders): a Table lives
    # for one phase step, so nothing here outlives the state it was computed from
    cache: dict[str, Any] = field(default_factory=dict, repr=False)
    # each seat's view and context of this step, by (what, seat, policy)
    _views: dict[tuple[str, str, str | None], Any] = field(
        default_factory=dict, init=False, repr=False
    )

    def scenario_as(self, cls: type[S]) -> S:
        """The scenario as the family's class a world's parts rely on (a clear error when a
        graph is handed another family's scenario)."""
        s = self.scenario
        if not isinstance(s, cls):
            want = cls.model_fields["family"].default
            raise ScenarioError(f"the {want} world plays family {want!r}, not {s.family!r}")
        return s

    @property
    def phase(self) -> str:
        """The name this node is mounted under (asks and events are named by it)."""
        return str(self.state.get("phase", ""))

    def event(
        self,
        *,
        kind: str,
        author: str,
        text: str,
        audience: list[str] | None = None,
        data: dict[str, Any] | None = None,
        key: str = "",
    ) -> Event:
        """An event of this round and phase (`make_event`: its id says where it happened, so a
        step run again records it once); `audience` None is everyone."""
        return make_event(
            round=self.round,
            phase=self.phase,
            kind=kind,
            author=author,
            text=text,
            audience=audience,
            data=data,
            key=key,
        )

    def setup_event(self, **fields: Any) -> Event:
        """An event of the game's setup (round 0, as the setting and the briefs), with `event`'s
        fields: every memory policy keeps it in every round (a secret role dealt at the start,
        a standing rule), where `event` is of the current round and a short memory forgets it."""
        return make_event(round=0, phase=self.phase, **fields)

    def ask_id(self, task: str, role: str, key: str = "") -> str:
        return ask_id(self.round, self.phase, task, role, key)

    @property
    def round(self) -> int:
        return int(self.state.get("round", 1))

    @property
    def events(self) -> list[Event]:
        return list(self.state.get("events", []))

    @property
    def pending(self) -> dict[str, Any]:
        return dict(self.state.get("pending", {}))

    def variant(self, role: str | None = None) -> str:
        if role:
            try:
                chosen = self.scenario.role(role).prompt_variant
                if chosen:
                    return chosen
            except KeyError:
                pass
        return self.scenario.prompt_variant

    def seat(self, role: str) -> Seat:
        """Role kind and model from the scenario, overridden by the run (`--human`, `--role-model`)."""
        try:
            r = self.scenario.role(role)
            kind, model, temp, max_tokens, review = (
                r.kind,
                r.model,
                r.temperature,
                r.max_tokens,
                r.review,
            )
            profile: str | None = r.model_profile
            script = r.script
            context_tokens = r.context_tokens
        except KeyError:  # teams and secretaries that are not scenario roles
            kind, model, temp, max_tokens, review = "ai", None, None, None, False
            profile = script = None
            context_tokens = None
        ctx = self.context
        script = ctx.scripts.get(role, script)
        model = ctx.role_models.get(role) or model or ctx.model
        # the run's profile, then the scenario's; none named: chosen from the model (seat_profile)
        profile = ctx.role_profiles.get(role) or ctx.profile or profile
        if role in ctx.humans:
            kind = "human"
        elif kind != "human" and (script is not None or model == "scripted" or is_bot(model)):
            # a scenario's person stays a person; a script is played, then the seed
            kind = "scripted"
        seat: Seat = {
            "kind": kind,
            "model": model,
            "temperature": ctx.temperature if temp is None else temp,
            "max_tokens": max_tokens or ctx.max_tokens,
            "seed": stable_seed(ctx.seed, role) % 2**31,
            "review": review,
            "retries": ctx.retries,
            "timeout": ctx.call_timeout,
            "max_faults": ctx.max_faults,
            "trace_path": ctx.trace_path,
        }
        if profile:  # else chosen from the model (seat_profile)
            seat["profile"] = profile
        if ctx.model_cache and kind == "ai":
            seat["model_cache"] = ctx.model_cache
        if context_tokens:
            seat["context_tokens"] = context_tokens
        if script is not None and kind == "scripted":  # a person's seat answers for itself
            seat["script"] = script
        return seat

    def bot_facts(self, role: str, facts: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
        """`facts()` when a bot plays `role` (`Question.facts`), else None: a model's ask does
        not carry them."""
        return facts() if is_bot(self.seat(role).get("model")) else None

    def profile(self, role: str) -> Profile:
        """The model profile a seat plays under (wargraph.models.profiles)."""
        return seat_profile(self.seat(role))

    def view_budget(self, role: str) -> int | None:
        """Tokens of the seat's view (its profile's context budget; None: the lean view)."""
        return self.profile(role).view_budget(self.seat(role))

    def notes_from(self, role: str) -> int:
        """The first round whose private notes a seat still reads: its memory policy bounds its
        notes as it bounds its events (full: all; otherwise the last round's on: a diary slot is
        rewritten each round, so the latest diary is always among them)."""
        try:
            policy = self.scenario.role(role).memory or self.scenario.memory
        except KeyError:
            policy = self.scenario.memory
        if policy == "full":
            return 0
        return max(0, self.round - 1)

    def view(self, role: str, *, policy: str | None = None) -> list[Event]:
        key = ("view", role, policy)
        if key not in self._views:  # a step's state does not change: once per seat and policy
            self._views[key] = view_for(self.state, role, self.scenario, policy=policy)
        return list(self._views[key])

    def view_text(self, role: str, *, policy: str | None = None) -> str:
        """The seat's context: its visible events under its memory policy, rendered by the
        world with what only this seat knows of it. The one door to a prompt's context.
        Rendered once per seat and policy in a step (a seat asked a diary entry and a digest
        gets the same context for both) and counted each time it is given (`counting`)."""
        key = ("view text", role, policy)
        if key not in self._views:
            with counting() as tally:
                text = self.world.cast.render_view(self, role, self.view(role, policy=policy))
            self._views[key] = (text, tally)
        text, tally = self._views[key]
        count_again(tally)
        return text

    def ask_question(
        self, role: str, q: Question, *, key: str = "", context: str | None = None
    ) -> Ask:
        """An Ask for `role` from a Question, named by `ask_id`. The table gives it the seat's
        context (`view_text`; only the after-game record passes its own) and, unless the
        question names another, the seat's system prompt."""
        seat: Seat = {**self.seat(q.seat_as or role), **(q.seat or {})}
        if q.max_tokens:  # room for the answer to finish
            seat["max_tokens"] = max(int(seat.get("max_tokens") or 0), q.max_tokens)
        tally = None
        if context is None:  # what the view shows of its texts goes to the trace with the ask
            with counting() as tally:
                context = self.view_text(role)
        ask: Ask = {
            "id": self.ask_id(q.task, role, key),
            "role": role,
            "phase": self.phase,
            "round": self.round,
            "task": q.task,
            "system": self.world.cast.system(self, role) if q.system is None else q.system,
            "context": context or "",
            "question": q.question,
            "schema": q.schema,
            "fallback": q.fallback,
            "seat": seat,
        }
        if seat.get("kind") == "ai":  # a model's prose gets its misspelt names fixed
            if "names" not in self.cache:
                sides, entities = scenario_names(self.scenario)
                self.cache["names"] = {"sides": sides, "entities": entities}
            ask["names"] = self.cache["names"]
        # notes from no round up to this one (q.notes False): none
        since = self.notes_from(role) if q.notes else self.round + 1
        if since:
            ask["notes_from"] = since
        if tally is not None and tally.items:
            ask["view"] = tally.as_dict()
        for key in _PASSED_WHEN_SET:  # in this order: asks are stored with the game
            if value := getattr(q, key):
                ask[key] = value
        return ask

    def after(self, update: dict[str, Any]) -> Table:
        """This step's table once `update`'s events, world and pending are in its state, as the
        game's reducers will put them: a question asked after them (the next exchange, the next
        seat in turn) sees them. A new Table, with views and a cache of its own."""
        state: GameState = {**self.state}
        if "events" in update:
            state["events"] = add_events(self.events, update["events"])
        if "world" in update:
            state["world"] = merge_world(self.state.get("world"), update["world"])
        if "pending" in update:
            state["pending"] = merge_pending(self.state.get("pending"), update["pending"])
        return Table(self.scenario, self.context, state, self.world)

    def answer(self, ask_id: str) -> dict[str, Any] | None:
        decision = self.pending.get(ask_id)
        return decision["value"] if decision else None
