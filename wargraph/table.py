"""The table a phase plays at: the scenario, the run's settings, seats, views and asks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from wargraph.context import GameContext
from wargraph.deciders import Ask, Seat, stable_seed
from wargraph.scenario import Scenario, validate_data
from wargraph.state import Event, GameState
from wargraph.views import render_events, view_for


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
        except KeyError:  # teams and secretaries that are not scenario roles
            kind, model, temp, max_tokens, review = "ai", None, None, None, False
        ctx = self.context
        model = ctx.role_models.get(role) or model or ctx.model
        if role in ctx.humans:
            kind = "human"
        elif model == "scripted" and kind != "human":  # a scenario's person stays a person
            kind = "scripted"
        return {
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

    def view(self, role: str, *, policy: str | None = None) -> list[Event]:
        return view_for(self.state, role, self.scenario, policy=policy)

    def view_text(self, role: str, *, policy: str | None = None) -> str:
        return render_events(self.view(role, policy=policy))

    def ask(
        self,
        role: str,
        task: str,
        *,
        system: str,
        context: str,
        question: str,
        schema: str,
        fallback: dict[str, Any],
        key: str = "",
        phase: str | None = None,
        schema_args: dict[str, Any] | None = None,
        reviewable: bool = False,
        memory_slot: str | None = None,
        scripted: dict[str, Any] | None = None,
        seat_as: str | None = None,
    ) -> Ask:
        phase = phase or self.state.get("phase", "")
        ask: Ask = {
            "id": f"r{self.round}.{phase}.{task}.{role}" + (f".{key}" if key else ""),
            "role": role,
            "phase": phase,
            "round": self.round,
            "task": task,
            "system": system,
            "context": context,
            "question": question,
            "schema": schema,
            "fallback": fallback,
            "seat": self.seat(seat_as or role),
        }
        if schema_args:
            ask["schema_args"] = schema_args
        if reviewable:
            ask["reviewable"] = True
        if memory_slot:
            ask["memory_slot"] = memory_slot
        if scripted:
            ask["scripted"] = scripted
        return ask

    def answer(self, ask_id: str) -> dict[str, Any] | None:
        decision = self.pending.get(ask_id)
        return decision["value"] if decision else None
