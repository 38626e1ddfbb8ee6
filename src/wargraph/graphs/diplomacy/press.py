"""Press: wargraph's message rules (the engine enforces none locally) and messages added to the
saved game."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from wargraph.graphs.diplomacy.engine import GLOBAL, POWERS, Press


def check_message(
    sender: str,
    recipient: str,
    text: str,
    *,
    press: Press = "full",
    max_len: int = 1000,
    powers: Collection[str] = POWERS,
) -> str | None:
    """Enforce wargraph's press rules (the engine does not). ``None`` when the message may be
    sent, otherwise the reason it is refused.

    ``press``: "full" (global and private), "public" (global only), "none" (no messages).
    ``powers``: who may send or receive (pass the powers still alive).
    """
    if press not in ("full", "public", "none"):
        return f"unknown press setting {press!r}"
    if press == "none":
        return "no press: messages are not allowed in this game"
    sender_u = str(sender).upper()
    recipient_u = str(recipient).upper()
    allowed = {p.upper() for p in powers}
    if sender_u not in allowed:
        return f"sender {sender!r} is not a power in play"
    if recipient_u != GLOBAL and recipient_u not in allowed:
        return f"recipient {recipient!r} is not a power in play or {GLOBAL}"
    if recipient_u == sender_u:
        return "a power cannot message itself"
    if press == "public" and recipient_u != GLOBAL:
        return f"public press only: send to {GLOBAL}, not to {recipient_u}"
    if not isinstance(text, str) or not text.strip():
        return "empty message"
    if len(text) > max_len:
        return f"message too long: {len(text)} characters, limit {max_len}"
    return None


def add_messages(
    saved: Mapping[str, Any], messages: Iterable[tuple[str, str, str]]
) -> dict[str, Any]:
    """The saved game with ``(sender, recipient, text)`` messages added to the current phase
    (recipient a power or ``GLOBAL``). Check them with :func:`check_message` first: the engine
    does not enforce press rules locally. Each message gets the next ``time_sent`` after the
    latest in the game (two messages with the same ``time_sent`` would overwrite each other), so
    the result is deterministic. The caller's dict is not modified.

    The messages are written in the engine's saved-game form directly (what ``Game.add_message``
    and ``to_saved_game_format`` produce, checked by the tests): loading and saving the game for
    a few lines of press cost more than the phase's adjudication."""
    phases = list(saved["phases"])
    last = phases[-1]
    latest = max(
        (int(m.get("time_sent") or 0) for ph in phases for m in ph.get("messages", [])),
        default=0,
    )
    added = list(last.get("messages", []))
    for sender, recipient, text in messages:
        latest += 1
        added.append(
            {
                "sender": str(sender).upper(),
                "recipient": str(recipient).upper(),
                "time_sent": latest,
                "phase": last["name"],
                "message": str(text),
            }
        )
    return {**saved, "phases": phases[:-1] + [{**last, "messages": added}]}
