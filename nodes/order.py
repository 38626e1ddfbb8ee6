"""`order`: every actor states its move at once; teams' members propose and leaders combine,
innermost teams first. Plans go to the actor and the control only, unless the scenario makes
them public."""

from __future__ import annotations

from typing import Any

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.deciders import Ask
from wargraph.prompts import render_prompt
from wargraph.state import CLEAR, GameState, make_event
from wargraph.table import Table
from wargraph.views import quote

FALLBACK_PLAN = {"plan": "No new action this move; we keep our current posture and watch."}


def _plan_ask(table: Table, role: str, team: str | None) -> Ask:
    s = table.scenario
    as_member = f"You are a member of {team}; propose what {team} should do. " if team else ""
    return table.ask(
        role,
        "plan",
        key=team or "",
        system=render_prompt("player_system", table.variant(role)),
        context=table.view_text(role),
        question=render_prompt(
            "plan_question",
            table.variant(role),
            round=table.round,
            rounds=s.rounds,
            timestep=s.timestep,
            as_member=as_member,
        ),
        schema="plan",
        fallback=FALLBACK_PLAN,
    )


def _combine_ask(table: Table, team: str, proposals: dict[str, str]) -> Ask:
    leader = table.scenario.teams[team].leader
    # every line quoted: a multi-line proposal must not put unquoted text in the leader's prompt
    quoted = "\n".join(f"[{who}]\n{quote(text)}" for who, text in proposals.items())
    return table.ask(
        leader,
        "combine",
        key=team,
        system=render_prompt("player_system", table.variant(leader)),
        context=table.view_text(leader),
        question=render_prompt(
            "combine_question",
            table.variant(leader),
            team=team,
            timestep=table.scenario.timestep,
            proposals=quoted,
        ),
        schema="plan",
        fallback={"plan": next(iter(proposals.values()), FALLBACK_PLAN["plan"])},
    )


def _phase(table: Table) -> str:
    """Ids follow the phase this node runs as, so a family may name it `respond` or `order`."""
    return table.state.get("phase") or "order"


def _plan_id(table: Table, role: str, team: str | None) -> str:
    return f"r{table.round}.{_phase(table)}.plan.{role}" + (f".{team}" if team else "")


def _combine_id(table: Table, team: str) -> str:
    return f"r{table.round}.{_phase(table)}.combine.{table.scenario.teams[team].leader}.{team}"


def team_plan(table: Table, team: str) -> str | None:
    value = table.answer(_combine_id(table, team))
    return value["plan"] if value else None


def order(state: GameState, table: Table) -> dict[str, Any]:
    s = table.scenario
    players_for = [(p, None) for p in s.actors if p in s.players]
    for tname, team in s.teams.items():
        players_for += [(m, tname) for m in team.members if m in s.players]
    missing = [(r, t) for r, t in players_for if table.answer(_plan_id(table, r, t)) is None]
    if missing:
        return {"asks": [_plan_ask(table, r, t) for r, t in missing]}

    # Teams combine bottom-up: a team is asked once all of its sub-teams have their plans.
    for depth in range(max((s.team_depth(t) for t in s.teams), default=-1) + 1):
        asks = []
        for tname, team in s.teams.items():
            if s.team_depth(tname) != depth or team_plan(table, tname) is not None:
                continue
            proposals = {}
            for m in team.members:
                if m in s.players:
                    proposals[m] = table.answer(_plan_id(table, m, tname))["plan"]
                else:
                    proposals[m] = team_plan(table, m) or ""
            asks.append(_combine_ask(table, tname, proposals))
        if asks:
            return {"asks": asks}

    return {"events": _plan_events(table, players_for), "pending": {CLEAR: True}}


def _plan_events(table: Table, players_for: list[tuple[str, str | None]]) -> list:
    s = table.scenario
    events = []
    for role, team in players_for:
        decision = table.pending[_plan_id(table, role, team)]
        text = decision["value"]["plan"]
        if team is None:
            audience = ["*"] if s.public_plans else [role, s.control.name]
            kind = "plan"
        else:
            audience, kind = [team], "proposal"
        events.append(
            make_event(
                round=table.round,
                phase=_phase(table),
                kind=kind,
                author=role,
                text=text,
                audience=audience,
                data={"source": decision["source"], "team": team}
                if team
                else {"source": decision["source"]},
                key=team or "",
            )
        )
    for tname in s.teams:
        decision = table.pending[_combine_id(table, tname)]
        is_actor = tname in s.actors
        audience = ["*"] if (s.public_plans and is_actor) else [tname, s.control.name]
        events.append(
            make_event(
                round=table.round,
                phase=_phase(table),
                kind="plan" if is_actor else "proposal",
                author=tname,
                text=decision["value"]["plan"],
                audience=audience,
                data={"source": decision["source"], "leader": s.teams[tname].leader},
            )
        )
    return events
