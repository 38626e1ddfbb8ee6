"""A tournament of bots of known strength recovers their order, with intervals that exclude a
reversal; the report is rebuilt from the stored games without replaying them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wargraph.evals.experiment import Hooks
from wargraph.evals.tournament import load_tournament, report_only, run_tournament

pytestmark = pytest.mark.slow  # about a minute: 30 games of scripted bots

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "wargraph" / "scenarios" / "tournaments"


@pytest.fixture(scope="module")
def diplomacy(tmp_path_factory):
    data = dict(
        __import__("yaml").safe_load((SHIPPED / "diplomacy_bots.yaml").read_text(encoding="utf-8"))
    )
    data["rotations"] = 6  # 18 games: each bot plays each power 6 times
    t = load_tournament(data)
    out = tmp_path_factory.mktemp("dip")
    played: list[str] = []
    result = run_tournament(
        t, out, show_progress=False, hooks=Hooks(game_done=lambda o, how: played.append(how))
    )
    return t, out, result, played


def test_known_order_is_recovered_with_separated_intervals(diplomacy):
    _, out, result, played = diplomacy
    assert played.count("played") == 18 and len(played) == 18
    fit = result.standing.fit.table()
    # the greedy bot is known to be stronger than holding or random legal orders (which of
    # those two is weaker is not known): no reversal lies inside the intervals
    assert max(fit, key=lambda n: fit[n]["strength"]) == "greedy"
    pw = result.standing.pairwise
    for weaker in ("hold", "random"):
        assert fit["greedy"]["lo"] > fit[weaker]["hi"]
        assert pw["greedy"][weaker]["lo"] > 0.5 and pw[weaker]["greedy"]["hi"] < 0.5
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["leaderboard"][0]["entrant"] == "greedy"
    # per-power results: every bot at every power, 6 games each
    assert all(summary["per_seat"][e][p]["games"] == 6 for e in fit for p in summary["seats"])
    for name in ("report.md", "leaderboard.png", "crosstable.png", "schedule.md"):
        assert (out / name).stat().st_size > 0
    # no game's page is written in the run unless asked (`--pages`): the report says how
    report = (out / "report.md").read_text(encoding="utf-8")
    assert all(row["view"] is None for row in summary["games"])
    assert not list(out.rglob("view.html")) and "--report-only --pages" in report
    # each game's row says how to write its page instead of "–"
    table = report.split("## Games", 1)[1].splitlines()
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| game")]
    assert len(rows) == 18 and not any(line.endswith("| – |") for line in rows)
    for row in summary["games"]:
        assert f"| `wargraph view {out / row['folder']}` |" in report


def test_report_only_rebuilds_from_stored_games(diplomacy, monkeypatch):
    t, out, result, _ = diplomacy
    before = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (out / "report.md").unlink()
    (out / "leaderboard.png").unlink()

    def no_play(*args, **kwargs):
        raise AssertionError("report-only must not play")

    monkeypatch.setattr("wargraph.runs.runner.play", no_play)
    monkeypatch.setattr("wargraph.runs.runner.resume", no_play)
    again = report_only(t, out, pages=True)  # and each game's page, after the games
    after = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert again.report.exists() and (out / "leaderboard.png").exists()
    assert after["leaderboard"] == before["leaderboard"]
    assert [{**g, "view": None} for g in after["games"]] == before["games"]
    # every game row links the game's page (`wargraph view`), and the page is there
    report = (out / "report.md").read_text(encoding="utf-8")
    for row in after["games"]:
        assert f"[view]({row['view']})" in report
        page = out / row["view"]
        assert page.name == "view.html" and page.parent == out / row["folder"]
        assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "--report-only --pages" not in report


def test_blotto_best_response_is_recovered(tmp_path):
    t = load_tournament(SHIPPED / "blotto_bots.yaml")
    result = run_tournament(t, tmp_path, show_progress=False)
    fit = result.standing.fit.table()
    for weaker in ("fixed", "even"):
        assert fit["best_response"]["lo"] > fit[weaker]["hi"]
        assert result.standing.pairwise["best_response"][weaker]["lo"] > 0.5
    # fixed (3, 2, 5) and even (4, 3, 3) split the passes 2 points to 2 every round: a tie
    assert result.standing.crosstable["fixed"]["even"]["rate"] == 0.5
