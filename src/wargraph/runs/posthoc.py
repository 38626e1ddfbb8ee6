"""The control outside a game: preparing a scenario from a prompt, answering questions about a record."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.scenario import ScenarioError, validate_data
from wargraph.kernel.views import quote, render_events
from wargraph.nodes.schemas import record_quotes
from wargraph.prompts import render_prompt
from wargraph.seats.asks import Ask, Decision, Seat
from wargraph.seats.deciders import decider_for
from wargraph.seats.schemas import register_schema, schema_for
from wargraph.seats.scripted import stable_seed


class PreparedPlayer(BaseModel):
    name: str = Field(max_length=40)
    persona: str = Field(max_length=400)
    goal: str = Field(max_length=200)


class PreparedScenario(BaseModel):
    title: str = Field(max_length=120)
    setting: str = Field(max_length=1500)
    players: list[PreparedPlayer] = Field(min_length=2, max_length=4)
    injects: list[str] = Field(default_factory=list, max_length=3)


register_schema("prepared_scenario", PreparedScenario)


def decide_once(
    ask: Ask, model: str, seed: int = 0, max_tokens: int = 400, trace_path: str | None = None
) -> Decision:
    seat: Seat = {
        "kind": "ai",
        "model": model,
        "seed": seed,
        "max_tokens": max_tokens,
        "temperature": 0.7,
        "trace_path": trace_path,  # post-hoc calls are traced like in-game ones
    }
    return decider_for(seat).decide(ask, schema_for(ask))


def _slug(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "player"
    slug, n = base, 2
    while slug in taken or slug == "control":
        slug, n = f"{base}_{n}", n + 1
    taken.add(slug)
    return slug


def prepare_scenario(request: str, *, model: str = "embedded", seed: int = 0) -> tuple[dict, str]:
    """A crisis scenario written by the control; the fallback is a plain two-sided frame of the
    request, so `prepare` always writes a file that plays."""
    if not request.strip():
        raise ScenarioError("prepare: the prompt is empty; describe the crisis in a sentence")
    fallback = fallback_answer(request)
    ask: Ask = {
        "id": "prepare",
        "role": "control",
        "phase": "prepare",
        "round": 0,
        "task": "prepare",
        "system": render_prompt("prepare_system"),
        "context": "",
        "question": render_prompt("prepare_question", request=quote(request)),
        "schema": "prepared_scenario",
        "fallback": fallback,
    }
    decision = decide_once(ask, model, seed, max_tokens=600)
    return scenario_of_answer(decision["value"], request), decision["source"]


def fallback_answer(request: str) -> dict[str, Any]:
    """What `prepare` writes when no answer of the model is usable: the description as the
    setting, two plain sides."""
    return {
        "title": request.strip()[:100],
        "setting": request.strip()[:1500],
        "players": [
            {"name": "Side A", "persona": "A cautious leader.", "goal": "Protect its interests."},
            {"name": "Side B", "persona": "An ambitious leader.", "goal": "Expand its influence."},
        ],
        "injects": [],
    }


def scenario_of_answer(v: dict[str, Any], request: str) -> dict[str, Any]:
    """A crisis scenario from the control's answer (a PreparedScenario's fields), validated."""
    fallback = fallback_answer(request)
    taken: set[str] = set()
    players = {}
    for p in v["players"]:
        players[_slug(p["name"], taken)] = {"persona": p["persona"], "goals": [p["goal"]]}
    data = {
        "family": "crisis",
        "title": v["title"] or fallback["title"],
        "setting": v["setting"] or request,
        "timestep": "one month",
        "rounds": 2,
        "players": players,
        "injects": [{"round": 2, "text": t} for t in v.get("injects", []) if t.strip()],
        "questions": [{"text": "Did armed conflict occur?", "options": ["yes", "no"]}],
    }
    validate_data(data, "<prepared scenario>")  # what we write must load
    return data


def write_scenario(data: dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return p


def ask_record(
    record: dict[str, Any],
    question: str,
    *,
    options: list[str] | None = None,
    model: str = "embedded",
    seed: int = 0,
    max_tokens: int = 300,
    trace_path: str | None = None,
) -> dict[str, Any]:
    """The control answers a follow-up question from the whole record (multiple choice or free)."""
    if not question.strip():
        raise ScenarioError("ask: the question is empty")
    options = list(options or [])
    opts = (
        "Choose one of: " + "; ".join(options) + '; or "undetermined" if the record does not say.'
        if options
        else ""
    )
    ask: Ask = {
        # per record and question, so a seeded decider answers each game on its own
        "id": f"ask.{record.get('thread_id', '')}.{stable_seed(question) % 10**8}",
        "role": "control",
        "phase": "ask",
        "round": int(record.get("round", 0)),
        "task": "question",
        "system": render_prompt("control_system"),
        "context": render_events(record.get("events", [])),
        "question": render_prompt("analyze_question", question=quote(question), options=opts),
        "schema": "choice" if options else "answer",
        "fallback": {"choice": "undetermined", "evidence": ""}
        if options
        else {"answer": "undetermined"},
    }
    if options:
        ask["schema_args"] = {"options": options, "quotes": record_quotes(ask["context"])}
    decision = decide_once(ask, model, seed, max_tokens=max_tokens, trace_path=trace_path)
    return {"question": question, **decision["value"], "source": decision["source"]}
