"""The WarAgent scenario (country profiles, the `waragent:` section) and the World that plays it:
every country acts at once on its own beliefs, the secretary checks each proposal against the
rules and the country's board and stick (revisions, then amend), and the world applies every
action, each country's beliefs taking what reached it (the rules: the package's other modules)."""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, Field, model_validator

from wargraph.deciders import register_schema, stable_seed
from wargraph.prompts import render_prompt
from wargraph.scenario import Role, Scenario
from wargraph.state import make_event
from wargraph.table import Table
from wargraph.views import quote
from wargraph.worlds import base
from wargraph.worlds.base import Check, Question
from wargraph.worlds.waragent.actions import NO_TARGET, Action, parse_actions, proposal_model
from wargraph.worlds.waragent.anonymise import Anonymiser
from wargraph.worlds.waragent.board import observers
from wargraph.worlds.waragent.config import PROFILE_SECTIONS, WarAgentConfig, scale_phrase
from wargraph.worlds.waragent.prompt_text import action_menu, describe_board
from wargraph.worlds.waragent.rounds import World, apply_round, new_world, should_stop
from wargraph.worlds.waragent.scripted import scripted_proposal
from wargraph.worlds.waragent.secretary import amend, normalise, validate

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


def _opening(scenario: Scenario, update: dict[str, Any]) -> dict[str, Any]:
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


# --- the world ---------------------------------------------------------------------------------


def _parse(value: Any) -> list[dict[str, str]]:
    try:
        return _dump(normalise(parse_actions(value)))
    except ValueError:
        return []


def _action_text(actor: str, a: Action) -> str:
    what = a.type.replace("_", " ")
    head = (
        f"{actor}: {what}"
        if a.type in ("wait", "general_mobilization")
        else f"{actor}: {what} -> {a.target}"
    )
    return head + (f'\nMessage: "{a.message.strip()}"' if a.message.strip() else "")


class WarAgentWorld(base.World):
    """Board and stick, nineteen actions, a secretary that validates, beliefs per country."""

    name = "waragent"
    order_task = "act"
    give_up_status = "amended"
    narrates = False

    def open(self, table: Table) -> dict[str, Any]:
        return _opening(table.scenario, table.state)

    def actors(self, table: Table, phase: str) -> list[str]:
        return _war(table).countries

    def private_view(self, table: Table, role: str) -> str:
        world = _world(table)
        if role not in world.beliefs:
            return ""
        board = quote(describe_board(world.beliefs[role], role))
        return f"What you know now (your board and stick):\n{board}"

    def system(self, table: Table, role: str) -> str:
        s = _war(table)
        # The action list is our own fixed text (no scenario words), so it may sit in the system
        # prompt, where it is part of the prefix every country's prompt shares.
        return render_prompt(
            f"waragent_system_{s.setting_of(role)}", table.variant(role), actions=action_menu()
        )

    def _common(self, table: Table, country: str) -> dict[str, Any]:
        s = _war(table)
        return {
            "country": country,
            "round": table.round,
            "rounds": s.rounds,
            "timestep": s.timestep,
            "countries": ", ".join(c for c in s.countries if c != country),
            "max_actions": s.waragent.max_actions,
            "analysis": render_prompt(
                f"waragent_analysis_{s.setting_of(country)}", table.variant(country)
            ),
        }

    def _question(
        self, table: Table, country: str, task: str, question: str, scripted: Any = None
    ) -> Question:
        cfg = _war(table).waragent
        return Question(
            task=task,
            system=self.system(table, country),
            context=table.view_text(country),
            question=question,
            schema="waragent_actions",
            schema_args={
                "countries": _war(table).countries,
                "max_actions": cfg.max_actions,
                "message_chars": cfg.message_chars,
            },
            fallback=WAIT,
            scripted=scripted,
        )

    def order_question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        text = render_prompt(
            "waragent_act_question", table.variant(actor), **self._common(table, actor)
        )
        return self._question(table, actor, self.order_task, text)

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        return _parse(value)

    def order_events(self, table, actor, proposal, source, *, team=None) -> list:
        return []  # actions become events when the world applies them

    def max_revisions(self, table: Table) -> int:
        return _war(table).waragent.secretary.max_revisions

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        s = _war(table)
        actions = _load(proposal)
        beliefs = _world(table).beliefs[actor]
        verdict = validate(actor, actions, beliefs, s.countries, s.waragent.max_actions)
        return Check(accepted=proposal, reasons=[] if verdict.ok else [verdict.text(actions)])

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        s = _war(table)
        text = render_prompt(
            "waragent_revise_question",
            table.variant(actor),
            **self._common(table, actor),
            proposal=quote(_render_actions(_load(proposal))),
            reasons=quote("\n".join(r if r.startswith("- ") else f"- {r}" for r in check.reasons)),
            attempt=attempt,
            limit=s.waragent.secretary.max_revisions,
        )
        # the scripted seat answers a revision with a valid set, so scripted games move on
        ask_id = table.ask_id("revise", actor, f"a{attempt}")
        rng = random.Random(stable_seed(table.context.seed, ask_id))
        board = _world(table).beliefs[actor]
        valid = scripted_proposal(actor, board, s.countries, rng, s.waragent.max_actions)
        return self._question(table, actor, "revise", text, scripted={"actions": _dump(valid)})

    def revised(self, table: Table, actor: str, proposal: Any, value: dict[str, Any]) -> Any:
        return _parse(value)

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        s = _war(table)
        cfg = s.waragent
        kept, notes = amend(
            actor,
            _load(proposal),
            _world(table).beliefs[actor],
            s.countries,
            cfg.max_actions,
            cfg.secretary.ally_at_war,
        )
        return _dump(kept), "; ".join(notes) or "nothing to drop"

    def secretary_seat(self, table: Table) -> str | None:
        s = _war(table)
        seated = s.waragent.secretary.kind != "code" or s.control.name in table.context.humans
        return s.control.name if seated else None

    def secretary_seats(self, scenario: Scenario) -> list[str]:
        return [scenario.control.name]

    def review_question(self, table: Table, actor: str, proposal: Any, attempt: int) -> Question:
        s = _war(table)
        sec = s.control.name
        board = quote(describe_board(_world(table).beliefs[actor], actor))
        seat: dict[str, Any] | None = None
        if s.waragent.secretary.kind == "human":
            seat = {"kind": "human"}
        elif s.waragent.secretary.model and sec not in table.context.humans:
            seat = {"model": s.waragent.secretary.model}
        return Question(
            task="review",
            system=render_prompt("waragent_secretary_system", table.variant(sec)),
            context=table.view_text(sec),
            question=render_prompt(
                "waragent_secretary_question",
                table.variant(sec),
                country=actor,
                board=board,
                proposal=quote(_render_actions(_load(proposal))),
            ),
            schema="waragent_verdict",
            fallback={"valid": True, "reason": ""},
            seat=seat,
        )

    def verdict_events(self, table, actor, status, attempts, note, trail) -> list:
        if status == self.give_up_status:
            text = (
                f"The secretary amended your actions after {attempts} rejected revision(s): {note}"
            )
        elif attempts:
            text = f"The secretary accepted your actions after {attempts} revision(s)."
        else:
            text = "The secretary accepted your actions."
        data = {"status": status, "revisions": attempts, "notes": note, "trail": trail}
        return [self.verdict(table, actor, text, data, author=_war(table).control.name)]

    def resolve(
        self, table: Table, proposals: dict[str, Any], narration: dict[str, Any] | None
    ) -> dict[str, Any]:
        s = _war(table)
        cfg = s.waragent
        world = _world(table)
        actions = {c: _load(v) for c, v in proposals.items()}
        new = apply_round(world, actions, cfg.visibility_map())
        events = []
        for c in s.countries:
            for i, a in enumerate(actions.get(c, [])):
                if a.type == "wait":
                    continue
                seen = observers(c, a, s.countries, cfg.visibility_map())
                events.append(
                    make_event(
                        round=table.round,
                        phase=table.phase,
                        kind="message" if a.type == "send_message" else "action",
                        author=c,
                        text=_action_text(c, a),
                        audience=["*"] if seen == s.countries else seen,
                        data={"action": a.model_dump()},
                        key=str(i),
                    )
                )
        update: dict[str, Any] = {"world": {"waragent": new.model_dump(mode="json")}}
        reason = should_stop(new, s.rounds, cfg.stop_unchanged)
        if reason and "unchanged" in reason:
            update["done"] = True
            update["world"]["stopped"] = reason
            events.append(
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="narration",
                    author=s.control.name,
                    text=f"The game ends: {reason}.",
                )
            )
        update["events"] = events
        return update
