"""`wargraph eval diplomacy`: the measures of finished Diplomacy games, printed and written. The
measures live with the game (`wargraph.graphs.diplomacy.measures`, whose debrief writes them at
the end of play too); `record_measures` is imported here for older references to it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wargraph.graphs.diplomacy.analyses import across_games, across_markdown
from wargraph.graphs.diplomacy.measures import (
    game_measures,
    measures_markdown,
    pct,
    record_measures,
    relationship_chart,
    saved_game_of,
)

__all__ = ["eval_diplomacy", "record_measures"]


def _print_game(console: Any, name: str, m: Mapping[str, Any]) -> None:
    from rich.table import Table

    t = Table(title=f"{name}: to {m['max_year']} ({m['final_phase']})")
    for col in ("power", "score", "centres", "orders", "invalid", "hold rate", "msgs", "tokens"):
        t.add_column(col, justify="left" if col == "power" else "right")
    for p, s in sorted(m["scores"].items(), key=lambda x: -x[1]):
        o = m["orders_by_power"][p]
        msg = m["messages"][p]
        u = m["usage"].get(p, {})
        tokens = u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)
        t.add_row(
            p,
            f"{s:g}",
            str(m["centres"][p]),
            str(o["total"]),
            str(o["invalid"]),
            f"{o['hold_rate']:.0%}",
            f"{msg['public']}+{msg['private']}",
            str(tokens),
        )
    console.print(t)
    ot = Table(title="orders by type")
    for col in ("type", "count", "success", "bounced", "void", "dislodged", "cut", "invalid"):
        ot.add_column(col, justify="left" if col == "type" else "right")
    for kind, row in m["orders"]["by_type"].items():
        if row["count"]:
            ot.add_row(
                kind,
                *(
                    str(row[k])
                    for k in ("count", "success", "bounced", "void", "dislodged", "cut", "invalid")
                ),
            )
    console.print(ot)
    o = m["orders"]
    console.print(
        f"invalid-order rate {o['invalid_rate']:.1%} · hold rate {o['hold_rate']:.1%} · "
        f"engine errors {m['engine_errors']} · secretary revisions {m['secretary']['revisions']}"
    )
    if m.get("free_orders"):
        _print_free_orders(console, m["free_orders"])
    rec = m.get("reciprocity") or {}
    if rec.get("pairs"):
        console.print(
            f"relationship reciprocity: {rec['matched']} of {rec['pairs']} pairs of ratings "
            f"matched ({rec['share_matched']:.0%})"
        )
    if m.get("aggression"):
        shares = ", ".join(f"{p} {v:.0%}" for p, v in m["aggression"].items())
        console.print(f"aggression (share of orders attacking another power): {shares}")


def _print_free_orders(console: Any, f: Mapping[str, Any]) -> None:
    """Free orders (`diplomacy.orders: free`): what each power and model wrote on its first try."""
    from rich.table import Table

    t = Table(title="free orders (first try)")
    for col in ("power / model", "written", "invalid", "invalid rate", "re-asked", "re-ask rate"):
        t.add_column(col, justify="left" if col == "power / model" else "right")
    for name, r in [*f["by_power"].items(), *f["by_model"].items()]:
        if r["phases"]:
            t.add_row(
                name or "(default)",
                str(r["written"]),
                str(r["invalid"]),
                pct(r["invalid_rate"]),
                f"{r['reasked']}/{r['phases']}",
                pct(r["reask_rate"]),
            )
    console.print(t)
    console.print(
        f"free orders: invalid-order rate {pct(f['invalid_rate'])} · "
        f"re-ask rate {pct(f['reask_rate'])} · units left without an order {f['missing']}"
    )


def _power_rows(game: int, path: Path, m: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One CSV row per power of one game: score, centres, orders, press and tokens."""
    rows = []
    for p, score in sorted(m["scores"].items()):
        o = m["orders_by_power"][p]
        msg = m["messages"][p]
        u = m["usage"].get(p, {})
        rows.append(
            {
                "game": game,
                "record": str(path),
                "final_phase": m["final_phase"],
                "power": p,
                "score": score,
                "centres": m["centres"][p],
                "orders": o["total"],
                "invalid_orders": o["invalid"],
                "hold_rate": o["hold_rate"],
                "public_messages": msg["public"],
                "private_messages": msg["private"],
                "prompt_tokens": u.get("prompt_tokens", 0),
                "completion_tokens": u.get("completion_tokens", 0),
                # AI_Diplomacy's analyses (empty where the power gave no data)
                "aggression": _or_blank(m.get("aggression", {}).get(p)),
                "overestimated": _or_blank(m.get("overestimated", {}).get(p)),
                "underestimated": _or_blank(m.get("underestimated", {}).get(p)),
            }
        )
    return rows


def _or_blank(value: float | None) -> float | str:
    return "" if value is None else round(value, 4)


def eval_diplomacy(records: list[Path], out_dir: Path) -> dict[str, Any]:
    """`wargraph eval diplomacy RECORD...`: print every game's measures, write
    `diplomacy_eval.json` / `.md` / `.html` / `.csv` and a relationship chart per game into `out_dir`."""
    import json

    from rich.console import Console

    from wargraph.evals.report_page import write_csv, write_page
    from wargraph.graphs.diplomacy.rules import write_maps
    from wargraph.runs.records import RecordError, load_record

    if not records:
        raise RecordError("no records given")
    console = Console()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    games = []
    loaded: list[tuple[dict[str, Any], dict[str, Any]]] = []
    md = []
    rows: list[dict[str, Any]] = []
    for i, path in enumerate(records, 1):
        record = load_record(path)
        m = game_measures(record)
        name = f"game {i} ({path})"
        _print_game(console, name, m)
        if m["relationships"]["phases"]:
            chart = relationship_chart(m["relationships"], out_dir / f"relationships_{i}.png")
            console.print(f"relationship chart: {chart}")
        maps = write_maps(saved_game_of(record), out_dir / f"maps_{i}")  # drawn here, not in play
        console.print(f"maps: {len(maps)} phase(s) in {out_dir / f'maps_{i}'}")
        games.append({"record": str(path), **m})
        loaded.append((record, m))
        md.append(measures_markdown(m, title=name))
        rows += _power_rows(i, path, m)
    mean = {p: sum(g["scores"][p] for g in games) / len(games) for p in sorted(games[0]["scores"])}
    pooled = across_games(loaded)  # reciprocity and aggression per model, all games
    summary = {"games": games, "mean_scores": mean, "per_model": pooled}
    (out_dir / "diplomacy_eval.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    mean_md = "\n".join(f"| {p} | {v:.2f} |" for p, v in mean.items())
    per_model = "\n".join(across_markdown(pooled))
    (out_dir / "diplomacy_eval.md").write_text(
        "\n".join(md)
        + f"\n# Mean scores over {len(games)} game(s)\n\n| power | score |\n|---|---|\n{mean_md}\n"
        + (f"\n{per_model}" if per_model else ""),
        encoding="utf-8",
    )
    for line in across_markdown(pooled)[2:3]:
        console.print(line, highlight=False)
    write_csv(out_dir / "diplomacy_eval.csv", rows)
    page = write_page(out_dir / "diplomacy_eval.md", title=f"Diplomacy eval: {len(games)} game(s)")
    console.print(
        f"[green]wrote[/] {page}, {out_dir}/diplomacy_eval.csv (one row per power and game), "
        "diplomacy_eval.json, diplomacy_eval.md"
    )
    return summary


def eval_command(
    records: list[Path], out_dir: Path, *, promises_model: str | None = None
) -> dict[str, Any]:
    """`wargraph eval diplomacy RECORD... [--promises-model MODEL]` (the family's
    `eval_command`): `eval_diplomacy`, and with a model the promises made in messages judged
    kept or broken, into `promises.json`."""
    import json

    from rich.console import Console

    from wargraph.evals.promises import promise_measures
    from wargraph.runs.records import load_record
    from wargraph.seats.terminal import text

    summary = eval_diplomacy(records, out_dir)
    if promises_model:
        judged = {str(r): promise_measures(load_record(r), model=promises_model) for r in records}
        (Path(out_dir) / "promises.json").write_text(json.dumps(judged, indent=2, default=str))
        console = Console()
        for name, m in judged.items():
            rates = json.dumps(m["betrayal_rates"], ensure_ascii=False, default=str)
            console.print(text(f"promises in {name}: betrayal rates {rates}"), highlight=False)
    return summary
