"""WarAgent-style historical country simulations as a LangGraph game.

Each round: every country acts at once on its own view (`order`); the secretary checks each
proposal against the rules and the country's own board and stick, sends it back with reasons
until it passes, and after `max_revisions` rejections amends it (`secretary_validate`); then the
world applies every action and each country's beliefs take what reached it (`adjudicate`). The
game ends at the round limit or when the board and stick stay unchanged for K rounds.

The game logic lives in `wargraph.worlds.waragent`; this module holds the scenario class (the
`waragent:` section), the phases and the graph.
"""

from __future__ import annotations

import random
from typing import Any

from langgraph.graph import StateGraph
from pydantic import BaseModel, Field, model_validator

from wargraph.deciders import register_schema, stable_seed
from wargraph.graphkit import build_game
from wargraph.prompts import render_prompt
from wargraph.scenario import Role, Scenario, ScenarioError, load_scenario
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table
from wargraph.views import quote
from wargraph.worlds.waragent import (
    NO_TARGET,
    PROFILE_SECTIONS,
    Action,
    Anonymiser,
    WarAgentConfig,
    World,
    action_menu,
    amend,
    apply_round,
    describe_board,
    new_world,
    normalise,
    observers,
    parse_actions,
    proposal_model,
    scale_phrase,
    scripted_proposal,
    should_stop,
    validate,
)

DEFAULT_SCENARIO = "wwi"
SETTINGS = ("default", "aggressive", "conservative")
WAIT = {"actions": [{"type": "wait", "target": NO_TARGET, "message": ""}]}


# --- the scenario ------------------------------------------------------------------------------


class WarAgentScenario(Scenario):
    """A historical simulation: countries are `players` with six profile sections each; the
    `control` seat is the secretary (asked only when `waragent.secretary.kind` is ai or human)."""

    family: str = "waragent"
    control: Role = Field(default_factory=lambda: Role(name="secretary"))
    waragent: WarAgentConfig

    @model_validator(mode="before")
    @classmethod
    def _anonymise_raw(cls, data: Any) -> Any:
        """With `waragent.anonymise`, every name is replaced before validation, so the graph,
        the prompts and the record all use neutral names (the mapping stays for reports).
        Idempotent: a scenario whose countries are already neutral is left alone."""
        if not isinstance(data, dict):
            return data
        section = data.get("waragent")
        if not isinstance(section, dict) or not section.get("anonymise"):
            return data
        mapping = section.get("anonymisation") or {}
        if not mapping or not set(data.get("players") or {}) & set(mapping):
            return data
        try:
            anon = Anonymiser(mapping)
        except ValueError:
            return data  # the section validator reports the bad mapping with its field
        rest = {k: v for k, v in data.items() if k not in ("waragent", "family")}
        body = {k: v for k, v in section.items() if k != "anonymisation"}
        return {
            **anon.translate(rest),
            "family": data.get("family", "waragent"),
            "waragent": {**anon.translate(body), "anonymisation": mapping},
        }

    @model_validator(mode="after")
    def _countries_consistent(self) -> WarAgentScenario:
        if len(self.players) < 2:
            raise ValueError("players: a waragent game needs two or more countries")
        for name, role in self.players.items():
            missing = [s for s in PROFILE_SECTIONS if not role.profile.get(s, "").strip()]
            if missing:
                raise ValueError(
                    f"players.{name}.profile: missing section(s) {missing} "
                    f"(every country needs: {', '.join(PROFILE_SECTIONS)})"
                )
            if role.persona in SETTINGS or not role.persona:
                continue
            raise ValueError(
                f"players.{name}.persona: a country's persona is an agent setting, one of "
                f"{', '.join(SETTINGS)} (got {role.persona!r})"
            )
        unknown = self.waragent.unknown_countries(self.players)
        if unknown:
            raise ValueError(
                f"waragent: unknown country name(s) {unknown} (players: {', '.join(self.players)})"
            )
        return self

    @property
    def countries(self) -> list[str]:
        return list(self.players)

    def anonymised(self) -> WarAgentScenario:
        """This scenario with anonymisation switched on (a no-op if it already is)."""
        data = self.model_dump(mode="json")
        data["waragent"]["anonymise"] = True
        return type(self).model_validate(data)

    def setting_of(self, country: str) -> str:
        """The country's agent setting: its own persona if set, else the scenario's."""
        persona = self.players[country].persona
        return persona if persona in SETTINGS else self.waragent.setting


# --- answer schemas ----------------------------------------------------------------------------


class SecretaryVerdict(BaseModel):
    """The secretary's answer when it is a model or a person (after the rules have passed)."""

    valid: bool
    reason: str = Field(default="", max_length=300)


def _actions_schema(args: dict[str, Any]) -> type[BaseModel]:
    return proposal_model(
        tuple(args.get("countries", ())),
        int(args.get("max_actions", 3)),
        int(args.get("message_chars", 300)),
    )


register_schema("waragent_actions", _actions_schema)
register_schema("waragent_verdict", SecretaryVerdict)


# --- helpers -----------------------------------------------------------------------------------


def _war(table: Table) -> WarAgentScenario:
    s = table.scenario
    if not isinstance(s, WarAgentScenario):
        raise TypeError(f"the waragent graph needs a waragent scenario, not family {s.family!r}")
    return s


def _world(table: Table) -> World:
    return World.model_validate(table.state["world"]["waragent"])


def _dump(actions: list[Action]) -> list[dict[str, str]]:
    return [a.model_dump() for a in actions]


def _load(raw: list[dict[str, Any]]) -> list[Action]:
    return [Action.model_validate(a) for a in raw]


def _render_actions(actions: list[Action]) -> str:
    lines = []
    for a in actions:
        msg = f' "{a.message}"' if a.message.strip() else ""
        lines.append(f"{a.short()}{msg}")
    return "\n".join(lines) or "(none)"


def _profile_text(s: WarAgentScenario, country: str) -> str:
    profile = dict(s.players[country].profile)
    factor = s.waragent.military_scale.get(country)
    if factor is not None:
        profile["military_capability"] = f"{profile['military_capability']} {scale_phrase(factor)}"
    return "\n".join(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in profile.items())


# --- setup: the trigger and the profiles (round 0, kept by every memory policy) ----------------


def opening(scenario: Scenario, update: dict[str, Any]) -> dict[str, Any]:
    """Round 0 events in an order that keeps the shared part of every prompt first: the setting,
    the public profiles and the trigger, then each country's private brief and profile. The
    prompts of all countries then share a long prefix that llama.cpp evaluates only once."""
    s = scenario
    assert isinstance(s, WarAgentScenario)
    cfg = s.waragent
    kernel = list(update["events"])
    shared = [e for e in kernel if e["audience"] == ["*"]]
    private = [e for e in kernel if e["audience"] != ["*"]]
    shown = cfg.profiles_shown

    def profile(c: str, text: str, audience: list[str], key: str) -> Any:
        return make_event(
            round=0,
            phase="setup",
            kind="profile",
            author="scenario",
            text=text,
            audience=audience,
            key=key,
        )

    for c in s.countries:
        full = f"Profile of {c}\n{_profile_text(s, c)}"
        if shown == "all":
            shared.append(profile(c, full, ["*"], c))
            continue
        private.append(profile(c, full, [c], c))
        if shown == "summary":
            policy = s.players[c].profile["key_policy"]
            shared.append(profile(c, f"{c} in brief: {policy}", ["*"], f"{c}.brief"))
    shared.append(
        make_event(
            round=0,
            phase="setup",
            kind="trigger",
            author="scenario",
            text=cfg.trigger_text,
            data={"trigger": cfg.trigger},
        )
    )
    world = new_world(s.countries, cfg.initial_board(s.countries))
    return {"events": shared + private, "world": {"waragent": world.model_dump(mode="json")}}


# --- order: every country acts at once on its own view ---------------------------------------


def _act_id(table: Table, country: str) -> str:
    return f"r{table.round}.order.act.{country}"


def _country_ask(
    table: Table,
    country: str,
    task: str,
    question: str,
    *,
    key: str = "",
    board_for_script: Any = None,
) -> Any:
    s = _war(table)
    cfg = s.waragent
    scripted = None
    if board_for_script is not None:  # revisions: the scripted seat answers with a valid set
        ask_id = f"r{table.round}.{table.state.get('phase', '')}.{task}.{country}.{key}"
        rng = random.Random(stable_seed(table.context.seed, ask_id))
        actions = scripted_proposal(country, board_for_script, s.countries, rng, cfg.max_actions)
        scripted = {"actions": _dump(actions)}
    return table.ask(
        country,
        task,
        key=key,
        # The action list is our own fixed text (no scenario words), so it may sit in the system
        # prompt, where it is part of the prefix every country's prompt shares.
        system=render_prompt(
            f"waragent_system_{s.setting_of(country)}",
            table.variant(country),
            actions=action_menu(),
        ),
        context=table.view_text(country),
        question=question,
        schema="waragent_actions",
        schema_args={
            "countries": s.countries,
            "max_actions": cfg.max_actions,
            "message_chars": cfg.message_chars,
        },
        fallback=WAIT,
        scripted=scripted,
    )


def _common(table: Table, country: str, world: World) -> dict[str, Any]:
    s = _war(table)
    return {
        "country": country,
        "round": table.round,
        "rounds": s.rounds,
        "timestep": s.timestep,
        "countries": ", ".join(c for c in s.countries if c != country),
        "max_actions": s.waragent.max_actions,
        "board": quote(describe_board(world.beliefs[country], country)),
        "analysis": render_prompt(
            f"waragent_analysis_{s.setting_of(country)}", table.variant(country)
        ),
    }


def order(state: GameState, table: Table) -> dict[str, Any]:
    s = _war(table)
    world = _world(table)
    missing = [c for c in s.countries if table.answer(_act_id(table, c)) is None]
    if missing:
        asks = [
            _country_ask(
                table,
                c,
                "act",
                render_prompt(
                    "waragent_act_question", table.variant(c), **_common(table, c, world)
                ),
            )
            for c in missing
        ]
        return {"asks": asks}
    proposals = {c: _dump(_parse(table.answer(_act_id(table, c)))) for c in s.countries}
    sources = {c: table.pending[_act_id(table, c)]["source"] for c in s.countries}
    return {
        "world": {
            "proposals": proposals,
            "attempts": {c: 0 for c in s.countries},
            "status": {c: "pending" for c in s.countries},
            "trail": {c: [{"actions": proposals[c], "source": sources[c]}] for c in s.countries},
        },
        "pending": {CLEAR: True},
    }


def _parse(value: Any) -> list[Action]:
    try:
        return normalise(parse_actions(value))
    except ValueError:
        return []


# --- secretary_validate: rules, revisions, amend ------------------------------------------------


def _revise_id(table: Table, country: str, attempt: int) -> str:
    return f"r{table.round}.secretary_validate.revise.{country}.a{attempt}"


def _review_id(table: Table, country: str, attempt: int) -> str:
    return (
        f"r{table.round}.secretary_validate.review.{_war(table).control.name}.{country}.a{attempt}"
    )


def _secretary_seated(table: Table) -> bool:
    s = _war(table)
    return s.waragent.secretary.kind != "code" or s.control.name in table.context.humans


def _secretary_ask(table: Table, country: str, actions: list[Action], attempt: int, world: World):
    s = _war(table)
    sec = s.control.name
    ask = table.ask(
        sec,
        "review",
        key=f"{country}.a{attempt}",
        system=render_prompt("waragent_secretary_system", table.variant(sec)),
        context=quote(describe_board(world.beliefs[country], country)),
        question=render_prompt(
            "waragent_secretary_question",
            table.variant(sec),
            country=country,
            proposal=quote(_render_actions(actions)),
        ),
        schema="waragent_verdict",
        fallback={"valid": True, "reason": ""},
    )
    if s.waragent.secretary.kind == "human":
        ask["seat"] = {**ask["seat"], "kind": "human"}
    elif s.waragent.secretary.model and sec not in table.context.humans:
        ask["seat"] = {**ask["seat"], "model": s.waragent.secretary.model}
    return ask


def secretary_validate(state: GameState, table: Table) -> dict[str, Any]:
    """Check every pending proposal; ask for revisions with reasons; amend after the limit."""
    s = _war(table)
    cfg = s.waragent
    world = _world(table)
    w = table.state["world"]
    proposals = {c: _load(v) for c, v in w["proposals"].items()}
    attempts = dict(w["attempts"])
    status = dict(w["status"])
    trail = {c: list(v) for c, v in w["trail"].items()}
    notes: dict[str, list[str]] = {c: list(v) for c, v in (w.get("notes") or {}).items()}

    # Take in what came back since the last pass: revisions, and the secretary's verdicts.
    for c in s.countries:
        if status[c] == "revising":
            decision = table.pending.get(_revise_id(table, c, attempts[c]))
            if decision:
                proposals[c] = _parse(decision["value"])
                trail[c].append({"actions": _dump(proposals[c]), "source": decision["source"]})
                status[c] = "pending"

    asks = []
    for c in s.countries:
        if status[c] not in ("pending", "reviewing"):
            continue
        verdict = validate(c, proposals[c], world.beliefs[c], s.countries, cfg.max_actions)
        reasons = verdict.text(proposals[c]) if not verdict.ok else ""
        if not reasons and _secretary_seated(table):
            review = table.pending.get(_review_id(table, c, attempts[c]))
            if review is None:
                asks.append(_secretary_ask(table, c, proposals[c], attempts[c], world))
                status[c] = "reviewing"
                continue
            if not review["value"]["valid"]:
                reasons = (
                    f"- the secretary objects: {review['value'].get('reason') or 'no reason given'}"
                )
        trail[c][-1]["reasons"] = reasons
        if not reasons:
            status[c] = "accepted"
        elif attempts[c] < cfg.secretary.max_revisions:
            attempts[c] += 1
            question = render_prompt(
                "waragent_revise_question",
                table.variant(c),
                **_common(table, c, world),
                proposal=quote(_render_actions(proposals[c])),
                reasons=quote(reasons),
                attempt=attempts[c],
                limit=cfg.secretary.max_revisions,
            )
            asks.append(
                _country_ask(
                    table,
                    c,
                    "revise",
                    question,
                    key=f"a{attempts[c]}",
                    board_for_script=world.beliefs[c],
                )
            )
            status[c] = "revising"
        else:
            proposals[c], notes[c] = amend(
                c,
                proposals[c],
                world.beliefs[c],
                s.countries,
                cfg.max_actions,
                cfg.secretary.ally_at_war,
            )
            status[c] = "amended"

    update_world = {
        "proposals": {c: _dump(v) for c, v in proposals.items()},
        "attempts": attempts,
        "status": status,
        "trail": trail,
        "notes": notes,
    }
    if asks:
        return {"asks": asks, "world": update_world}
    events = [
        _verdict_event(table, c, attempts[c], status[c], notes.get(c, []), trail[c])
        for c in s.countries
    ]
    return {"world": update_world, "events": events, "pending": {CLEAR: True}}


def _verdict_event(table, country, attempts, status, notes, trail) -> Any:
    if status == "amended":
        text = f"The secretary amended your actions after {attempts} rejected revision(s): " + (
            "; ".join(notes) or "nothing to drop"
        )
    elif attempts:
        text = f"The secretary accepted your actions after {attempts} revision(s)."
    else:
        text = "The secretary accepted your actions."
    return make_event(
        round=table.round,
        phase="secretary_validate",
        kind="verdict",
        author=_war(table).control.name,
        text=text,
        audience=[country],
        data={"status": status, "revisions": attempts, "notes": notes, "trail": trail},
        key=country,
    )


# --- adjudicate: the world takes every action; beliefs take what reached them ------------------


def _action_text(actor: str, a: Action) -> str:
    what = a.type.replace("_", " ")
    head = (
        f"{actor}: {what}"
        if a.type in ("wait", "general_mobilization")
        else f"{actor}: {what} -> {a.target}"
    )
    return head + (f'\nMessage: "{a.message.strip()}"' if a.message.strip() else "")


def adjudicate(state: GameState, table: Table) -> dict[str, Any]:
    s = _war(table)
    cfg = s.waragent
    world = _world(table)
    proposals = {c: _load(v) for c, v in table.state["world"]["proposals"].items()}
    new = apply_round(world, proposals, cfg.visibility_map())
    events = []
    for c in s.countries:
        for i, a in enumerate(proposals.get(c, [])):
            if a.type == "wait":
                continue
            seen = observers(c, a, s.countries, cfg.visibility_map())
            events.append(
                make_event(
                    round=table.round,
                    phase="adjudicate",
                    kind="message" if a.type == "send_message" else "action",
                    author=c,
                    text=_action_text(c, a),
                    audience=["*"] if seen == s.countries else seen,
                    data={"action": a.model_dump()},
                    key=str(i),
                )
            )
    update: dict[str, Any] = {
        "world": {
            "waragent": new.model_dump(mode="json"),
            "proposals": {},
            "attempts": {},
            "status": {},
            "trail": {},
            "notes": {},
        },
        "events": events,
        "pending": {CLEAR: True},
    }
    reason = should_stop(new, s.rounds, cfg.stop_unchanged)
    if reason and "unchanged" in reason:
        update["done"] = True
        update["world"]["stopped"] = reason
        events.append(
            make_event(
                round=table.round,
                phase="adjudicate",
                kind="narration",
                author=s.control.name,
                text=f"The game ends: {reason}.",
            )
        )
    return update


# --- the graph ---------------------------------------------------------------------------------


def build(scenario: WarAgentScenario | str | dict[str, Any] = DEFAULT_SCENARIO) -> StateGraph:
    """order -> secretary_validate -> adjudicate, each round, for this scenario's countries."""
    sc = load_scenario(scenario)
    if not isinstance(sc, WarAgentScenario):
        raise ScenarioError(
            f"family: the waragent graph needs family 'waragent' (got {sc.family!r})"
        )
    return build_game(
        {"order": order, "secretary_validate": secretary_validate, "adjudicate": adjudicate},
        roster=list(sc.roles),
        opening=opening,
    )


builder = build()
graph = builder.compile()
