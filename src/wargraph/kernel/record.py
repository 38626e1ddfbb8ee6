"""The round record: what `order` places in `world` for `secretary_validate` and `adjudicate`,
one typed dict instead of string keys each phase spells on its own.

Every key is per seat and emptied once the round is resolved. A world's own keys (an engine's
state, scores, a part's `Orders.update`) live beside them in `world`, never under these names."""

from __future__ import annotations

from typing import Any, TypedDict


class RoundRecord(TypedDict, total=False):
    proposals: dict[str, Any]
    """The round's proposal of each seat, as `Orders.proposal` made it and the secretary left it
    (a seat that acts in two mounts: its latest; every one is in `by_mount`)."""
    sources: dict[str, str]
    """Who chose each proposal: model | fallback | human | scripted | script | reviewed."""
    placed_by: dict[str, str]
    """The `order` mount that placed each seat's latest proposal (a world of several mounts):
    its `Orders` reads a revision of it (`Secretary.revised`)."""
    by_mount: dict[str, dict[str, Any]]
    """Each mount's proposals, by mount then seat (a world of several mounts): a penholder who
    drafts in `draft` and votes in `vote` keeps both, as the secretary left them."""
    attempts: dict[str, int]
    """The secretary's revisions asked of each seat this round."""
    status: dict[str, str]
    """The secretary's state of each proposal: pending, reviewing, revising, accepted, or a
    give-up status."""
    trail: dict[str, list[dict[str, Any]]]
    """Each proposal and revision with its source, and the reasons it was refused."""
    notes: dict[str, str]
    """What the secretary's give-up did to a proposal."""


ROUND_KEYS: tuple[str, ...] = tuple(RoundRecord.__annotations__)
# emptied after each round; `by_mount` only when a world wrote it, `placed_by` never (a record
# of a game stays what it was before the round record was typed)
EMPTIED = ("proposals", "sources", "attempts", "status", "trail", "notes")


def round_record(world: dict[str, Any] | None) -> RoundRecord:
    """The round record in a game's `world` (a copy: change it and return it as an update)."""
    w = world or {}
    return RoundRecord(**{k: w[k] for k in ROUND_KEYS if k in w})  # type: ignore[typeddict-item]
