"""A seat's world on its page: the family's `seat_world` panels (a Diplomacy map and units per
power, a WarAgent country's board and stick, Blotto's fronts), drawn once per game moment and
fetched by the page only when they changed.

  GET /wargraph/seat/world   the seat's panels and their key (its seat token or facilitator)

The seat's payload (`GET /wargraph/seat`) carries the key only (`world`), so polling stays light.
A panel is a JSON object with a `kind` and a `title`:

  {"kind": "svg",   "title": ..., "svg": "<svg ...>", "folded": bool}  a picture (shown as an image)
  {"kind": "table", "title": ..., "columns": [...], "rows": [[...]], "note": str, "highlight": str}
  {"kind": "text",  "title": ..., "text": ...}

The page inserts text as text and an SVG only as an image (no script of it runs).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from wargraph.server.api import ApiError, holder_of, json_response, route

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario

log = logging.getLogger(__name__)

KINDS = ("svg", "table", "text")
KEPT = 64  # (game, seat, moment) panels kept: a few games' seats, each at its latest moment
_kept: OrderedDict[tuple[str, str, str], tuple[str, list[dict[str, Any]]]] = OrderedDict()
_lock = threading.Lock()


def moment_key(values: Mapping[str, Any]) -> str:
    """What changes whenever the world may have: the round, the step and the record's length."""
    events = values.get("events") or []
    return f"{values.get('round', 0)}|{values.get('phase', '')}|{len(events)}|{values.get('done')}"


def _checked(panels: Any, family: str) -> list[dict[str, Any]]:
    """The panels a page can show; a malformed one becomes a line saying so."""
    if not isinstance(panels, list):
        raise TypeError(f"expected a list of panels, got {type(panels).__name__}")
    out = []
    for p in panels:
        if isinstance(p, dict) and p.get("kind") in KINDS and isinstance(p.get("title"), str):
            out.append(p)
        else:
            out.append({"kind": "text", "title": "(a panel)", "text": f"{family}: not shown"})
    return out


def world_of(
    thread_id: str, seat: str, sc: Scenario | None, values: Mapping[str, Any]
) -> tuple[str, list[dict[str, Any]]] | None:
    """(key, panels) of the seat's world now; None when its family shows none. Sync (a map is
    drawn here): run in a thread. A hook that fails says so in one panel; the page goes on."""
    from wargraph.kernel.families import FamilyError, attribute

    if sc is None:
        return None
    try:
        hook = attribute(sc.family, "seat_world")
    except FamilyError:
        return None
    if hook is None:
        return None
    at = (thread_id, seat, moment_key(values))
    with _lock:
        if at in _kept:
            _kept.move_to_end(at)
            return _kept[at]
    try:
        panels = _checked(hook(sc, values, seat), sc.family)
    except Exception as exc:  # a family's hook: its failure must not take the seat page down
        log.warning("wargraph: %s seat_world failed for %s: %s", sc.family, seat, exc)
        panels = [{"kind": "text", "title": "The board", "text": f"not drawn: {exc}"}]
    blob = json.dumps(panels, sort_keys=True, default=str)
    key = hashlib.sha1(blob.encode(), usedforsecurity=False).hexdigest()[:16]
    with _lock:
        _kept[at] = (key, panels)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return key, panels


@route
async def seat_world(request: Request) -> Response:
    from wargraph.server.api import seat_target
    from wargraph.server.games import read_game, stored_scenario

    holder = holder_of(request)
    thread_id, seat = seat_target(request, holder)
    values = (await read_game(thread_id))["values"]
    sc = await asyncio.to_thread(stored_scenario, values)
    if sc is not None and seat not in sc.roles:
        raise ApiError(404, f"this game has no seat {seat!r} (seats: {', '.join(sc.roles)})")
    found = await asyncio.to_thread(world_of, thread_id, seat, sc, values)
    key, panels = found if found is not None else (None, [])
    return json_response({"key": key, "panels": panels})
