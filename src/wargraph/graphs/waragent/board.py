"""The board (relations between every pair of countries) and the stick (who is mobilized), how
one action changes a board, and which countries observe it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from wargraph.graphs.waragent.actions import (
    DEFAULT_VISIBILITY,
    NO_RELATION,
    RELATIONS,
    Action,
    split_action,
)

# --- the board and the stick ---------------------------------------------------------------


class Request(BaseModel):
    """A pending request (alliance, treaty) or peace offer, waiting for the receiver's answer."""

    sender: str
    receiver: str
    kind: Literal["alliance", "treaty", "peace"]


def pair_key(a: str, b: str) -> str:
    return "|".join(sorted((a, b)))


class Board(BaseModel):
    """Relations between every pair of countries (the board) plus who is mobilized (the stick).

    A pair can hold several relations at once (an alliance and an old treaty); what it *shows*
    is the one with the highest precedence: war > alliance > peace > treaty > none.
    """

    countries: list[str]
    relations: dict[str, list[str]] = Field(default_factory=dict)
    requests: list[Request] = Field(default_factory=list)
    mobilized: list[str] = Field(default_factory=list)
    declarations: list[tuple[str, str]] = Field(default_factory=list)  # (declarer, target)

    # reading -----------------------------------------------------------------------------
    def active(self, a: str, b: str) -> set[str]:
        return set(self.relations.get(pair_key(a, b), []))

    def has(self, a: str, b: str, kind: str) -> bool:
        return kind in self.active(a, b)

    def relation(self, a: str, b: str) -> str:
        active = self.active(a, b)
        return next((r for r in RELATIONS if r in active), NO_RELATION)

    def partners(self, a: str, kind: str) -> list[str]:
        return [c for c in self.countries if c != a and self.has(a, c, kind)]

    def has_request(self, sender: str, receiver: str, kind: str) -> bool:
        return any(
            r.sender == sender and r.receiver == receiver and r.kind == kind for r in self.requests
        )

    def is_mobilized(self, c: str) -> bool:
        return c in self.mobilized

    def matrix(self) -> list[list[str]]:
        """Shown relation per ordered pair; the diagonal is "self"."""
        return [
            ["self" if a == b else self.relation(a, b) for b in self.countries]
            for a in self.countries
        ]

    def edges(self, kind: str) -> list[tuple[str, str]]:
        """Pairs holding `kind`, in country order."""
        out = []
        for i, a in enumerate(self.countries):
            for b in self.countries[i + 1 :]:
                if self.has(a, b, kind):
                    out.append((a, b))
        return out

    def shown_edges(self, kind: str) -> list[tuple[str, str]]:
        """Pairs whose shown relation is `kind` (an alliance under a war does not count)."""
        return [(a, b) for a, b in self.edges(kind) if self.relation(a, b) == kind]

    def state_key(self) -> tuple[Any, ...]:
        """What the stopping rule compares: relations and the stick (not pending requests)."""
        rels = tuple(sorted((k, tuple(sorted(v))) for k, v in self.relations.items() if v))
        return rels, tuple(sorted(self.mobilized))

    # writing -----------------------------------------------------------------------------
    def add(self, a: str, b: str, kind: str) -> None:
        key = pair_key(a, b)
        kinds = set(self.relations.get(key, [])) | {kind}
        self.relations[key] = [r for r in RELATIONS if r in kinds]

    def remove(self, a: str, b: str, kind: str) -> None:
        key = pair_key(a, b)
        kinds = [r for r in self.relations.get(key, []) if r != kind]
        if kinds:
            self.relations[key] = kinds
        else:
            self.relations.pop(key, None)

    def add_request(self, sender: str, receiver: str, kind: str) -> None:
        if not self.has_request(sender, receiver, kind):
            self.requests.append(
                Request.model_validate({"sender": sender, "receiver": receiver, "kind": kind})
            )

    def drop_request(self, sender: str, receiver: str, kind: str) -> None:
        self.requests = [
            r
            for r in self.requests
            if not (r.sender == sender and r.receiver == receiver and r.kind == kind)
        ]

    def renamed(self, f: Any) -> Board:
        """The same board with every country name passed through `f` (pairs re-keyed)."""
        out = Board(
            countries=[f(c) for c in self.countries], mobilized=[f(c) for c in self.mobilized]
        )
        for key, kinds in self.relations.items():
            a, _, b = key.partition("|")
            for kind in kinds:
                out.add(f(a), f(b), kind)
        out.requests = [
            Request(sender=f(r.sender), receiver=f(r.receiver), kind=r.kind) for r in self.requests
        ]
        out.declarations = [(f(a), f(b)) for a, b in self.declarations]
        return out

    def mobilize(self, c: str) -> None:
        if c not in self.mobilized:
            self.mobilized = [x for x in self.countries if x in {*self.mobilized, c}]


def empty_board(countries: Iterable[str]) -> Board:
    return Board(countries=list(countries))


def apply_action(board: Board, actor: str, action: Action) -> None:
    """Apply one action to a board (the true board or one country's beliefs).

    Permissive on purpose: the secretary has already judged it, and an observer may learn
    of an acceptance without having seen the private request.
    """
    verb, kind = split_action(action.type)
    target = action.target
    if action.type == "general_mobilization":
        board.mobilize(actor)
    elif action.type == "declare_war":
        board.add(actor, target, "war")
        if (actor, target) not in board.declarations:
            board.declarations.append((actor, target))
    elif kind is None:
        return  # wait, send_message: no effect on the board
    elif verb == "request":
        board.add_request(actor, target, kind)
    elif verb == "accept":
        board.drop_request(target, actor, kind)
        board.add(actor, target, kind)
        if kind == "peace":
            board.remove(actor, target, "war")  # a peace agreement ends the war
    elif verb == "reject":
        board.drop_request(target, actor, kind)
    elif verb == "publish":
        board.add(actor, target, kind)
    elif verb == "betray":
        board.remove(actor, target, kind)


# --- visibility ------------------------------------------------------------------------------


def observers(
    actor: str, action: Action, countries: Iterable[str], visibility: Mapping[str, str]
) -> list[str]:
    """Who learns of an action: everyone if public, else the actor and its target."""
    countries = list(countries)
    if visibility.get(action.type, DEFAULT_VISIBILITY.get(action.type)) == "public":
        return countries
    return [c for c in countries if c == actor or c == action.target]
