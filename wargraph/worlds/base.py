"""The World interface: a game's rules, which the phase nodes of `nodes/` consult.

A world holds the rules; the nodes hold the rhythm. A phase node asks the world who acts, what
to ask each seat (a `Question`), whether an answer is acceptable, and what the answers do to the
world; it asks the seats itself (fan-out, revisions, collection) and writes the events. A world
never asks anyone and keeps no state of its own: everything it knows is in `table.state`
(`world` holds its engine state), so resumes, forks and replays need nothing else.

`World`'s own methods are the narrative rules (the control narrates; every proposal passes):
a family overrides only what its rules change. See docs/new-game.md for a walk-through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from wargraph.prompts import render_prompt
from wargraph.state import EVERYONE, Event, make_event
from wargraph.views import quote, render_events

if TYPE_CHECKING:
    from wargraph.scenario import Scenario
    from wargraph.table import Table

# The phase kinds a world answers for; a node mounted under another name keeps its kind.
NEGOTIATE, SUMMARIZE, ORDER, SECRETARY, ADJUDICATE = (
    "negotiate",
    "summarize",
    "order",
    "secretary_validate",
    "adjudicate",
)


@dataclass(frozen=True)
class Question:
    """What a node asks one seat: instructions, the seat's context, the question, the answer
    schema (a registry name) and the documented fallback. `task` names the ask in the game's
    language (plan, orders, act, revise ...) and enters its id."""

    task: str
    system: str
    context: str
    question: str
    schema: str
    fallback: dict[str, Any]
    schema_args: dict[str, Any] | None = None
    scripted: dict[str, Any] | None = None
    facts: dict[str, Any] | None = None  # public facts for a bot seat (wargraph.bots)
    reviewable: bool = False
    memory_slot: str | None = None
    max_tokens: int | None = None  # room for the answer to finish (a cut-off JSON is invalid)
    seat_as: str | None = None  # whose seat settings answer (e.g. a team's leader)
    seat: dict[str, Any] | None = None  # overrides of the seat (e.g. the secretary's model)
    notes: bool = True  # show the seat's private notes (False: the context already shows them)
    # The first words of a prose answer (a local model goes on from them: a small model that
    # starts "Azuristan will" writes a plan instead of imitating the quoted context)
    answer_start: str | None = None


@dataclass(frozen=True)
class Check:
    """The secretary's reading of a proposal: the proposal as accepted so far and the reasons
    it is refused (empty: accepted)."""

    accepted: Any
    reasons: list[str] = field(default_factory=list)
    detail: Any = None  # what the world needs to ask for a revision (e.g. refused units)

    @property
    def ok(self) -> bool:
        return not self.reasons


def side_name(name: str) -> str:
    """A seat's name as prose writes it: "azuristan" -> "Azuristan" (a name with capitals
    stays as the scenario spells it)."""
    return name.replace("_", " ").title() if name.islower() else name


FALLBACK_PLAN = {"plan": "No new action this move; we keep our current posture and watch."}


class World:
    """The narrative world (crisis, flows): players state plans, the control narrates, every
    proposal passes. Families subclass it and override the rules they change."""

    name: ClassVar[str] = "narrative"
    config_key: ClassVar[str | None] = None  # the scenario section this world reads, if any
    secretary_name: ClassVar[str] = "secretary"  # author of the secretary's verdicts
    # Everyone's messages go to this recipient; a world may use its engine's name for it.
    everyone: ClassVar[str] = "everyone"
    message_task: ClassVar[str] = "message"  # the task name of a negotiation question
    order_task: ClassVar[str] = "plan"  # the task name of an order question (enters ask ids)
    give_up_status: ClassVar[str] = "dropped"  # a proposal's status after the give-up
    narrates: ClassVar[bool] = True  # the control narrates each round's outcome
    narration_task: ClassVar[str] = "adjudicate"

    # --- setup ---------------------------------------------------------------------------

    def open(self, table: Table) -> dict[str, Any]:
        """Add to the setup update (`table.state`: the scenario's opening events, round 1):
        the initial `world` and events of its own (`events` replaces the opening events)."""
        return {}

    def injects(self, table: Table) -> dict[str, Any]:
        """The update of an `inject` phase: the scenario's injects for this round."""
        events = [
            make_event(
                round=table.round,
                phase=table.phase,
                kind="inject",
                author="control",
                text=inj.text,
                audience=inj.audience,
                key=str(i),
            )
            for i, inj in enumerate(table.scenario.injects)
            if inj.round == table.round
        ]
        return {"events": events}

    # --- who acts and what they see ------------------------------------------------------

    def actors(self, table: Table, phase: str) -> list[str]:
        """Who acts in a phase of this kind, in the file's order. Players on no team act for
        themselves and a team through its leader (negotiate, summarize); orders come from the
        scenario's actors (teams included: their members propose, the leader combines)."""
        s = table.scenario
        if phase == ORDER:
            return list(s.actors)
        return [a if a in s.players else s.teams[a].leader for a in s.actors]

    def private_view(self, table: Table, role: str) -> str:
        """What only `role` knows of the world beyond its events (e.g. its beliefs)."""
        return ""

    def render_view(self, table: Table, role: str, events: list[Event]) -> str:
        """The seat's context from its visible events (already cut by its memory policy)."""
        text = render_events(events, current_round=table.round)
        private = self.private_view(table, role)
        return f"{text}\n\n{private}" if private else text

    def system(self, table: Table, role: str) -> str:
        return render_prompt("player_system", table.variant(role))

    # --- negotiate ---------------------------------------------------------------------------

    def exchanges(self, table: Table) -> int:
        flow = getattr(table.scenario, "flow", None)
        return flow.exchanges if flow else 1

    def message_limit(self, table: Table) -> int:
        return 2

    def recipients(self, table: Table, speaker: str, speakers: list[str]) -> list[str]:
        return [x for x in speakers if x != speaker]

    def message_question(
        self, table: Table, speaker: str, exchange: int, recipients: list[str]
    ) -> Question:
        limit = self.message_limit(table)
        return Question(
            task=self.message_task,
            system=self.system(table, speaker),
            context=table.view_text(speaker),
            question=render_prompt(
                "negotiate_question",
                table.variant(speaker),
                round=table.round,
                exchange=exchange,
                exchanges=self.exchanges(table),
                limit=limit,
                recipients=", ".join(recipients),
            ),
            schema="messages",
            schema_args={"recipients": recipients, "limit": limit},
            fallback={"messages": []},
        )

    def address(self, table: Table, to: str) -> str:
        """A recipient as the world names it (e.g. the engine's upper-case powers)."""
        return to

    def message_data(self, table: Table, exchange: int) -> dict[str, Any]:
        """Extra data a delivered message records (e.g. the engine phase it was sent in)."""
        return {}

    def check_message(self, table: Table, sender: str, to: str, text: str) -> str | None:
        """Press rules: why a message is not delivered (None: delivered)."""
        return None

    def accept_messages(
        self, table: Table, sender: str, messages: list[dict[str, Any]]
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
        """The press rules over one answer: the delivered `(recipient, text)` and the refused
        `(recipient, text, reason)`; at most `message_limit` are delivered."""
        ok: list[tuple[str, str]] = []
        refused: list[tuple[str, str, str]] = []
        limit = self.message_limit(table)
        for m in messages:
            to = self.address(table, str(m.get("to", "")))
            text = str(m.get("text", "")).strip()
            reason = self.check_message(table, sender, to, text)
            if reason is None and len(ok) >= limit:
                reason = f"at most {limit} message(s) per exchange"
            if reason:
                refused.append((to, text, reason))
            else:
                ok.append((to, text))
        return ok, refused

    def delivered(self, table: Table, sent: list[tuple[str, str, str]]) -> dict[str, Any]:
        """World update for the delivered `(sender, recipient, text)` messages of an exchange."""
        return {}

    # --- summarize -------------------------------------------------------------------------

    def diary_questions(self, table: Table, writer: str) -> list[tuple[str, Question]]:
        """What a writer is asked this phase, as `(key, question)` (tasks differ)."""
        return [
            (
                "",
                Question(
                    task="diary",
                    system=self.system(table, writer),
                    context=table.view_text(writer),
                    question=render_prompt(
                        "summarize_question", table.variant(writer), round=table.round
                    ),
                    schema="diary",
                    fallback={"summary": "Nothing new to note."},
                    memory_slot="diary",
                ),
            )
        ]

    def diary_events(
        self, table: Table, writer: str, answers: dict[str, dict[str, Any]]
    ) -> list[Event]:
        """The private entries a writer's answers (by task) make."""
        return [
            make_event(
                round=table.round,
                phase=table.phase,
                kind="summary",
                author=writer,
                text=answers["diary"]["value"]["summary"],
                audience=[writer],
            )
        ]

    # --- order -----------------------------------------------------------------------------

    def order_question(self, table: Table, actor: str, *, team: str | None = None) -> Question:
        s = table.scenario
        as_member = f"You are a member of {team}; propose what {team} should do. " if team else ""
        return Question(
            task=self.order_task,
            system=self.system(table, actor),
            context=table.view_text(actor),
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

    def combine_question(self, table: Table, team: str, proposals: dict[str, str]) -> Question:
        leader = table.scenario.teams[team].leader
        # every line quoted: a multi-line proposal must not put unquoted text in the prompt
        quoted = "\n".join(f"[{who}]\n{quote(text)}" for who, text in proposals.items())
        return Question(
            task="combine",
            system=self.system(table, leader),
            context=table.view_text(leader),
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
        """The proposal an answer makes (stored in `world["proposals"]`, JSON-able)."""
        return value.get("plan", "")

    def order_events(
        self, table: Table, actor: str, proposal: Any, source: str, *, team: str | None = None
    ) -> list[Event]:
        """Events recorded when the orders are in. Plans go to the actor and the control only,
        unless the scenario makes them public; a member's proposal goes to its team."""
        s = table.scenario
        if team is not None:  # a member's proposal to its team
            return [
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="proposal",
                    author=actor,
                    text=proposal,
                    audience=[team],
                    data={"source": source, "team": team},
                    key=team,
                )
            ]
        is_team = actor in s.teams
        public = s.public_plans and actor in s.actors
        data: dict[str, Any] = {"source": source}
        if is_team:
            data["leader"] = s.teams[actor].leader
        return [
            make_event(
                round=table.round,
                phase=table.phase,
                kind="plan" if actor in s.actors else "proposal",
                author=actor,
                text=proposal,
                audience=[EVERYONE] if public else [actor, s.control.name],
                data=data,
            )
        ]

    # --- secretary_validate --------------------------------------------------------------

    def max_revisions(self, table: Table) -> int:
        return 0

    def check(self, table: Table, actor: str, proposal: Any) -> Check:
        """Every proposal passes in a narrative world."""
        return Check(accepted=proposal)

    def revise_question(
        self, table: Table, actor: str, proposal: Any, check: Check, attempt: int
    ) -> Question:
        raise NotImplementedError(f"the {self.name} world refuses nothing, so never asks again")

    def revised(self, table: Table, actor: str, proposal: Any, value: dict[str, Any]) -> Any:
        """The proposal after a revision answer (default: the answer replaces it)."""
        return self.proposal(table, actor, value)

    def give_up(self, table: Table, actor: str, proposal: Any, check: Check) -> tuple[Any, str]:
        """The documented give-up after the last refused revision: what is played, and a note
        saying why (the refused items are dropped unless a world says otherwise)."""
        return check.accepted, "; ".join(check.reasons)

    def secretary_seat(self, table: Table) -> str | None:
        """A seat (model or person) that reviews proposals the rules accept; None: rules only."""
        return None

    def secretary_seats(self, scenario: Scenario) -> list[str]:
        """Every seat `secretary_seat` may name in this scenario (drawn as graph edges)."""
        return []

    def review_question(self, table: Table, actor: str, proposal: Any, attempt: int) -> Question:
        raise NotImplementedError(f"the {self.name} world seats no secretary")

    def verdict_events(
        self,
        table: Table,
        actor: str,
        status: str,
        attempts: int,
        note: str,
        trail: list,
        *,
        proposal: Any = None,
    ) -> list[Event]:
        """What the actor hears from the secretary (default: only after a refusal). `proposal`
        is the one finally played (accepted, or what the give-up made of it); an override that
        does not declare it is called without it."""
        if not attempts and status != self.give_up_status:
            return []
        if status == self.give_up_status:
            text = f"After {attempts} revision(s) the secretary still refused: {note}."
        else:
            text = f"The secretary accepted your proposal after {attempts} revision(s)."
        data = {"status": status, "revisions": attempts, "notes": note, "trail": trail}
        return [self.verdict(table, actor, text, data)]

    def verdict(
        self, table: Table, actor: str, text: str, data: dict[str, Any], *, author: str = ""
    ) -> Event:
        """The secretary's word to one actor about its proposal."""
        return make_event(
            round=table.round,
            phase=table.phase,
            kind="verdict",
            author=author or self.secretary_name,
            text=text,
            audience=[actor],
            data=data,
            key=actor,
        )

    # --- adjudicate --------------------------------------------------------------------------

    def narration_question(self, table: Table, proposals: dict[str, Any]) -> Question:
        """The question to the control when the world `narrates` the outcome."""
        s = table.scenario
        control = s.control.name
        variant = table.variant(control)
        nature = render_prompt("nature_clause", variant) if s.nature else ""
        return Question(
            task=self.narration_task,
            # every seat's system prompt, the control's too: with the public setting after it,
            # the beginning a KV cache shared by all seats keeps from one call to the next
            system=self.system(table, control),
            context=table.view_text(control),
            question=render_prompt(
                "adjudicate_question",
                variant,
                round=table.round,
                rounds=s.rounds,
                timestep=s.timestep,
                nature=nature,
            ),
            schema="adjudication",
            fallback={"narrative": f"The {s.timestep} passes; no side achieves a decisive change."},
            answer_start=f"In move {table.round},",
            reviewable=True,
        )

    def resolve(
        self,
        table: Table,
        proposals: dict[str, Any],
        narration: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """What the proposals (and the control's narration) do: a state update with `events`,
        `world` and, when the game ends, `done`."""
        if narration is None:
            return {}
        return {
            "events": [
                make_event(
                    round=table.round,
                    phase=table.phase,
                    kind="narration",
                    author=table.scenario.control.name,
                    text=narration["value"]["narrative"],
                    data={"source": narration["source"]},
                )
            ]
        }

    # --- after the game ------------------------------------------------------------------

    def debrief(self, table: Table) -> dict[str, Any]:
        """What the `analyze` phase records before the scenario's questions (e.g. scores)."""
        return {}

    # --- evaluation --------------------------------------------------------------------------

    def measures(self, record: dict[str, Any]) -> dict[str, Any]:
        """What evals read from a finished game's record."""
        return {}


class NarrativeWorld(World):
    """Crisis and flows: the control narrates; every proposal passes."""
