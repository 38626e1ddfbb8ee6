"""`Press`: the rules of negotiation: how many exchanges, who may write to whom, what is asked,
and which messages are delivered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.question import Question
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table

# The answer that sends nothing, where a question offers the choice. "pass" is how games saved
# before it was renamed wrote it: small models read "pass" as "pass the message on" and chose it
# after writing a message (7 of 14 SmolLM2 answers; "stay_silent": 0 of 14).
STAY_SILENT = "stay_silent"
SILENT_ACTIONS = frozenset({STAY_SILENT, "pass"})
AUDIENCES = ("both", "private", "public")


@dataclass(frozen=True)
class Press:
    """Open press: every negotiator may write to every other one or to everyone, two messages an
    exchange, for the scenario's number of exchanges."""

    task: str = "message"  # the task of a negotiation question (enters ask ids)
    everyone: str = "everyone"  # the recipient that means everyone (an engine may name its own)
    audience: str = "both"
    """Who a message may go to: "both" (one seat or everyone), "private" (one seat at a time,
    never everyone: whispers only) or "public" (everyone only: statements, no side deals)."""

    def __post_init__(self) -> None:
        if self.audience not in AUDIENCES:
            raise ValueError(f"Press.audience: {self.audience!r} is not one of {AUDIENCES}")

    def exchanges(self, table: Table) -> int:
        flow = getattr(table.scenario, "flow", None)
        return flow.exchanges if flow else 1

    def limit(self, table: Table) -> int:
        """Messages delivered per seat and exchange."""
        return 2

    def recipients(self, table: Table, speaker: str, speakers: list[str]) -> list[str]:
        if self.audience == "public":
            return []  # the question offers everyone alone
        return [x for x in speakers if x != speaker]

    def question(
        self, table: Table, speaker: str, exchange: int, recipients: list[str]
    ) -> Question:
        limit = self.limit(table)
        return Question(
            task=self.task,
            question=render_prompt(
                "negotiate_question",
                table.variant(speaker),
                round=table.round,
                exchange=exchange,
                exchanges=self.exchanges(table),
                limit=limit,
                recipients=", ".join(recipients),
                addressing=self._addressing(recipients),
            ),
            schema="messages",
            schema_args={
                "recipients": recipients,
                "limit": limit,
                # only when it differs from the default: records of open press stay as they were
                **({"everyone": False} if self.audience == "private" else {}),
            },
            fallback={"messages": []},
        )

    def _addressing(self, recipients: list[str]) -> str:
        """Who the question says a message may go to, as its schema offers it."""
        if self.audience == "public":
            return f"each to {self.everyone} (this press is public)"
        seats = ", ".join(recipients)
        if self.audience == "private":
            return f"each to one seat ({seats}); nothing goes to {self.everyone}"
        return f"each to one seat ({seats}) or to {self.everyone}"

    def address(self, table: Table, to: str) -> str:
        """A recipient as the world names it (e.g. the engine's upper-case powers)."""
        return to

    def data(self, table: Table, exchange: int) -> dict[str, Any]:
        """Extra data a delivered message records (e.g. the engine phase it was sent in)."""
        return {}

    def refusal(self, table: Table, sender: str, to: str, text: str) -> str | None:
        """Why one message is not delivered (None: delivered)."""
        return None

    def said(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages an answer sends: none when it chose to stay silent."""
        if answer.get("action") in SILENT_ACTIONS:
            return []
        return list(answer.get("messages") or [])

    def accept(
        self, table: Table, sender: str, messages: list[dict[str, Any]]
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
        """The press rules over one answer: the delivered `(recipient, text)` and the refused
        `(recipient, text, reason)`; at most `limit` are delivered."""
        ok: list[tuple[str, str]] = []
        refused: list[tuple[str, str, str]] = []
        limit = self.limit(table)
        for m in messages:
            to = self.address(table, str(m.get("to", "")))
            text = str(m.get("text", "")).strip()
            reason = self._audience_refusal(to) or self.refusal(table, sender, to, text)
            if reason is None and len(ok) >= limit:
                reason = f"at most {limit} message(s) per exchange"
            if reason:
                refused.append((to, text, reason))
            else:
                ok.append((to, text))
        return ok, refused

    def _audience_refusal(self, to: str) -> str | None:
        if self.audience == "private" and to == self.everyone:
            return "this press is private: write to one seat at a time"
        if self.audience == "public" and to != self.everyone:
            return f"this press is public: every message goes to {self.everyone}"
        return None

    def delivered(self, table: Table, sent: list[tuple[str, str, str]]) -> dict[str, Any]:
        """World update for the delivered `(sender, recipient, text)` messages of an exchange."""
        return {}
