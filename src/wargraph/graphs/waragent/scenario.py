"""The WarAgent scenario (country profiles, the `waragent:` section), read from a table with the
game's world, and the opening it sets: the trigger and the profiles, then the first board."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from wargraph.graphs.waragent.anonymise import Anonymiser
from wargraph.graphs.waragent.config import PROFILE_SECTIONS, WarAgentConfig, scale_phrase
from wargraph.graphs.waragent.rounds import Situation, new_world
from wargraph.kernel.scenario import Role, Scenario
from wargraph.kernel.state import make_event
from wargraph.worlds import Opening

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

SETTINGS = ("default", "aggressive", "conservative")


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

    def profile_text(self, country: str) -> str:
        """A country's profile as prompt lines, with the scenario's military override."""
        profile = dict(self.players[country].profile)
        factor = self.waragent.military_scale.get(country)
        if factor is not None:
            extra = scale_phrase(factor)
            profile["military_capability"] = f"{profile['military_capability']} {extra}"
        return "\n".join(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in profile.items())


# --- the table's scenario and world, as WarAgent's ---------------------------------------------


def war(table: Table) -> WarAgentScenario:
    return table.scenario_as(WarAgentScenario)


def world_of(table: Table) -> Situation:
    return Situation.model_validate(table.state["world"]["waragent"])


def world_update(world: Situation) -> dict[str, Any]:
    """The `world` update that stores a WarAgent world."""
    return {"waragent": world.model_dump(mode="json")}


# --- the opening: the trigger and the profiles (round 0, kept by every memory policy) ----------


class Briefing(Opening):
    """Round 0 events in an order that keeps the shared part of every prompt first: the
    setting, the public profiles and the trigger, then each country's private brief and profile.
    The prompts of all countries then share a long prefix that llama.cpp evaluates only once."""

    def open(self, table: Table) -> dict[str, Any]:
        s = war(table)
        cfg = s.waragent
        kernel = list(table.state["events"])
        shared = [e for e in kernel if e["audience"] == ["*"]]
        private = [e for e in kernel if e["audience"] != ["*"]]
        shown = cfg.profiles_shown

        def profile(text: str, audience: list[str], key: str) -> Any:
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
            full = f"Profile of {c}\n{s.profile_text(c)}"
            if shown == "all":
                shared.append(profile(full, ["*"], c))
                continue
            private.append(profile(full, [c], c))
            if shown == "summary":
                policy = s.players[c].profile["key_policy"]
                shared.append(profile(f"{c} in brief: {policy}", ["*"], f"{c}.brief"))
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
        return {"events": shared + private, "world": world_update(world)}
