"""What a power's seat page shows of the board (`Family.seat_world`): the map of the phase being
played (the engine's renderer, with province abbreviations, as orders name them), the last
phase's map with the orders given in it, and every power's units and supply centres. The whole
board is public in Diplomacy, so every seat sees the same panels."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from wargraph.graphs.diplomacy.engine import phase_info, position_key
from wargraph.graphs.diplomacy.order_choices import province_names
from wargraph.graphs.diplomacy.view import phase_title

# A map costs ~0.3-0.5 s to draw and every seat of a game shows the same one: keep the last few.
_MAPS: OrderedDict[tuple[str, str, bool], str] = OrderedDict()
_MAPS_LOCK = threading.Lock()
MAPS_KEPT = 32
# each power's colour on the engine's map (its provinces), for the units table
POWER_COLOURS = {
    "AUSTRIA": "#c48f85",
    "ENGLAND": "darkviolet",
    "FRANCE": "royalblue",
    "GERMANY": "#a08a75",
    "ITALY": "forestgreen",
    "RUSSIA": "#757d91",
    "TURKEY": "#b9a61c",
}


def _map(saved: Mapping[str, Any], phase: str | None, orders: bool) -> str:
    from wargraph.graphs.diplomacy.render import render_svg

    key = (position_key(saved), phase or "", orders)
    with _MAPS_LOCK:
        if key in _MAPS:
            _MAPS.move_to_end(key)
            return _MAPS[key]
    svg = render_svg(saved, phase, incl_orders=orders, incl_abbrev=True)
    with _MAPS_LOCK:
        _MAPS[key] = svg
        while len(_MAPS) > MAPS_KEPT:
            _MAPS.popitem(last=False)
    return svg


def _saved(values: Mapping[str, Any]) -> dict[str, Any] | None:
    world = values.get("world")
    saved = world.get("diplomacy") if isinstance(world, dict) else None
    ok = isinstance(saved, dict) and isinstance(saved.get("phases"), list) and saved["phases"]
    return saved if ok else None


def _units_table(saved: Mapping[str, Any], seat: str) -> dict[str, Any]:
    info = phase_info(saved)
    names = province_names(str(saved.get("map") or "standard"))
    rows = []
    for power in sorted(set(info.units) | set(info.centers)):
        units = info.units.get(power) or []
        centres = info.centers.get(power) or []
        dislodged = info.retreats.get(power) or []
        if not (units or centres or dislodged):
            continue  # out of the game
        listed = [f"{u} ({names.get(u.split()[-1], u.split()[-1])})" for u in units]
        listed += [f"{u} (dislodged)" for u in dislodged]
        rows.append(
            [
                power + (" (you)" if power == seat else ""),
                str(len(centres)),
                str(len(units)),
                ", ".join(listed) or "none",
                " ".join(sorted(centres)) or "none",
            ]
        )
    return {
        "kind": "table",
        "title": "Units and supply centres",
        "columns": ["power", "centres", "units", "where", "centres held"],
        "rows": rows,
        "highlight": seat,
        "colors": POWER_COLOURS,
    }


def panels(scenario: Any, values: Mapping[str, Any], seat: str) -> list[dict[str, Any]]:
    """The board as the seat page shows it; [] before the engine game exists."""
    saved = _saved(values)
    if saved is None:
        return []
    info = phase_info(saved)
    # a game stopped at its last year stands at the next phase, which is never played
    over = info.is_done or bool(values.get("done"))
    now = f"the end of the game ({info.name})" if over else phase_title(info)
    out: list[dict[str, Any]] = [
        {"kind": "svg", "title": f"The board: {now}", "svg": _map(saved, None, False)}
    ]
    played = [p["name"] for p in saved["phases"][:-1] if p.get("orders")]
    if played:
        last = played[-1]
        out.append(
            {
                "kind": "svg",
                "title": f"Last phase {last}: the orders given",
                "svg": _map(saved, last, True),
                "folded": True,
            }
        )
    out.append(_units_table(saved, seat))
    return out
