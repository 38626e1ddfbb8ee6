"""WarAgent-style historical country simulations as a LangGraph game.

The game logic lives in `wargraph.worlds.waragent`; this module holds the scenario class
(the `waragent:` section) and the graph.
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from wargraph.scenario import Scenario
from wargraph.worlds.waragent import PROFILE_SECTIONS, Anonymiser, WarAgentConfig


class WarAgentScenario(Scenario):
    """A historical simulation: countries are `players` with six profile sections each."""

    family: str = "waragent"
    waragent: WarAgentConfig

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
        """The scenario with every name replaced by its neutral name (the mapping is kept).

        Idempotent: an already-anonymised scenario (no real names left) comes back unchanged.
        """
        anon = Anonymiser(self.waragent.anonymisation)
        data: dict[str, Any] = self.model_dump(mode="json")
        section = data.pop("waragent")
        mapping = section.pop("anonymisation")
        out = anon.translate(data)
        out["waragent"] = {**anon.translate(section), "anonymisation": mapping}
        out["family"] = self.family  # never translate the family name
        return type(self).model_validate(out)
