"""A Security Council, written as a held-out plug-in from docs/new-game.md and the public API:
seven members (five permanent, with a veto), one private intelligence briefing a round, private
press, the penholder's draft answered by each other member in turn, a simultaneous vote checked
by the secretary, code adjudication with vetoes, the control's narration. The entry alone."""

from wargraph import Family, Option

_PKG = __name__

FAMILY = Family(
    "security_council",
    scenario_class=f"{_PKG}.world:CouncilScenario",
    graph=f"{_PKG}.graph",
    scenarios=f"{_PKG}.scenarios",
    prompts=f"{_PKG}.prompts",
    description="a Security Council: a private briefing, a draft answered in turn, a vote",
    measures=f"{_PKG}.world:record_measures",
    view_panels=f"{_PKG}.panels:panels",
    play_options=(Option("--majority", "council.majority", "yes votes to adopt", "N"),),
)
