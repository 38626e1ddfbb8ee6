"""`wargraph view`: the page's data from real scripted games (record.json + trace.jsonl), who knew
what, costs, replay commands, family panels, escaping and the command's errors."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import play
from wargraph.view import ViewError, write_stored_view, write_view

CANARY = "CANARY-5e1d-CRIMSON-ONLY"
runner = CliRunner()


def payload_of(html_path: Path) -> dict:
    html = html_path.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/octet-stream" id="wg-data"[^>]*>([^<]*)</script>', html
    )
    assert found, "the page holds its data inline"
    return json.loads(gzip.decompress(base64.b64decode(found.group(1))))


def text(data: dict, ids: list[int]) -> str:
    return "\n".join(data["L"][i] for i in ids)


def call_text(data: dict, call: dict) -> str:
    return (
        "\n".join(text(data, m[1]) for m in call["msgs"]) + "\n" + text(data, call.get("out", []))
    )


@pytest.fixture(scope="module")
def crisis(tmp_path_factory) -> Path:
    """A scripted crisis with a canary in crimsonia's secrets and no post-game questions (the
    control reads the whole record to answer those)."""
    tmp = tmp_path_factory.mktemp("crisis")
    play(
        "azuristan_crimsonia",
        overrides=[f"players.crimsonia.secrets=['{CANARY}']", "questions=[]"],
        context=GameContext(model="scripted"),
        db=str(tmp / "games.sqlite"),
        thread_id="crisis-view",
        out_dir=tmp / "run",
    )
    return tmp


def test_the_page_is_one_file_with_its_data_and_no_network(crisis):
    path = write_view(crisis / "run")
    assert path == crisis / "run" / "view.html"
    html = path.read_text(encoding="utf-8")
    assert html.count("<script") == 2  # the data and the page's script, both inline
    assert not re.search(r'(src|href)=["\']?(https?:)?//', html), "nothing is fetched from anywhere"
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "script-src 'sha256-" in policy and "unsafe" not in policy
    data = payload_of(path)
    assert data["seats"] == ["azuristan", "crimsonia", "control"]
    labels = [p["label"] for p in data["phases"]]
    assert labels[0] == "Setup" and labels.index("Round 2 · inject") < labels.index(
        "Round 2 · order"
    )
    assert [p["round"] for p in data["phases"]] == sorted(p["round"] for p in data["phases"])


def test_the_canary_is_only_in_its_own_seats_prompts_and_events(crisis):
    data = payload_of(write_view(crisis / "run"))
    holders = {c["role"] for c in data["calls"] if CANARY in call_text(data, c)}
    assert holders == {"crimsonia"}, "the secret reached another seat's prompt"
    for ev in data["events"]:
        if CANARY in text(data, ev["text"]):
            assert ev["audience"] == ["crimsonia"]
            assert set(ev.get("seen", {})) == {"crimsonia"}


def test_who_knew_what_follows_the_prompts(crisis):
    data = payload_of(write_view(crisis / "run"))
    plans = [e for e in data["events"] if e["kind"] == "plan"]
    assert plans
    for e in plans:
        # a plan goes to its author and the control; the control reads it when it adjudicates
        assert set(e["audience"]) == {e["author"], "control"}
        assert "control" in e["seen"]
        other = ({"azuristan", "crimsonia"} - {e["author"]}).pop()
        assert other not in e.get("seen", {})
        seen_at = data["calls"][e["seen"]["control"]]
        assert data["phases"][seen_at["p"]]["phase"] == "adjudicate"
        assert seen_at["p"] >= e["p"]


def test_costs_and_replay_commands(crisis):
    data = payload_of(write_view(crisis / "run", db="games.sqlite"))
    # a scripted game makes no model call: its answers are counted apart, never as calls
    answered = [c for c in data["calls"] if c["ev"] in ("scripted", "script", "human")]
    assert sum(c["other_answers"] for c in data["costs"].values()) == len(answered) > 0
    assert sum(c["calls"] for c in data["costs"].values()) == 0
    assert data["costs"]["control"]["models"] == ["scripted"]
    first = next(p for p in data["phases"] if p["round"] == 2)
    assert first["replay"] == (
        "wargraph replay --db games.sqlite --thread crisis-view --phase 2 --runs 3"
    )


def test_costs_count_model_calls_and_other_answers_apart():
    from wargraph.view.payload import costs

    def line(ev, role="north", attempt=1):
        return {
            "role": role,
            "ev": ev,
            "pt": 10,
            "ct": 5,
            "lat": 0.5,
            "attempt": attempt,
            "model": "m",
        }

    rows = costs(
        [
            line("call"),
            line("call", attempt=2),
            line("scripted"),
            line("human"),
            line("script"),
            line("fallback"),
        ],
        ["north", "south"],
    )
    north = rows["north"]
    assert (north["calls"], north["reasked"], north["other_answers"]) == (2, 1, 3)
    assert (north["prompt_tokens"], north["latency_s"], north["fallbacks"]) == (20, 1.0, 1)
    assert rows["south"]["calls"] == rows["south"]["other_answers"] == 0


def test_a_stored_game_is_shown_from_its_store(crisis, tmp_path):
    out = write_stored_view(str(crisis / "games.sqlite"), "crisis-view", tmp_path / "v.html")
    data = payload_of(out)
    assert data["thread"] == "crisis-view" and data["calls"], "the trace the game wrote is read"
    beside = write_stored_view(str(crisis / "games.sqlite"), "crisis-view")
    assert beside == crisis / "run" / "view.html"  # where the game wrote its files
    with pytest.raises(ViewError, match="no game with thread id"):
        write_stored_view(str(crisis / "games.sqlite"), "nope", tmp_path / "w.html")


def test_model_text_is_data_never_markup(crisis, tmp_path):
    """An answer holding markup stays text: it is inside the gzipped data, never in the HTML."""
    run = tmp_path / "run"
    run.mkdir()
    record = json.loads((crisis / "run" / "record.json").read_text())
    evil = '<script>alert("x")</script></script><img src=x onerror=alert(1)>'
    record["events"][-1]["text"] = evil
    record["scenario"]["title"] = "</title><script>alert(2)</script>"
    (run / "record.json").write_text(json.dumps(record))
    html = write_view(run).read_text()
    assert "<script>alert" not in html and "onerror" not in html and 'alert("x")' not in html
    assert "&lt;/title&gt;&lt;script&gt;" in html  # the title tag is escaped
    data = payload_of(run / "view.html")
    assert evil in [text(data, e["text"]) for e in data["events"]]


def test_plug_in_family_panels(crisis, tmp_path, monkeypatch):
    import wargraph.kernel.families as families

    fam = families.Family(
        "crisis", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph",
        view_panels="tests.unit.test_view:score_panel",
    )  # fmt: skip
    monkeypatch.setattr(families, "get", lambda name: fam)
    data = payload_of(write_view(crisis / "run", tmp_path / "v.html"))
    got = [p for ps in data["panels"].values() for p in ps]
    assert got == [{"kind": "table", "title": "Score", "columns": ["seat", "points"],
                    "rows": [["azuristan", "1"]]}]  # fmt: skip
    fam = families.Family(
        "crisis", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph",
        view_panels="tests.unit.test_view:broken_panel",
    )  # fmt: skip
    data = payload_of(write_view(crisis / "run", tmp_path / "w.html"))
    (shown,) = [p for ps in data["panels"].values() for p in ps]
    assert shown["title"] == "Panels not drawn" and "ZeroDivisionError" in text(data, shown["text"])
    fam = families.Family(
        "crisis", "wargraph.kernel.scenario:Scenario", "wargraph.graphs.crisis.graph",
        view_panels="tests.unit.test_view:score_panle",
    )  # fmt: skip
    data = payload_of(write_view(crisis / "run", tmp_path / "m.html"))  # misspelt: generic view
    assert not [p for ps in data["panels"].values() for p in ps if p.get("title") == "Score"]


def score_panel(record, phases, lines):
    return {len(phases) - 1: [{"kind": "table", "title": "Score", "columns": ["seat", "points"],
                               "rows": [["azuristan", "1"]]}]}  # fmt: skip


def broken_panel(record, phases, lines):
    return {0: [1 / 0]}


def test_view_command_prints_the_path_and_errors_are_one_line(crisis, tmp_path):
    ok = runner.invoke(app, ["view", str(crisis / "run"), "--out", str(tmp_path / "x.html")])
    assert ok.exit_code == 0 and ok.stdout.strip().endswith("x.html")
    assert (tmp_path / "x.html").is_file()
    bad_json = tmp_path / "bad"
    bad_json.mkdir()
    (bad_json / "record.json").write_text("{not json")
    cases = [
        ([str(tmp_path / "missing")], "not a game folder"),
        ([str(tmp_path)], "no such record"),
        ([str(bad_json)], "not a valid record.json"),
        ([], "give a game folder"),
        ([str(crisis / "run"), "--thread", "x"], "give a game folder"),
        (["--thread", "x", "--db", str(tmp_path / "none.sqlite")], "no such checkpoint database"),
    ]
    for args, why in cases:
        res = runner.invoke(app, ["view", *args])
        assert res.exit_code == 2, (args, res.output)
        said = " ".join(res.output.split())  # Rich wraps at the test terminal's width
        assert "error: " in said and why in said and "Traceback" not in said


def test_experiment_reports_link_each_games_view(crisis, tmp_path):
    import shutil

    from tests.unit.test_experiment_report import meta, outcomes
    from wargraph.evals.report import write_report

    games = outcomes()
    shown = games[0]
    shutil.copytree(crisis / "run", tmp_path / shown["folder"])
    view = tmp_path / shown["folder"] / "view.html"
    view.unlink(missing_ok=True)  # another test of the module may have written the source's
    report = write_report(tmp_path, meta(), games).read_text(encoding="utf-8")
    assert not view.exists() and "[view](" not in report  # pages only when asked
    report = write_report(tmp_path, meta(), games, pages=True).read_text(encoding="utf-8")
    assert view.is_file()
    assert f"| {shown['label']} | 0 | done | [view]({shown['folder']}/view.html) |" in report
    assert report.count("[view](") == 1  # the other games have no folder: listed, no link
    assert payload_of(view)["thread"] == "crisis-view"


@pytest.mark.parametrize(
    ("scenario", "title", "first_column"),
    [
        ("blotto", "Allocations per front", "front"),
        ("warring_states", "Opening board and stick", ""),
        ("haiwire", "Die roll", ""),
    ],
)
def test_family_panels(scenario, title, first_column, tmp_path):
    play(
        scenario,
        context=GameContext(model="scripted"),
        db=str(tmp_path / "games.sqlite"),
        out_dir=tmp_path / "run",
    )
    data = payload_of(write_view(tmp_path / "run"))
    tables = [p for ps in data["panels"].values() for p in ps if p["title"] == title]
    assert tables and tables[0]["columns"][0] == first_column
    for t in tables:
        assert all(len(r) == len(t["columns"]) for r in t["rows"]), "every row fills the table"
    if scenario == "warring_states":  # the secretary's verdicts carry every proposal it saw
        verdicts = [e for e in data["events"] if e["kind"] == "verdict"]
        assert verdicts and all(e.get("trail") for e in verdicts)
    if scenario == "blotto":
        won = {r[-1] for t in tables for r in t["rows"][:-2]}
        assert won and all("[" not in w for w in won), won


def test_odd_records_and_traces_still_give_a_page(tmp_path):
    """A record from an older or a plug-in game, a cut trace: the page is written, never a
    traceback (what cannot be read is left out)."""
    run = tmp_path / "odd"
    run.mkdir()
    record = {
        "thread_id": "odd",
        "scenario": {"family": "nosuch", "title": 7, "players": {"a": {}, "b": {}}},
        "events": [
            {"id": "1", "round": "x", "phase": None, "kind": "plan", "author": "a",
             "audience": "a", "text": None},
            {"round": 2, "phase": "order", "author": "b", "audience": ["a"], "text": "hi\n\n> q",
             "data": ["not", "a", "dict"]},
            "not an event",
        ],
        "world": {"diplomacy": {"phases": "nope"}},
    }  # fmt: skip
    (run / "record.json").write_text(json.dumps(record))
    (run / "trace.jsonl").write_text(
        "\n".join(
            [
                json.dumps({"event": "call", "role": "a", "node": "order", "round": 2,
                            "messages": "not a list", "output": {"plan": "x"}}),
                json.dumps({"event": "rejected", "role": "b", "round": "?", "reason": "bad JSON"}),
                json.dumps(["a", "list"]),
                '{"event": "call", "role": "a", "cut by a kill',
            ]
        )
    )  # fmt: skip
    data = payload_of(write_view(run))
    assert data["seats"] == ["a", "b"]
    assert len(data["events"]) == 2 and len(data["calls"]) == 2
    assert [c["ev"] for c in data["calls"]] == ["call", "rejected"]


def test_a_shared_text_counts_only_for_its_own_audience(tmp_path):
    """Two private verdicts with the same words, one to each seat: each seat's prompt quotes its
    own, so neither counts as having seen the other's (the words cannot say which it was)."""
    from wargraph.view import build_view

    same = "The secretary accepted your actions."
    record = {
        "thread_id": "t",
        "scenario": {"family": "crisis", "title": "T", "setting": "s",
                     "players": {"a": {}, "b": {}}},
        "events": [
            {"id": f"v.{s}", "round": 1, "phase": "order", "kind": "verdict", "author": "sec",
             "audience": [s], "text": same}
            for s in ("a", "b")
        ] + [{"id": "m", "round": 1, "phase": "order", "kind": "message", "author": "a",
              "audience": ["a"], "text": "a's own secret plan, said once"},
           {"id": "n", "round": 1, "phase": "adjudicate", "kind": "narration", "author": "sec",
            "audience": ["*"], "text": "Nothing happens."}],
    }  # fmt: skip
    trace = [
        {"event": "scripted", "role": s, "node": "adjudicate", "round": 1,
         "messages": [{"role": "human", "content": f"[verdict]\n> {same}" + (
             "\n> a's own secret plan, said once" if s == "b" else "")}]}
        for s in ("a", "b")
    ]  # fmt: skip
    data = build_view(record, trace)
    seen = {e["id"]: set(e.get("seen", {})) for e in data["events"]}
    assert seen == {"v.a": {"a"}, "v.b": {"b"}, "m": {"b"}, "n": set()}  # "m" leaked to b


def corrected_calls(crisis: Path, tmp_path: Path, **correction: Any) -> tuple[dict, list[dict]]:
    """The page's `corrected` calls once a correction of the game's first call is added to its
    trace; and that first call's trace line."""
    run = tmp_path / "run"
    shutil.copytree(crisis / "run", run)
    first = json.loads((run / "trace.jsonl").read_text(encoding="utf-8").split("\n")[0])
    keys = ("thread", "role", "node", "task", "ask_id", "round")
    fixed = {**{k: first[k] for k in keys if k in first}, "event": "corrected", **correction}
    with (run / "trace.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(fixed) + "\n")
    data = payload_of(write_view(run))
    return first, [c for c in data["calls"] if c["ev"] == "corrected"]


def test_names_corrected_in_an_answer_are_shown_with_the_call(crisis, tmp_path):
    first, shown = corrected_calls(
        crisis, tmp_path, corrections=[{"written": "Azurland", "name": "Azuristan"}]
    )
    assert [c["reason"] for c in shown] == ["names put right: Azurland -> Azuristan"]
    assert shown[0]["role"] == first["role"]


def test_an_answer_that_restated_the_prompt_says_what_was_left_out(crisis, tmp_path):
    _, (shown,) = corrected_calls(
        crisis,
        tmp_path,
        corrections=[],
        restated=["In two to four sentences describe what happens."],
        output={"plan": "We hold the border."},
    )
    assert shown["reason"] == (
        "the prompt's own words, restated, left out: "
        "\u201cIn two to four sentences describe what happens.\u201d"
    )
    assert shown["msgs"] == [] and shown["out"]  # no prompt was sent for it: none is offered
