"""Ground truth that history supports: for each historical scenario, a game in which every
country takes exactly the recorded actions (dated in the scenario file, round by round)
scores 1.0 on every accuracy measure, and the same game with every war reversed does not.

These are real games: the countries are scripted people answering the seat's interrupt, the
secretary's rules judge every proposal (and send it back when an alliance obligation is
unmet, as history often left them), the world adjudicates, and the scores come from the
record the game writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wargraph.evals.waragent import load_run, score_run
from wargraph.graphs.waragent.rules import Situation
from wargraph.kernel.context import GameContext
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.runner import play

# round -> country -> actions, as (type, target) pairs. Rounds follow each file's window.
Plan = dict[int, dict[str, list[tuple[str, str]]]]
MOB = ("general_mobilization", "none")

# wwi.yaml: rounds of one week from 28 June 1914 (round 4 = 20-26 July, 5 = 27 July-2 August,
# 6 = 3-9 August); rounds 1-3 are quiet (the "blank cheque" of 5 July was words, not acts).
WWI: Plan = {
    4: {
        "Austria-Hungary": [("send_message", "Serbia")],  # the ultimatum, 23 July
        "Serbia": [MOB],  # 25 July
        "Ottoman Empire": [("request_alliance", "German Empire")],  # Enver's offer, 22 July
    },
    5: {
        "Austria-Hungary": [MOB, ("declare_war", "Serbia")],  # 31 July; 28 July
        "Russia": [MOB],  # 30 July
        "Belgium": [MOB],  # 31 July
        "German Empire": [
            MOB,  # 1 August
            ("declare_war", "Russia"),  # 1 August
            ("accept_alliance", "Ottoman Empire"),  # signed 2 August
        ],
        "France": [MOB],  # 1 August
        "Ottoman Empire": [MOB],  # 2-3 August
    },
    6: {
        "German Empire": [("declare_war", "France"), ("declare_war", "Belgium")],  # 3, 4 August
        "Britain": [MOB, ("declare_war", "German Empire")],  # 4 August
        "Austria-Hungary": [("declare_war", "Russia")],  # 6 August
        "Serbia": [("declare_war", "German Empire")],  # 6 August
    },
}

# wwii.yaml: rounds of three days from 1 September 1939 (round 1 = 1-3 September, round 3 =
# 7-9 September, round 6 = 16-18 September).
WWII: Plan = {
    1: {
        "Britain": [MOB, ("declare_war", "Germany")],  # 1 September; 3 September
        "France": [MOB, ("declare_war", "Germany")],  # 1 September; 3 September
    },
    3: {"Soviet Union": [MOB]},  # reservists called up in early September
    6: {
        # 17 September: the Soviet note declared the treaties with Poland void, then invaded.
        "Soviet Union": [("betray_treaty", "Poland"), ("declare_war", "Poland")],
    },
}

# warring_states.yaml: four seasons of 318 BC. Chu and Qi are uncertain and stay still here.
WARRING_STATES: Plan = {
    1: {
        "Wei": [
            ("request_alliance", "Han"),
            ("request_alliance", "Zhao"),
            ("request_alliance", "Yan"),
        ]
    },
    2: {
        "Wei": [MOB],
        "Han": [("accept_alliance", "Wei"), MOB],
        "Zhao": [("accept_alliance", "Wei"), MOB],
        "Yan": [("accept_alliance", "Wei"), MOB],
    },
    3: {
        "Wei": [("declare_war", "Qin")],
        "Han": [("declare_war", "Qin")],
        "Zhao": [("declare_war", "Qin")],
        "Yan": [("declare_war", "Qin")],
        "Qin": [MOB],
    },
}

PLANS = {"wwi": WWI, "wwii": WWII, "warring_states": WARRING_STATES}
ACCURACY = ["alliance_ami", "alliance_nmi", "war_jaccard", "mobilization_jaccard"]


def reversed_wars(plan: Plan) -> Plan:
    """The same plan with every declaration made by its target against its declarer."""
    out: Plan = {}
    for rnd, by_country in plan.items():
        out[rnd] = {c: [a for a in acts if a[0] != "declare_war"] for c, acts in by_country.items()}
        for country, acts in by_country.items():
            for kind, target in acts:
                if kind == "declare_war":
                    out[rnd].setdefault(target, []).append(("declare_war", country))
    return out


def _actions(acts: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [
        {"type": t, "target": target, "message": "By order." if t == "send_message" else ""}
        for t, target in acts
    ]


def play_plan(
    tmp_path: Path, name: str, plan: Plan, label: str, overrides: tuple[str, ...] = ()
) -> tuple[Situation, dict[str, Any]]:
    """Play the scenario with every country a scripted person following `plan` (asked again
    after a rejection, it proposes the same actions: the secretary then amends, waiving the
    unmet obligation). Returns the final world and the run's scores from its record."""
    countries = list(load_scenario(name).players)

    def people(payload: dict[str, Any]) -> Any:
        acts = plan.get(payload["round"], {}).get(payload["seat"], [])
        return {"actions": _actions(acts or [("wait", "none")])}

    out = tmp_path / label
    result = play(
        name,
        overrides=list(overrides),
        context=GameContext(model="scripted", humans=countries),
        db=None,
        out_dir=out,
        human_io=people,
    )
    assert result.finished and not result.values.get("error")
    world = Situation.model_validate(result.values["world"]["waragent"])
    # The scoring code of `wargraph eval waragent` and of experiments, on the written record
    # (eval_waragent itself, with its figures, is tested in test_waragent_eval.py).
    return world, score_run(load_run(out))


def applied(world: Situation) -> dict[int, dict[str, list[tuple[str, str]]]]:
    """What the world actually applied, per round and country, waits left out."""
    out: dict[int, dict[str, list[tuple[str, str]]]] = {}
    for log in world.history[1:]:
        for country, acts in log.actions.items():
            kept = [(a.type, a.target) for a in acts if a.type != "wait"]
            if kept:
                out.setdefault(log.round, {})[country] = kept
    return out


def _sorted(plan: Plan) -> dict[int, dict[str, list[tuple[str, str]]]]:
    return {r: {c: sorted(a) for c, a in v.items() if a} for r, v in plan.items() if v}


@pytest.mark.parametrize("name", list(PLANS))
def test_the_recorded_actions_score_one_on_every_measure(tmp_path, name):
    scenario = load_scenario(name)
    world, scores = play_plan(tmp_path, name, PLANS[name], "history")
    # The game took exactly the recorded actions, over exactly the window's rounds.
    assert world.round == scenario.rounds
    got = {r: {c: sorted(a) for c, a in v.items()} for r, v in applied(world).items()}
    assert got == _sorted(PLANS[name])
    for measure in ACCURACY:
        assert scores[measure] == pytest.approx(1.0), (measure, scores)
    truth = scenario.waragent.ground_truth
    if set(scenario.waragent.great_powers) & set(truth.uncertain):
        assert scores["global_war_match"] is None  # history cannot say (Chu and Qi)
    else:
        assert scores["global_war_match"] == 1.0


@pytest.mark.parametrize("name", list(PLANS))
def test_every_war_reversed_scores_low(tmp_path, name):
    # The Warring States reversal puts four declarations on Qin in one season.
    overrides = ("waragent.max_actions=5",) if name == "warring_states" else ()
    plan = reversed_wars(PLANS[name])
    world, scores = play_plan(tmp_path, name, plan, "reversed", overrides)
    assert _sorted(plan) == {
        r: {c: sorted(a) for c, a in v.items()} for r, v in applied(world).items()
    }
    # Wars are directed: B declaring war on A does not match A declaring war on B.
    assert scores["war_jaccard"] == 0.0
    # Only the wars moved: alliances and mobilizations still agree with history.
    assert scores["alliance_ami"] == pytest.approx(1.0)
    assert scores["mobilization_jaccard"] == pytest.approx(1.0)


def test_an_uncertain_country_is_neither_credited_nor_penalised(tmp_path):
    # The Chu account: King Huai leads the coalition and Chu attacks Qin too. Chu is
    # `uncertain`, so this run scores exactly as the run in which Chu stays home.
    plan: Plan = {r: dict(v) for r, v in WARRING_STATES.items()}
    plan[1] = {**plan[1], "Chu": [("request_alliance", "Wei")]}
    plan[2] = {**plan[2], "Wei": [MOB, ("accept_alliance", "Chu")], "Chu": [MOB]}
    plan[3] = {**plan[3], "Chu": [("declare_war", "Qin")]}
    world, scores = play_plan(tmp_path, "warring_states", plan, "chu")
    assert ("Chu", "Qin") in world.true.declarations and "Chu" in world.true.mobilized
    for measure in ACCURACY:
        assert scores[measure] == pytest.approx(1.0), (measure, scores)


def test_the_opening_board_holds_the_initial_state(tmp_path):
    # 1939: the invasion of Poland and the war in China are on the board at round 0, as
    # relations, not as declarations a run made; the alliances in force are there too.
    world, scores = play_plan(tmp_path, "wwii", {}, "idle", ("rounds=1",))
    opening = world.history[0].board
    assert opening.relation("Germany", "Poland") == "war"
    assert opening.relation("Japan", "China") == "war"
    assert opening.relation("Britain", "Poland") == "alliance"
    assert opening.relation("Germany", "Soviet Union") == "treaty"
    assert opening.declarations == [] and world.true.declarations == []
    assert set(opening.mobilized) == {"Germany", "Poland", "Japan", "China"}
    # A run that does nothing: no war or mobilization credited for the initial state, while
    # the opening board's own alliance agreement is reported apart from the run's.
    assert scores["war_jaccard"] == 0.0 and scores["mobilization_jaccard"] == 0.0
    assert scores["initial_alliance_ami"] == pytest.approx(1.0)
