"""The model cache (wargraph.models.cache) against a real loopback OpenAI-compatible endpoint that
counts its requests and numbers its answers (each answer differs from every other, so a game
that matches an earlier one byte for byte took its answers from the cache, not the server).

A crisis experiment run again into a new folder with the cache makes 0 requests and writes the
same records; run with more runs it pays only for the new games; a changed setting or model is
never answered from the cache; the trace, the outcomes and the report say what was reused."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import tests.capable_standin as standin_module
from tests.capable_standin import CapableStandIn
from wargraph.evals.experiment import load_experiment, run_experiment
from wargraph.kernel.context import GameContext
from wargraph.models import cache as model_cache
from wargraph.runs.runner import play
from wargraph.runs.trace import read_trace


@pytest.fixture
def endpoint(monkeypatch):
    """The capable stand-in, its every answer numbered: no two requests get the same answer."""
    shown = standin_module.answer
    count = [0]

    def numbered(body: dict[str, Any]) -> dict[str, Any]:
        message = shown(body)
        count[0] += 1
        if message.get("content") and not standin_module.schema_of(body):
            # first: a view that shortens a long text keeps its start
            message["content"] = f"(answer {count[0]}) {message['content']}"
        return message

    monkeypatch.setattr(standin_module, "answer", numbered)
    with CapableStandIn() as server:
        yield server


def crisis(endpoint: CapableStandIn, runs: int, cache: str | bool) -> Any:
    return load_experiment(crisis_spec(endpoint, runs, cache))


def crisis_spec(endpoint: CapableStandIn, runs: int, cache: str | bool) -> dict[str, Any]:
    return {
        "name": "cached_crisis",
        "scenario": "azuristan_crimsonia",
        "set": {"rounds": 1, "questions": []},
        "runs": runs,
        "model": f"openai:frontier@{endpoint.url}",
        "concurrency": 2,
        "grid": {
            "pairing": {
                "dove-dove": {
                    "players.azuristan.persona": "dove",
                    "players.crimsonia.persona": "dove",
                },
                "hawk-hawk": {
                    "players.azuristan.persona": "hawk",
                    "players.crimsonia.persona": "hawk",
                },
            }
        },
        "questions": [{"id": "conflict", "text": "Did armed conflict occur?"}],
        "cache": cache,
    }


def game_of(folder: Path) -> str:
    """The record as the game left it, byte for byte: everything but `usage` and `models`, which
    say how the game was paid for (calls made, answers reused, seconds), and `db`, where it is
    stored (each experiment folder has its own store)."""
    text = (folder / "record.json").read_text()
    rec = json.loads(text)
    kept = {k: v for k, v in rec.items() if k not in ("usage", "models", "db")}
    return json.dumps(kept, indent=2, ensure_ascii=False)


def test_a_crisis_experiment_run_again_with_the_cache_makes_no_call(tmp_path, endpoint):
    answers = tmp_path / "answers.sqlite"
    first = run_experiment(crisis(endpoint, 1, str(answers)), tmp_path / "a", show_progress=False)
    paid = len(endpoint.requests)
    assert first.counts["played"] == 2 and not first.counts["crashed"], first.counts
    made = sum(o["model_calls"] for o in first.outcomes)
    assert paid > made >= 6  # the games' calls, and the judge's
    assert all(o["cached_calls"] == 0 for o in first.outcomes)

    again = run_experiment(crisis(endpoint, 1, str(answers)), tmp_path / "b", show_progress=False)
    assert len(endpoint.requests) == paid, "the re-run asked the endpoint"
    assert again.counts["played"] == 2
    for o, before in zip(again.outcomes, first.outcomes, strict=True):
        assert game_of(tmp_path / "b" / o["folder"]) == game_of(tmp_path / "a" / o["folder"])
        assert (o["model_calls"], o["cached_calls"]) == (0, before["model_calls"])
        assert o["tokens"] == 0  # a reused answer is no cost
        assert o["answers"] == before["answers"]  # the judge's answers reused too
        trace = read_trace(tmp_path / "b" / o["folder"] / "trace.jsonl")
        reused = [e for e in trace if e.get("event") == "cached"]
        assert len(reused) == before["model_calls"] and all(e["cached"] for e in reused)
        assert not any(e.get("event") == "call" for e in trace)
        rec = json.loads((tmp_path / "b" / o["folder"] / "record.json").read_text())
        assert sum(r.get("cached", 0) for r in rec["usage"]["per_role"].values()) == len(reused)
    rows = list(csv.DictReader((tmp_path / "b" / "outcomes.csv").open()))
    assert [r["model_calls"] for r in rows] == ["0", "0"]
    assert sum(int(r["cached_calls"]) for r in rows) == made
    assert f"0 made, {made} answers reused from the model cache" in again.report.read_text()

    # more runs: only the new games' calls are paid
    more = run_experiment(crisis(endpoint, 2, str(answers)), tmp_path / "c", show_progress=False)
    new = [o for o in more.outcomes if o["run"] == 1]
    old = [o for o in more.outcomes if o["run"] == 0]
    assert all(o["cached_calls"] == 0 and o["model_calls"] > 0 for o in new)
    assert all(o["model_calls"] == 0 for o in old)
    judged = len(new)  # one question, asked once per new game
    assert len(endpoint.requests) - paid == sum(o["model_calls"] for o in new) + judged


def test_the_cache_never_crosses_models_or_settings(tmp_path, endpoint):
    where = str(tmp_path / "answers.sqlite")

    def one(name: str, seed: int = 1, **settings: Any) -> list[dict[str, Any]]:
        out = tmp_path / name
        ctx = GameContext(
            model=settings.pop("model", f"openai:frontier@{endpoint.url}"),
            seed=seed,
            model_cache=where,
            **settings,
        )
        play(
            "azuristan_crimsonia",
            overrides=["rounds=1"],
            context=ctx,
            db=None,
            thread_id=name,
            out_dir=out,
        )
        return read_trace(out / "trace.jsonl")

    def events(trace: list[dict[str, Any]], kind: str) -> int:
        return sum(e.get("event") == kind for e in trace)

    base = one("base")
    calls = events(base, "call")
    assert calls >= 3 and events(base, "cached") == 0
    assert events(one("same"), "cached") == calls  # the same game: every answer reused
    for name, change in {
        "hotter": {"temperature": 0.2},
        "longer": {"max_tokens": 2000},  # above the profile's least (1024)
        "seeded": {"seed": 2},
        "small": {"profile": "small"},  # a served model plays capable by default
        # the same server under another address is another model reference
        "other": {"model": f"openai:frontier@{endpoint.url.replace('127.0.0.1', 'localhost')}"},
    }.items():
        trace = one(name, **change)
        assert events(trace, "cached") == 0, f"{name}: answered from another setting's calls"
        assert events(trace, "call") >= 3
    with sqlite3.connect(where) as conn:
        models = {m for (m,) in conn.execute("SELECT DISTINCT model FROM wargraph_model_cache")}
    assert models == {
        f"openai:frontier@{endpoint.url}",
        f"openai:frontier@{endpoint.url.replace('127.0.0.1', 'localhost')}",
    }


def test_a_cache_that_cannot_be_opened_is_one_clear_error(tmp_path):
    (tmp_path / "folder.sqlite").mkdir()
    from wargraph.store.errors import StoreError

    with pytest.raises(StoreError, match="is a folder"):
        model_cache.check(model_cache.location(str(tmp_path / "folder.sqlite"), None))
    with pytest.raises(StoreError, match="games' store is not known"):
        model_cache.location(True, None)
    with pytest.raises(StoreError, match="expected true"):
        model_cache.location(3, "x.sqlite")


def test_a_compared_replay_reuses_the_baselines_calls_the_change_does_not_reach(tmp_path, endpoint):
    """`replay --compare --cache-at`: the change (one side's persona) never reaches the other
    side's planning call, so the change's runs take those answers from the baseline's."""
    from wargraph.runs.replay_compare import compare

    db = str(tmp_path / "g.sqlite")
    where = str(tmp_path / "answers.sqlite")
    ctx = GameContext(model=f"openai:frontier@{endpoint.url}", seed=4)
    play(
        "azuristan_crimsonia",
        overrides=["rounds=2"],
        context=ctx,
        db=db,
        thread_id="crisis",
        out_dir=tmp_path / "game",
    )
    before = len(endpoint.requests)
    both = compare(
        db=db,
        thread_id="crisis",
        phase="2",
        runs=2,
        overrides=["players.azuristan.persona=hawk"],
        out_dir=tmp_path / "cmp",
        cache=where,
    )
    assert len(both.baseline.runs) == len(both.change.runs) == 2

    def traced(arm: str) -> list[dict[str, Any]]:
        return [
            e
            for k in (1, 2)
            for e in read_trace(tmp_path / "cmp" / arm / f"run_{k}" / "trace.jsonl")
        ]

    baseline, change = traced("baseline"), traced("change")
    assert not any(e["event"] == "cached" for e in baseline)
    reused = [e for e in change if e["event"] == "cached"]
    assert reused and {e["role"] for e in reused} == {"crimsonia"}
    asked = [e for e in change if e["event"] == "call"]
    assert {e["role"] for e in asked} >= {"azuristan", "control"}
    made = sum(e["event"] == "call" for e in baseline) + len(asked)
    assert len(endpoint.requests) - before == made


def test_a_tournament_run_again_with_the_cache_pays_nothing(tmp_path, endpoint):
    from wargraph.evals.tournament.run import run_tournament
    from wargraph.evals.tournament.spec import load_tournament

    def tournament(out: str) -> Any:
        t = load_tournament(
            {
                "name": "cached_blotto",
                "scenario": "blotto",
                "set": {"rounds": 1, "blotto.exchanges": 0, "questions": []},
                "entrants": {
                    "model": {"model": f"openai:frontier@{endpoint.url}"},
                    "even": {"model": "bot:even"},
                },
                "games_per_pairing": 2,
                "score": "points",
                "cache": str(tmp_path / "answers.sqlite"),
            }
        )
        return run_tournament(t, tmp_path / out, show_progress=False)

    tournament("a")
    paid = len(endpoint.requests)
    first = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert paid > 0 and first["model_calls"] > 0 and first["cached_calls"] == 0
    tournament("b")
    assert len(endpoint.requests) == paid
    again = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert (again["model_calls"], again["cached_calls"]) == (0, first["model_calls"])
    assert again["games"] and [g["scores"] for g in again["games"]] == [
        g["scores"] for g in first["games"]
    ]
    report = (tmp_path / "b" / "report.md").read_text()
    assert f"{first['model_calls']} answers reused from the model cache" in report


def test_the_experiment_command_says_what_the_cache_paid_for(tmp_path, endpoint, monkeypatch):
    """`wargraph experiment FILE --cache-at WHERE`, run again into another folder: no chat
    request (the preflight only lists the server's models) and a closing line that says so."""
    import yaml
    from typer.testing import CliRunner

    from wargraph.cli import app

    monkeypatch.chdir(tmp_path)
    spec = crisis_spec(endpoint, 1, False)
    (tmp_path / "crisis.yaml").write_text(yaml.safe_dump(spec))

    def run(out: str) -> str:
        said = CliRunner().invoke(
            app, ["experiment", "crisis.yaml", "--out", out, "--cache-at", "answers.sqlite"]
        )
        assert said.exit_code == 0, said.output
        return " ".join(said.output.split())

    run("a")
    paid = len(endpoint.requests)
    said = run("b")
    assert len(endpoint.requests) == paid
    assert "model calls: 0 made," in said and "answers reused from the cache" in said
