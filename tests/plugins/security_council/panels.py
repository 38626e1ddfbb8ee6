"""The votes of each round as a table in `wargraph view`, in the round's adjudicate phase."""

from typing import Any


def panels(record: dict[str, Any], phases: list[tuple[int, str]], lines: Any) -> dict:
    out: dict[int, list[dict[str, Any]]] = {}
    for e in record.get("events", []):
        if e.get("kind") != "outcome" or (e["round"], e["phase"]) not in phases:
            continue
        d = e["data"]
        rows = [[m, v, "veto" if m in d["vetoes"] else ""] for m, v in d["votes"].items()]
        note = f"{d['penholder']}'s draft: {'adopted' if d['adopted'] else 'not adopted'}"
        table = {"kind": "table", "title": "Votes", "columns": ["member", "vote", ""]}
        out.setdefault(phases.index((e["round"], e["phase"])), []).append(
            {**table, "rows": rows, "note": f"{note} ({d['yes']} yes)."}
        )
    return out
