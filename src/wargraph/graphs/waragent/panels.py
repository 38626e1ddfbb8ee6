"""WarAgent's panels in `wargraph view`: the true board and the stick after each round."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from wargraph.view.pack import Lines
from wargraph.view.panels import Panels, by_round

SYMBOL = {"war": "W", "alliance": "A", "peace": "P", "treaty": "T"}


def panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Lines) -> Panels:
    """The true board (relation of every pair) and the stick (who is mobilized) after each
    round, in the round's last phase; the opening board in the setup."""
    from wargraph.graphs.waragent.rounds import Situation

    out: Panels = defaultdict(list)
    world = record.get("world") or {}
    world = world.get("waragent", world) if isinstance(world, dict) else {}
    try:
        w = Situation.model_validate(world)
    except Exception:  # noqa: BLE001 — an old or damaged world: the generic view still shows
        return out
    rounds = by_round(phases)
    boards = {logged.round: logged.board for logged in w.history}
    for rnd, steps in rounds.items():
        # each step of a round shows the board it started from; its last step, the board after
        for at in steps:
            last = at == steps[-1] and rnd in boards
            shown = rnd if last else rnd - 1
            if shown not in boards:
                continue
            title = (
                "Opening board and stick" if shown == 0 else f"Board and stick after round {shown}"
            )
            out[at].append(_board_table(boards[shown], title))
    return out


def _board_table(board: Any, title: str) -> dict[str, Any]:
    rows = []
    for a, row in zip(board.countries, board.matrix(), strict=False):
        cells = ["·" if r == "self" else SYMBOL.get(r, "") for r in row]
        rows.append([a, "mobilized" if board.is_mobilized(a) else "", *cells])
    return {
        "kind": "table",
        "title": title,
        "columns": ["", "stick", *board.countries],
        "rows": rows,
        "note": "W war, A alliance, P peace, T treaty; the stick marks mobilized countries",
    }
