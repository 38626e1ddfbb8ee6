"""Every report page wargraph writes (experiment, eval, replay, tournament) shows text it did not
write as text: game text holding `<script>`, `<svg onload>`, `<img onerror>`, a meta refresh or a
Markdown image of a URL, opened in real headless Chromium, makes no request and no navigation."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.unit.test_experiment_report import meta, outcomes
from wargraph.evals.report import write_report
from wargraph.evals.waragent import write_eval_report
from wargraph.runs.replay import ReplayResult
from wargraph.runs.replay import write_report as write_replay_report

pytestmark = pytest.mark.browser

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "wargraph" / "scenarios" / "tournaments"


@pytest.fixture(scope="module")
def listener():
    """A loopback listener: every request any page makes to it is kept."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<p>reached</p>")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def hostile(base: str, where: str) -> str:
    """One line of game text trying every way HTML offers to run or fetch something."""
    return (
        f"<script>fetch('{base}/{where}/script')</script>"
        f"<svg onload=\"fetch('{base}/{where}/svg')\"></svg>"
        f'<img src="{base}/{where}/img" onerror="fetch(\'{base}/{where}/onerror\')">'
        f'<meta http-equiv="refresh" content="0;url={base}/{where}/meta">'
        f"![x]({base}/{where}/markdown-image)"
    )


def experiment_page(out: Path, base: str) -> Path:
    m = meta(
        description=hostile(base, "description"),
        scenario=hostile(base, "scenario"),
    )
    m["conditions"][0]["overrides"] = {"setting": hostile(base, "setting")}
    m["conditions"][0]["levels"] = {"pairing": hostile(base, "grid")}
    games = outcomes()
    for o in games:
        o["judgements"][0]["quotes"] = [{"line": hostile(base, "quote"), "match": "exact"}]
    games[0]["folder"] = "games/" + hostile(base, "folder").replace("/", "_")
    games[0]["levels"] = {"pairing": hostile(base, "grid")}
    return write_report(out, m, games).with_suffix(".html")


def replay_page(out: Path, base: str) -> Path:
    result = ReplayResult(
        source={
            "db": hostile(base, "db"),
            "thread_id": "t",
            "phase": "F1901M",
            "checkpoint_id": "c1",
            "as_node": "adjudicate",
        },
        change={"overrides": [hostile(base, "override")], "model": None, "phases": 1},
        runs=[{"run": 1, "thread_id": "t-1", "seed": 1, "outcome": {"note": hostile(base, "run")}}],
        original={"note": hostile(base, "original")},
        summary={"note": {hostile(base, "key"): hostile(base, "summary")}},
        out_dir=out,
    )
    write_replay_report(result, out)
    return out / "replay.html"


def eval_page(out: Path, base: str) -> Path:
    result = {
        "scenario": hostile(base, "eval-scenario"),
        "headline": hostile(base, "headline"),
        "window": hostile(base, "window"),
        "runs": [{"run": hostile(base, "run"), "rounds": 3}],
        "summary": {},
    }
    return write_eval_report(result, out)


def tournament_page(out: Path, base: str) -> Path:
    from wargraph.evals.tournament import load_tournament, run_tournament

    data = yaml.safe_load((SHIPPED / "blotto_bots.yaml").read_text(encoding="utf-8"))
    data["description"] = hostile(base, "tournament")
    data["entrants"] = {
        "best_response": {"model": "bot:best_response"},
        "even": {"model": "bot:even"},
    }
    data["games_per_pairing"], data["set"]["rounds"] = 2, 1
    run_tournament(load_tournament(data), out, show_progress=False)
    return out / "report.html"


@pytest.mark.parametrize(
    "write", [experiment_page, eval_page, replay_page, tournament_page], ids=lambda f: f.__name__
)
def test_a_report_page_runs_no_game_text(write, tmp_path, browser, listener):
    base, hits = listener
    page_path = write(tmp_path, base)
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    url = page_path.as_uri()
    try:
        page.goto(url)
        page.wait_for_timeout(1500)  # time for an onload, an onerror or a refresh to fire
        assert page.url == url  # no navigation
    finally:
        page.close()
    assert hits == []
    assert [r for r in requests if not r.startswith("file:")] == []
    html = page_path.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "<script" not in html
    assert "&lt;script&gt;" in html  # the text is still there, as text
