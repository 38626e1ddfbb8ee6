"""The held-out Security Council (tests/plugins/security_council), written from docs/new-game.md
and the public API alone: it plays with the scripted decider, keeps each round's briefing to its
member, shows each answer to the draft to the members who answer after it, counts vetoes, takes
chosen votes from `--script`, renders its votes in `wargraph view`, and stays within 250 lines."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import wargraph.kernel.families as families
from tests.plugins.security_council import world as council_world
from wargraph import GameContext, ScenarioError, load_scenario
from wargraph.cli import app
from wargraph.runs.runner import play
from wargraph.view.panels import panels_for
from wargraph.view.payload import build_payload

PACKAGE = Path(council_world.__file__).parent
LIMIT = 250  # physical lines of the game's Python files (issue #31)
MEMBERS = ["arvenia", "borlund", "calder", "dravia", "estmark", "fenwick", "galmor"]
PERMANENT = MEMBERS[:5]
runner = CliRunner()


@pytest.fixture(scope="module")
def family():
    """The plug-in's entry point, as `pip install` of it would declare it, for this module."""
    ep = importlib.metadata.EntryPoint(
        name="security_council",
        value="tests.plugins.security_council:FAMILY",
        group=families.GROUP,
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            families.importlib.metadata,
            "entry_points",
            lambda group=None: [ep] if group in (None, ep.group) else [],
        )
        families.refresh()
        assert families.load("security_council").name == "security_council"
        yield
    families.refresh()


@pytest.fixture(scope="module")
def game(family, tmp_path_factory) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    out = tmp_path_factory.mktemp("council")
    record = play(
        "security_council", context=GameContext(model="scripted", seed=0), db=None, out_dir=out
    ).record
    trace = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    return record, trace, out


def prompt_of(call: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in call["messages"])


def events_of(record: dict[str, Any], kind: str, rnd: int | None = None) -> list[dict[str, Any]]:
    return [e for e in record["events"] if e["kind"] == kind and rnd in (None, e["round"])]


def physical_lines(package: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in package.rglob("*.py"))


def test_the_game_fits_in_250_lines_and_the_count_would_refuse_251(tmp_path):
    assert 0 < physical_lines(PACKAGE) <= LIMIT, physical_lines(PACKAGE)
    (tmp_path / "a.py").write_text("x = 1\n" * 200)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n" * 51)
    assert physical_lines(tmp_path) == 251 > LIMIT


def test_the_game_uses_only_the_public_api():
    for path in PACKAGE.rglob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith(("import wargraph", "from wargraph")):
                module = line.split()[1]
                public = module in ("wargraph", "wargraph.worlds")
                assert public or module.startswith("wargraph.nodes."), (path, line)


def test_a_scripted_game_plays_every_phase_and_the_count_follows_the_rules(game):
    record, _, _ = game
    assert record["done"] and not record.get("error")
    for rnd in (1, 2, 3):
        pen = MEMBERS[rnd - 1]
        assert [e["author"] for e in events_of(record, "draft", rnd)] == [pen]
        assert (
            len(events_of(record, "answer", rnd)) == 6 and len(events_of(record, "vote", rnd)) == 7
        )
        assert events_of(record, "message", rnd) and len(events_of(record, "narration", rnd)) == 1
        assert all(
            len(e["audience"]) == 2 for e in events_of(record, "message", rnd)
        )  # whispers only
        [outcome] = events_of(record, "outcome", rnd)
        votes = {e["author"]: e["text"] for e in events_of(record, "vote", rnd)}
        yes = sum(v == "yes" for v in votes.values())
        vetoes = sorted(m for m, v in votes.items() if v == "no" and m in PERMANENT)
        assert outcome["data"]["votes"] == votes and sorted(outcome["data"]["vetoes"]) == vetoes
        assert outcome["data"]["adopted"] == (yes >= 4 and not vetoes)
        assert sorted(e["text"].split()[3][:-2] for e in events_of(record, "veto", rnd)) == vetoes
    measures = council_world.record_measures(record, None)
    assert measures["rounds"] == 3 and measures["vetoed"] == sum(
        bool(e["data"]["vetoes"]) for e in events_of(record, "outcome")
    )


def test_each_briefing_reaches_its_member_alone_in_every_prompt_and_the_record(game):
    record, trace, _ = game
    briefings = events_of(record, "inject")
    assert [(e["round"], e["audience"]) for e in briefings] == [
        (1, ["fenwick"]),
        (2, ["borlund"]),
        (3, ["galmor"]),
    ]
    for b in briefings:
        member, secret = b["audience"][0], b["text"]
        others = [c for c in trace if c["role"] != member]
        assert others and not [c["ask_id"] for c in others if secret in prompt_of(c)]
        # the member reads it from its round on (so the check above can find a leak)
        assert any(secret in prompt_of(c) for c in trace if c["role"] == member)
        assert [e["id"] for e in record["events"] if secret in e["text"]] == [b["id"]]


def test_each_answer_to_the_draft_is_seen_by_the_members_after_it_not_before(game):
    record, trace, _ = game
    for rnd in (1, 2, 3):
        at = rnd - 1  # the penholder's seat; the others answer from the next seat on
        order = MEMBERS[at + 1 :] + MEMBERS[:at]
        asked = [c for c in trace if c["task"] == "answer" and c["round"] == rnd]
        assert [c["role"] for c in asked] == order
        said = {e["author"]: e["text"] for e in events_of(record, "answer", rnd)}
        for k, call in enumerate(asked):
            seen = [m for m in order if said[m] in prompt_of(call)]
            assert seen == order[:k], (rnd, call["role"])


def _votes(tmp_path: Path, name: str, scripts: dict[str, Any]) -> dict[str, Any]:
    out = tmp_path / name
    args = ["play", "security_council", "--model", "scripted", "--rounds", "1", "--out", str(out)]
    args += ["--db", str(tmp_path / f"{name}.sqlite")]
    for seat, script in scripts.items():
        (tmp_path / f"{name}-{seat}.yaml").write_text(yaml.safe_dump(script))
        args += ["--script", f"{seat}={tmp_path / f'{name}-{seat}.yaml'}"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    return json.loads((out / "record.json").read_text())


YES = {"vote": "yes"}


def test_chosen_votes_adopt_a_draft_and_a_permanent_no_vetoes_it(family, tmp_path):
    adopted = _votes(
        tmp_path,
        "adopted",
        {
            **dict.fromkeys(["arvenia", "borlund", "calder", "fenwick"], YES),
            "estmark": {"vote": " YES"},  # the tellers read it as yes
            "dravia": {"vote": "abstain"},
            "galmor": {"vote": "maybe", "revise": "abstain"},  # refused, then revised
        },
    )
    [outcome] = events_of(adopted, "outcome")
    assert outcome["data"]["adopted"] and outcome["data"]["yes"] == 5
    assert outcome["data"]["votes"]["galmor"] == "abstain" and not events_of(adopted, "veto")
    [told] = [e for e in events_of(adopted, "verdict") if e["author"] == "tellers"]
    assert told["audience"] == ["galmor"] and told["data"]["status"] == "accepted"
    assert "not yes, no or abstain" in told["data"]["trail"][0]["reasons"][0]

    vetoed = _votes(
        tmp_path,
        "vetoed",
        {
            **dict.fromkeys(["arvenia", "borlund", "calder", "estmark"], YES),
            "dravia": {"vote": "no"},
            "fenwick": {"vote": "no"},  # an elected member's no is no veto
            "galmor": {"vote": "maybe", "revise": "perhaps"},  # still refused: counted abstain
        },
    )
    [outcome] = events_of(vetoed, "outcome")
    assert outcome["data"]["yes"] == 4 and outcome["data"]["vetoes"] == ["dravia"]
    assert not outcome["data"]["adopted"] and "vetoed by dravia" in outcome["text"]
    assert [e["text"] for e in events_of(vetoed, "veto")] == [
        "The tellers record dravia's no as a veto."
    ]
    [told] = [e for e in events_of(vetoed, "verdict") if e["author"] == "tellers"]
    assert told["data"]["status"] == "abstained" and outcome["data"]["votes"]["galmor"] == "abstain"


def test_the_view_page_builds_with_a_table_of_votes_each_round(game):
    record, _, out = game
    r = runner.invoke(app, ["view", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "view.html").stat().st_size > 0
    page = build_payload(record, [], panels=panels_for(record))
    tables = [p for ps in page["panels"].values() for p in ps if p.get("title") == "Votes"]
    assert len(tables) == 3
    assert [row[0] for row in tables[0]["rows"]] == MEMBERS
    vetoed = {row[0] for t in tables for row in t["rows"] if row[2] == "veto"}
    assert vetoed == {m for e in events_of(record, "outcome") for m in e["data"]["vetoes"]}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("players.hal={persona: x}", "the Council has seven members"),
        ("council.permanent=[arvenia, nobody]", "permanent: not members: nobody"),
        ("injects=[{round: 1, text: x}]", "a briefing goes to one member alone"),
        ("injects=[{round: 1, text: x, audience: [control]}]", "one member alone"),
    ],
)
def test_a_bad_council_is_refused_with_a_clear_message(family, override, message):
    with pytest.raises(ScenarioError, match=message):
        load_scenario("security_council", [override])


@pytest.mark.slow  # mypy: half a minute or more on 2 shared cores
def test_the_game_type_checks_under_the_projects_settings(monkeypatch):
    from mypy import api

    root = PACKAGE.parents[2]
    monkeypatch.chdir(root)  # the project's mypy settings (pyproject.toml)
    monkeypatch.setenv("MYPYPATH", str(root / "src"))  # wargraph as source, never as Any
    cache = ["--cache-dir", str(root / ".mypy_cache")]
    out, err, status = api.run(["--follow-imports=silent", *cache, str(PACKAGE)])
    assert status == 0, out + err  # e.g. build_game takes any mapping of phases (not only a dict)
