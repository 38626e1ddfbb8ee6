"""A person's orders as choices: each legal order of a unit (or build/disband slot) in words
("Move to Burgundy (BUR)") with its kind, for the seat page's select per unit. The order itself
stays in the engine's notation: the words are only what a person reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from wargraph.graphs.diplomacy.engine import WAIVE, order_type

STANDARD = "standard"
# the groups a unit's choices are shown in, in this order
GROUPS = ("Hold", "Move", "Support", "Convoy", "Retreat", "Disband", "Build", "Waive")
_GROUP_OF = {
    "hold": "Hold",
    "move": "Move",
    "support": "Support",
    "convoy": "Convoy",
    "retreat": "Retreat",
    "disband": "Disband",
    "build": "Build",
    "waive": "Waive",
}
_KINDS = {"A": "army", "F": "fleet"}


@lru_cache(maxsize=4)
def province_names(map_name: str = STANDARD) -> dict[str, str]:
    """Abbreviation -> name ("BUR" -> "Burgundy", "SPA/SC" -> "Spain (South Coast)"); {} for a
    map the engine does not know (the choices then name provinces by abbreviation only)."""
    from wargraph.graphs.diplomacy.geography import loc_names

    try:
        return dict(loc_names(map_name))
    except (KeyError, ValueError, OSError):
        return {}


def place(abbr: str, names: Mapping[str, str]) -> str:
    """ "Burgundy (BUR)"; the abbreviation alone when the map has no name for it."""
    name = names.get(abbr.upper())
    return f"{name} ({abbr})" if name else abbr


def unit_words(unit: str, names: Mapping[str, str]) -> str:
    """ "A PAR" -> "army in Paris (PAR)"."""
    kind, _, where = unit.partition(" ")
    return f"{_KINDS.get(kind, kind)} in {place(where, names)}" if where else unit


def order_words(order: str, names: Mapping[str, str]) -> str:
    """One legal order in words, as a choice reads ("Support A MAR into Burgundy (BUR)").
    An order of a shape this does not know is shown as written."""
    words = order.split()
    kind = order_type(order)
    if kind == "waive":
        return "Waive this build"
    if kind == "hold":
        return "Hold"
    if kind == "disband":
        return "Disband"
    if kind == "build":
        article = "an" if words[0] == "A" else "a"
        return f"Build {article} {unit_words(' '.join(words[:2]), names)}"
    if kind == "move":
        text = f"Move to {place(words[3], names)}" if len(words) > 3 else order
        return text + (" by convoy" if words[-1] == "VIA" else "")
    if kind == "retreat" and len(words) > 3:
        return f"Retreat to {place(words[3], names)}"
    if kind in ("support", "convoy") and len(words) >= 5:
        other = " ".join(words[3:5])
        if len(words) >= 7 and words[5] == "-":
            into = "Support {} into {}" if kind == "support" else "Convoy {} to {}"
            return into.format(other, place(words[6], names))
        return f"Support {other} to hold" if kind == "support" else order
    return order


def choices(key: str, legal: Sequence[str], map_name: str = STANDARD) -> list[dict[str, str]]:
    """Each legal order of `key` as `{"value": order, "label": words, "group": kind}`, grouped
    in `GROUPS` order (hold first), keeping the engine's order inside a group."""
    names = province_names(map_name)
    rank = {g: i for i, g in enumerate(GROUPS)}
    out = [
        {"value": o, "label": order_words(o, names), "group": _GROUP_OF.get(order_type(o), "")}
        for o in legal
    ]
    return sorted(out, key=lambda c: rank.get(c["group"], len(GROUPS)))


def key_label(key: str, map_name: str = STANDARD) -> str:
    """What a unit's or slot's field is called: "A PAR · army in Paris (PAR)", "Build 1"."""
    if key.startswith(("A ", "F ")):
        return f"{key} · {unit_words(key, province_names(map_name))}"
    if key == WAIVE:
        return key
    return key.replace("_", " ").capitalize()
