"""Preflight and resuming on another model (issue 29, item 5): every distinct model of a game is
asked once before the game exists; a dead, refusing or wrong endpoint, or a GGUF file that is not
there, is one line naming the seat and the URL, exit 2, and no game. `resume --model` goes on
with another model, recorded per call and shown by `wargraph games`. Real loopback servers."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.reliability._support import FakeEndpoint
from wargraph.cli import app
from wargraph.models.chat import parse_model_ref
from wargraph.models.faults import fault_text
from wargraph.models.preflight import problem
from wargraph.runs.runner import list_runs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ModelsServer:
    """`GET /v1/models` answering `status` with the listed model ids (loopback, bounded)."""

    def __init__(self, status: int, ids: list[str]) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                body = json.dumps({"object": "list", "data": [{"id": i} for i in outer.ids]})
                data = body.encode() if outer.status == 200 else b'{"error": "no"}'
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.status, self.ids = status, ids
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def two_seats(tmp_path: Path) -> Path:
    path = tmp_path / "two.yaml"
    data = {"title": "Two neighbours", "setting": "A quarrel.", "rounds": 2}
    data["players"] = {"north": {}, "south": {}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _play(tmp_path: Path, *args: str, stdin: str = "") -> Any:
    db = str(tmp_path / "g.sqlite")
    argv = ["play", str(two_seats(tmp_path)), "--db", db, "--out", str(tmp_path / "out"), *args]
    return CliRunner().invoke(app, argv, input=stdin)


def _one_line(output: str) -> str:
    lines = [x for x in output.splitlines() if x.strip()]
    return " ".join(" ".join(lines).split())


def test_nothing_listening_is_one_line_naming_seat_and_url_and_no_game(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    res = _play(tmp_path, "--model", "scripted", "--role-model", f"north=openai:qwen@{url}")
    assert res.exit_code == 2, res.output
    text = _one_line(res.output)
    assert "seat north" in text and url in text and "unreachable" in text, text
    assert "no game was created" in text and "Traceback" not in res.output
    assert list_runs(tmp_path / "g.sqlite") == []
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "status, ids, expected",
    [
        (401, [], "unauthorised"),
        (403, [], "unauthorised"),
        (200, ["llama-3", "qwen2.5-7b"], "unknown model 'qwen' (it serves: llama-3, qwen2.5-7b)"),
    ],
)
def test_a_refusing_or_wrong_endpoint_stops_before_the_game(tmp_path, status, ids, expected):
    server = ModelsServer(status, ids)
    try:
        res = _play(tmp_path, "--model", f"openai:qwen@{server.url}")
    finally:
        server.stop()
    assert res.exit_code == 2, res.output
    text = _one_line(res.output)
    assert expected in text and server.url in text and "seats north, south" in text, text
    assert list_runs(tmp_path / "g.sqlite") == []


def test_a_served_model_and_a_listless_server_pass(tmp_path):
    server = ModelsServer(200, ["qwen"])
    fake = FakeEndpoint().start()  # answers chat only (GET is 501): it passes
    try:
        assert problem(parse_model_ref(f"openai:qwen@{server.url}")) is None
        assert problem(parse_model_ref(f"openai:fake@{fake.url}")) is None
    finally:
        server.stop()
        fake.stop()


def test_gguf_paths_that_are_not_models(tmp_path):
    res = _play(tmp_path, "--model", "gguf:/nope.gguf")
    assert res.exit_code == 2 and "no such GGUF file" in res.output and "/nope.gguf" in res.output
    assert "seats north, south" in _one_line(res.output)
    assert list_runs(tmp_path / "g.sqlite") == []
    text_file = tmp_path / "notes.gguf"
    text_file.write_text("not a model", encoding="utf-8")
    assert problem(parse_model_ref(f"gguf:{text_file}")) == "not a GGUF file"
    assert problem(parse_model_ref(f"gguf:{tmp_path}")) == "not a file"


def test_a_connection_error_names_the_url():
    from openai import APIConnectionError

    ref = parse_model_ref("openai:qwen@http://127.0.0.1:9/v1")
    exc = APIConnectionError(request=__import__("httpx").Request("POST", "http://127.0.0.1:9"))
    assert (
        fault_text(exc, ref) == "APIConnectionError: Connection error. (at http://127.0.0.1:9/v1)"
    )


def test_resume_on_another_model_is_recorded_and_listed(tmp_path):
    """Round 1 on one endpoint, a person's seat waits; resumed with `--model` on another: the
    record says which calls ran on which model, `games` shows the change."""
    first, second = FakeEndpoint(reply="We hold.").start(), FakeEndpoint(reply="We talk.").start()
    db = str(tmp_path / "g.sqlite")
    try:
        stopped = _play(tmp_path, "--model", f"openai:fake@{first.url}", "--human", "south")
        assert stopped.exit_code == 3, stopped.output
        thread = next(iter(list_runs(db)))
        runner = CliRunner()
        bad = runner.invoke(
            app, ["resume", "--thread", thread, "--db", db, "--role-model", "nobody=scripted"]
        )
        assert bad.exit_code == 2 and "no such seat" in bad.output
        dead = f"openai:fake@http://127.0.0.1:{_free_port()}/v1"
        bad = runner.invoke(app, ["resume", "--thread", thread, "--db", db, "--model", dead])
        assert bad.exit_code == 2 and "the game was not resumed" in _one_line(bad.output)
        resumed = runner.invoke(
            app,
            ["resume", "--thread", thread, "--db", db, "--model", f"openai:fake@{second.url}"],
            input="We wait.\n" * 8,
        )
        assert resumed.exit_code == 0, resumed.output
        listed = runner.invoke(app, ["games", "--db", db])
    finally:
        first.stop()
        second.stop()
    assert second.requests and first.requests
    record = json.loads((tmp_path / "out" / "record.json").read_text())
    models = record["models"]
    a, b = models[f"openai:fake@{first.url}"], models[f"openai:fake@{second.url}"]
    assert a["calls"] == len(first.requests) and b["calls"] == len(second.requests)
    assert a["last_round"] <= b["first_round"]
    from wargraph.runs.listing import list_games

    (row,) = list_games(db)
    assert row.models == f"openai:fake@{first.url}; from round 1: openai:fake@{second.url}"
    assert listed.exit_code == 0 and "models" in listed.output


def _experiment(tmp_path: Path, model: str, judge: str | None = None) -> Path:
    path = tmp_path / "study.yaml"
    data: dict[str, Any] = {
        "name": "study",
        "scenario": str(two_seats(tmp_path)),
        "runs": 2,
        "model": "scripted",
        "grid": {"north": {"local": {}, "remote": {"role_models.north": model}}},
    }
    if judge:
        data["questions"] = [{"id": "war", "text": "Was there a war?"}]
        data["judge"] = {"model": judge}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_experiment_checks_its_judge_too(tmp_path):
    from wargraph.evals.experiment.preflight import models_of, preflight_experiment
    from wargraph.evals.experiment.spec import ExperimentError, load_experiment

    exp = load_experiment(_experiment(tmp_path, "scripted", judge="gguf:/nope.gguf"))
    users = models_of(exp)
    assert users["gguf:/nope.gguf"] == ["the judge"]
    assert users["scripted"][0].startswith("condition local: north, south")
    with pytest.raises(ExperimentError, match="the judge.*no such GGUF file"):
        preflight_experiment(exp)


def _tournament(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "cup.yaml"
    data = {
        "name": "cup",
        "scenario": "blotto",
        "set": {"rounds": 1, "blotto.exchanges": 0, "questions": []},
        "entrants": {"fixed": {"model": "bot:fixed"}, "remote": {"model": model}},
        "rotations": 1,
        "score": "points",
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "make", "who"),
    [
        ("experiment", _experiment, "condition remote: north"),
        ("tournament", _tournament, "entrant remote"),
    ],
)
def test_a_study_whose_model_cannot_answer_plays_no_game(tmp_path, command, make, who):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app, [command, str(make(tmp_path, f"openai:qwen@{url}")), "--out", str(out)]
    )
    assert res.exit_code == 2, res.output
    text = _one_line(res.output)
    assert url in text and "unreachable" in text and who in text, text
    assert f"no game of the {command} was played" in text and "Traceback" not in res.output
    assert not (out / "games").exists()


def test_a_tournament_names_its_entrants_and_house_model(tmp_path):
    import wargraph.evals.tournament.play as play
    from wargraph.evals.tournament import load_tournament

    t = load_tournament(_tournament(tmp_path, "gguf:/nope.gguf"))
    s = play.setup(t)
    users = play.models_of(s, play.schedule(s))
    assert users["gguf:/nope.gguf"] == ["entrant remote"]
    assert users["bot:fixed"] == ["entrant fixed"]
    assert "the house model" in users[t.model]
