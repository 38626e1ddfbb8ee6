"""Results to share: every report is also one self-contained page (figures inside, each game's
view linked last) with CSV beside it; a replay's report reads as a summary, its JSON apart;
`wargraph.results.load` gives data frames; `ask` prints JSON."""

from __future__ import annotations

import csv
import json
import re
import sys

import pytest
from typer.testing import CliRunner

from tests.unit.test_experiment_report import meta, outcomes
from wargraph.cli import app
from wargraph.evals.report import write_report
from wargraph.evals.report_page import as_markdown, render
from wargraph.runs.replay import ReplayResult
from wargraph.runs.replay import write_report as write_replay_report

runner = CliRunner()


def test_page_inlines_figures_escapes_the_title_and_keeps_other_links(tmp_path):
    (tmp_path / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    md = "# A <b>&</b> report\n\n![chart](fig.png)\n\n![gone](missing.png)\n\n[view](g/view.html)\n"
    page = render(md, tmp_path)
    assert "<title>A &lt;b&gt;&amp;&lt;/b&gt; report</title>" in page
    assert 'src="data:image/png;base64,' in page and 'src="fig.png"' not in page
    assert 'href="missing.png"' in page  # a figure that is not there stays a link, no error
    assert 'href="g/view.html"' in page


def test_experiment_report_page_has_its_figures_inside_and_the_views_last(tmp_path):
    write_report(tmp_path, meta(), outcomes(with_measures=True))
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert md.index("## Files") < md.index("each game's view")  # results before 60 links
    assert md.index("each game's view") > md.index("## Comparisons")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<table>" in page
    assert page.count('src="data:image/png;base64,') >= 2  # question and measure charts
    assert not re.search(r'<img[^>]+src="figures/', page)  # nothing left to fetch
    assert "95%" in page and "[" in page  # the intervals


def _replay_result(tmp_path) -> ReplayResult:
    runs = [
        {
            "run": k,
            "thread_id": f"t-replay-{k}",
            "seed": k,
            "memories_copied": 2,
            "outcome": {"centres": {"FRANCE": 4 + k, "ENGLAND": 3}, "phases": ["F1901M"]},
        }
        for k in (1, 2)
    ]
    return ReplayResult(
        source={
            "db": "x.sqlite",
            "thread_id": "t",
            "phase": "F1901M",
            "checkpoint_id": "c1",
            "as_node": "adjudicate",
        },
        change={"overrides": ["players.france.persona=bold"], "model": None, "phases": 1},
        runs=runs,
        original={"centres": {"FRANCE": 5, "ENGLAND": 3}},
        summary={
            "centres": {
                "FRANCE": {"mean": 5.5, "min": 5, "max": 6, "counts": {"5": 1, "6": 1}},
                "ENGLAND": {"mean": 3.0, "min": 3, "max": 3, "counts": {"3": 2}},
            }
        },
        out_dir=tmp_path,
    )


def test_replay_report_is_a_summary_with_its_json_and_csv_apart(tmp_path):
    write_replay_report(_replay_result(tmp_path), tmp_path)
    md = (tmp_path / "replay.md").read_text(encoding="utf-8")
    assert "```" not in md and len(md.splitlines()) < 60
    assert "| FRANCE | 5.5 | 5 | 6 |" in md  # the distribution as a table
    assert "`players.france.persona=bold`" in md
    assert json.loads((tmp_path / "replay.json").read_text())["runs"][1]["seed"] == 2
    rows = list(csv.DictReader((tmp_path / "replay.csv").open(encoding="utf-8")))
    assert [r["centres:FRANCE"] for r in rows] == ["5", "6"]
    assert (tmp_path / "replay.html").read_text(encoding="utf-8").count("<table>") >= 3


def test_deep_results_become_sections_not_a_dump():
    lines = as_markdown({"a": {"b": {"c": {"d": {"e": 1}}}}}, "deep", 2)
    assert lines[0] == "## deep" and "### a" in lines and "| c | e: 1 |" in lines
    assert not any("{" in line for line in lines)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    out = root / "runs" / "one"
    r = runner.invoke(
        app,
        [
            "play",
            "azuristan_crimsonia",
            "--model",
            "scripted",
            "--rounds",
            "1",
            "--db",
            str(root / "g.sqlite"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    return root, out


def test_results_load_gives_games_events_and_calls(played):
    from wargraph.results import load

    root, out = played
    r = load(root / "runs")
    assert len(r.games) == 1 and r.games.loc[0, "family"] == "crisis"
    assert r.games.loc[0, "folder"] == "one" and bool(r.games.loc[0, "done"])
    assert len(r.events) > 3 and set(r.events["thread_id"]) == {r.games.loc[0, "thread_id"]}
    assert {"narration", "plan"} & set(r.events["kind"])
    assert len(r.calls) > 0 and "event" in r.calls.columns


def test_results_load_says_what_is_wrong(tmp_path, monkeypatch):
    from wargraph.results import ResultsError, load

    with pytest.raises(ResultsError, match="no games here"):
        load(tmp_path)
    with pytest.raises(ResultsError, match="no such folder"):
        load(tmp_path / "nope")
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(ResultsError, match="pip install pandas"):
        load(tmp_path)


def test_ask_prints_json(played):
    _, out = played
    r = runner.invoke(app, ["ask", str(out), "War?", "--option", "yes", "--model", "scripted"])
    assert r.exit_code == 0, r.output
    answer = json.loads(r.stdout)
    assert answer["question"] == "War?" and "choice" in answer


def test_tournament_writes_games_and_leaderboard_csv_and_a_page(tmp_path):
    import yaml

    from tests.unit.test_tournament_known_order import SHIPPED
    from wargraph.evals.tournament import load_tournament, run_tournament

    data = yaml.safe_load((SHIPPED / "blotto_bots.yaml").read_text(encoding="utf-8"))
    data["games_per_pairing"] = 2  # 6 short games of bots
    data["set"]["rounds"] = 2
    run_tournament(load_tournament(data), tmp_path, show_progress=False)
    games = list(csv.DictReader((tmp_path / "games.csv").open(encoding="utf-8")))
    assert len(games) == 12 and {g["seat"] for g in games} == {"north", "south"}
    assert all(g["place"] in ("1", "2") and float(g["score"]) >= 0 for g in games)
    board = list(csv.DictReader((tmp_path / "leaderboard.csv").open(encoding="utf-8")))
    assert board[0]["entrant"] == "best_response" and board[0]["rank"] == "1"
    assert float(board[0]["strength_lo"]) <= float(board[0]["strength"])
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (
        md.index("## Leaderboard") < md.index("## Games")
        and "[view](" not in md.split("## Games")[0]
    )
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 2  # leaderboard and crosstable
