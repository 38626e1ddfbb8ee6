"""`Orders`: what an actor is asked in `order`, how a team combines its members' proposals, what
an answer proposes and which events record it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.question import ORDER, Question, side_name
from wargraph.kernel.state import EVERYONE, Event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

FALLBACK_PLAN = {"plan": "No new action this move; we keep our current posture and watch."}
TURNS = ("", "in_turn", "others")


def in_turn(table: Table) -> str:
    """The round's seat in turn: the seats the cast has acting (its actors of `order`, in their
    order: a seat the cast removed, an eliminated player, is skipped), one a round, round 1 the
    first (a penholder, a proposer)."""
    seats = table.world.cast.actors(table, ORDER)
    if not seats:
        raise ValueError("in_turn: the cast has no seat acting this round")
    return seats[(table.round - 1) % len(seats)]


@dataclass(frozen=True)
class Orders:
    """Free-text plans: each actor states one; a team's members propose and its leader combines.
    Plans go to the actor and the control only, unless the scenario makes them public."""

    task: str = "plan"  # the default task of an order question (enters ask ids)
    sequential: bool = False
    """Seats answer one at a time in the order of `actors` (then team members, team by team):
    each answer's `events` are recorded before the next seat is asked, so the next seat's view
    (and `table.events` in `question`) shows the answers before it, as far as their audiences
    allow. False: every actor answers at once, on the same view."""
    kind: str = "plan"
    """The kind of the event an actor's answer makes (`draft`, `vote` ...; a team member's
    proposal to its team is always a `proposal`)."""
    public: bool | None = None
    """Whether that event is public; None: as the scenario's `public_plans` says (by default
    the actor and the control see it)."""
    turn: str = ""
    """Who acts in a turn-based round: "in_turn" the round's seat in turn (`in_turn`), "others"
    the cast's other actors; "": the cast's actors of `order`."""

    def __post_init__(self) -> None:
        if self.turn not in TURNS:
            raise ValueError(f"Orders.turn: {self.turn!r} is not one of {TURNS}")

    def actors(self, table: Table) -> list[str]:
        """Who acts at this mount (default: the cast's actors of `order`, or by `turn`)."""
        if self.turn == "in_turn":
            return [in_turn(table)]
        if self.turn == "others":
            first = in_turn(table)
            return [p for p in table.world.cast.actors(table, ORDER) if p != first]
        return table.world.cast.actors(table, ORDER)

    def question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        s = table.scenario
        as_member = f"You are a member of {team}; propose what {team} should do. " if team else ""
        return Question(
            task=self.task,
            question=render_prompt(
                "plan_question",
                table.variant(actor),
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                as_member=as_member,
                side=side_name(team or actor),
            ),
            schema="plan",
            fallback=FALLBACK_PLAN,
            answer_start=f"{side_name(team or actor)} will",
        )

    def prepare(self, table: Table) -> None:
        """Compute ahead what `question` will need that depends only on the world's state, not
        on the record (each actor's legal orders, an answer model per position): called on a
        background thread while the seats of an earlier step of the round wait for a model
        (`wargraph.kernel.ahead`), so the order step finds it in the world's caches. Warm caches
        only: `question` must give the same without it. Default: nothing."""

    def combine_question(self, table: Table, team: str, proposals: dict[str, str]) -> Question:
        # every line quoted: a multi-line proposal must not put unquoted text in the prompt
        quoted = "\n".join(f"[{who}]\n{quote(text)}" for who, text in proposals.items())
        leader = table.scenario.teams[team].leader
        return Question(
            task="combine",
            question=render_prompt(
                "combine_question",
                table.variant(leader),
                team=team,
                timestep=table.scenario.timestep,
                proposals=quoted,
            ),
            schema="plan",
            fallback={"plan": next(iter(proposals.values()), "")},
        )

    def proposal(self, table: Table, actor: str, value: dict[str, Any]) -> Any:
        """The proposal an answer makes (kept in `world["proposals"]`, JSON-able): its `plan`,
        or the one value of a one-field answer (a vote, an answer)."""
        if "plan" not in value and len(value) == 1:
            return next(iter(value.values()))
        return value.get("plan", "")

    def update(self, table: Table, proposals: dict[str, Any]) -> dict[str, Any]:
        """What the mount writes to `world` once its orders are in, beside the round record
        (`proposals`: this mount's, by seat; default nothing). Keys are the world's own (a
        round record name, `wargraph.kernel.record.ROUND_KEYS`, is refused); a shallow merge,
        kept across rounds until a phase writes the key again."""
        return {}

    def events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        """Events recorded when the orders are in (a member's proposal goes to its team)."""
        s = table.scenario
        if team is not None:
            return [
                table.event(
                    kind="proposal",
                    author=actor,
                    text=proposal,
                    audience=[team],
                    data={"source": source, "team": team},
                    key=team,
                )
            ]
        public = (s.public_plans if self.public is None else self.public) and actor in s.actors
        data: dict[str, Any] = {"source": source}
        if actor in s.teams:
            data["leader"] = s.teams[actor].leader
        return [
            table.event(
                kind=self.kind if actor in s.actors else "proposal",
                author=actor,
                text=proposal,
                audience=[EVERYONE] if public else [actor, s.control.name],
                data=data,
            )
        ]
