"""The secretary's rules: `validate` gives a Verdict with reasons per action, `normalise` tidies
untargeted actions, and `amend` drops what is invalid (within the action limit) so the game
always moves on."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from wargraph.graphs.waragent.actions import (
    ACTION_TYPES,
    NO_TARGET,
    UNTARGETED,
    Action,
    split_action,
)
from wargraph.graphs.waragent.board import Board


class Verdict(BaseModel):
    """The secretary's judgement: reasons per action (empty = valid) and for the whole set."""

    action_reasons: list[list[str]] = Field(default_factory=list)
    general: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.general and not any(self.action_reasons)

    def invalid_indices(self) -> list[int]:
        return [i for i, r in enumerate(self.action_reasons) if r]

    def text(self, actions: list[Action]) -> str:
        """Reasons as the country reads them when it revises."""
        lines = [
            f"- action {i + 1} ({actions[i].short()}): {'; '.join(r)}"
            for i, r in enumerate(self.action_reasons)
            if r
        ]
        lines += [f"- {g}" for g in self.general]
        return "\n".join(lines)


def _format_reasons(actor: str, a: Action, countries: list[str]) -> list[str]:
    if a.type not in ACTION_TYPES:
        return [f"unknown action {a.type!r} (known: {', '.join(ACTION_TYPES)})"]
    if a.type in UNTARGETED:
        return []  # any target is ignored (normalised to "none" by `normalise`)
    if a.target == actor:
        return [f"{a.type} cannot target yourself"]
    if a.target not in countries:
        return [f"unknown target {a.target!r} (countries: {', '.join(countries)})"]
    if a.type == "send_message" and not a.message.strip():
        return ["send_message needs a message text"]
    return []


def _logic_reasons(
    actor: str, a: Action, board: Board, earlier: list[Action], later: list[Action]
) -> list[str]:
    """Rules against the actor's own board and stick, and against its other actions."""
    t = a.target
    verb, kind = split_action(a.type)
    same = [e for e in earlier if e.type == a.type and (a.type in UNTARGETED or e.target == t)]
    if same and a.type not in ("send_message", "wait"):
        return [f"{a.short()} appears twice"]
    if a.type == "general_mobilization":
        return ["you are already mobilized"] if board.is_mobilized(actor) else []
    if a.type == "declare_war":
        if board.has(actor, t, "war"):
            return [f"you are already at war with {t}"]
        betrays = any(o.type == "betray_alliance" and o.target == t for o in earlier + later)
        if board.has(actor, t, "alliance") and not betrays:
            return [
                f"{t} is your ally: betray the alliance first (betray_alliance) in the same set"
            ]
        return []
    if kind is None:
        return []
    noun = {"alliance": "an alliance", "treaty": "a treaty", "peace": "a peace agreement"}[kind]
    if verb == "request":
        if board.has(actor, t, kind):
            return [f"you already have {noun} with {t}"]
        if board.has_request(actor, t, kind):
            return [f"you already asked {t} for {noun}; wait for the answer"]
        if kind == "peace" and not board.has(actor, t, "war"):
            return [f"you are not at war with {t}, so there is no war to end"]
        if kind != "peace" and board.has(actor, t, "war"):
            return [f"you are at war with {t}: present peace first"]
        return []
    if verb in ("accept", "reject"):
        if not board.has_request(t, actor, kind):
            return [f"{t} has not asked you for {noun}; nothing to {verb}"]
        return []
    if verb in ("publish", "betray"):
        if not board.has(actor, t, kind):
            return [f"you have no {kind} with {t} to {verb}"]
        return []
    return []


def _ally_obligations(actor: str, actions: list[Action], board: Board) -> list[tuple[str, str]]:
    """(ally, enemy) pairs where an ally is at war and the actor neither joins nor betrays."""
    joins = {a.target for a in actions if a.type == "declare_war"}
    betrays = {a.target for a in actions if a.type == "betray_alliance"}
    open_ = []
    for ally in board.partners(actor, "alliance"):
        if ally in betrays:
            continue
        for enemy in board.partners(ally, "war"):
            if enemy == actor or board.has(actor, enemy, "war") or enemy in joins:
                continue
            open_.append((ally, enemy))
    return open_


def validate(
    actor: str, actions: list[Action], board: Board, countries: list[str], max_actions: int = 3
) -> Verdict:
    """Check format and logic of one country's proposal against its own board and stick."""
    reasons: list[list[str]] = []
    for i, a in enumerate(actions):
        r = _format_reasons(actor, a, countries)
        if not r:
            r = _logic_reasons(actor, a, board, actions[:i], actions[i + 1 :])
        reasons.append(r)
    general = []
    if len(actions) > max_actions:
        general.append(f"at most {max_actions} actions per round (you gave {len(actions)})")
    for ally, enemy in _ally_obligations(actor, actions, board):
        general.append(
            f"your ally {ally} is at war with {enemy}: join it (declare_war on {enemy}) "
            f"or break the alliance (betray_alliance with {ally})"
        )
    return Verdict(action_reasons=reasons, general=general)


AllyAtWarPolicy = Literal["waive", "join", "betray"]


def normalise(actions: list[Action]) -> list[Action]:
    """Untargeted actions carry target "none" (the model may fill in anything)."""
    return [
        a.model_copy(update={"target": NO_TARGET}) if a.type in UNTARGETED else a for a in actions
    ]


def amend(
    actor: str,
    actions: list[Action],
    board: Board,
    countries: list[str],
    max_actions: int = 3,
    ally_at_war: AllyAtWarPolicy = "waive",
) -> tuple[list[Action], list[str]]:
    """The secretary's last resort: drop invalid actions until the set is valid.

    Returns the amended actions and notes on what was done. Dropping can expose a new
    problem (a dropped betrayal leaves a war on an ally), so it repeats until stable. An
    unmet alliance obligation cannot be fixed by dropping: `ally_at_war` says whether to
    waive it (default: the secretary does not make war for a country), join the war, or
    break the alliance.
    """
    notes: list[str] = []
    kept = normalise(actions)
    for _ in range(len(kept) + 1):
        verdict = validate(actor, kept, board, countries, max_actions=len(kept) or 1)
        bad = verdict.invalid_indices()
        if not bad:
            break
        notes += [f"dropped {kept[i].short()}: {'; '.join(verdict.action_reasons[i])}" for i in bad]
        kept = [a for i, a in enumerate(kept) if i not in bad]
    if len(kept) > max_actions:
        notes += [
            f"dropped {a.short()}: over the limit of {max_actions}" for a in kept[max_actions:]
        ]
        kept = kept[:max_actions]
    # One obligation at a time: answering one (a betrayal) can change the next.
    for _ in range(len(countries) * 2):
        open_ = _ally_obligations(actor, kept, board)
        if not open_:
            break
        ally, enemy = open_[0]
        if ally_at_war == "waive":
            notes += [f"waived: ally {a} is at war with {e}" for a, e in open_]
            break
        betrayed = {a.target for a in kept if a.type == "betray_alliance"}
        if ally_at_war == "join" and (not board.has(actor, enemy, "alliance") or enemy in betrayed):
            kept.append(Action(type="declare_war", target=enemy, message=f"We stand by {ally}."))
            notes.append(f"added declare_war -> {enemy} to honour the alliance with {ally}")
        else:
            kept.append(Action(type="betray_alliance", target=ally))
            notes.append(f"added betray_alliance -> {ally}: it is at war with {enemy}")
    return (
        _fit_limit(actor, kept, board, countries, max_actions, notes) or [Action(type="wait")]
    ), notes


def _fit_limit(
    actor: str,
    kept: list[Action],
    board: Board,
    countries: list[str],
    max_actions: int,
    notes: list[str],
) -> list[Action]:
    """Actions added for an alliance obligation may pass the limit: drop others that are not
    needed (latest first), as long as the set stays valid."""
    while len(kept) > max_actions:
        for i in reversed(range(len(kept))):
            trial = kept[:i] + kept[i + 1 :]
            if validate(actor, trial, board, countries, max_actions=len(trial)).ok:
                notes.append(f"dropped {kept[i].short()}: over the limit of {max_actions}")
                kept = trial
                break
        else:
            break  # nothing can go without breaking a rule; the limit yields to the rules
    return kept
