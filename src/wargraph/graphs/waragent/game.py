"""The WarAgent game: its scenario and the World that plays it. Every country acts at once on
its own beliefs (`countries`, `orders`), the secretary holds each proposal to the rules and the
country's board and stick (`secretariat`: revisions, then amend), and the round applies every
action, each country's beliefs taking what reached it (`resolution`). The rules themselves are
the package's framework-free modules."""

from __future__ import annotations

from wargraph.graphs.waragent.countries import Countries
from wargraph.graphs.waragent.orders import WAIT, ActionOrders
from wargraph.graphs.waragent.resolution import SimultaneousRound
from wargraph.graphs.waragent.scenario import SETTINGS, Briefing, WarAgentScenario
from wargraph.graphs.waragent.secretariat import RulesSecretary, SecretaryVerdict
from wargraph.worlds import World

__all__ = ["SETTINGS", "WAIT", "WARAGENT", "SecretaryVerdict", "WarAgentScenario"]

WARAGENT = World(
    "waragent",
    cast=Countries(),
    opening=Briefing(),
    orders=ActionOrders(),
    secretary=RulesSecretary(),
    resolution=SimultaneousRound(),
)
