"""What a person starting a server reads: `wargraph serve` puts its links on stdout (the
facilitator's alone on the last line) and its own notes on stderr, and takes how many games run
at once (`--jobs`); a bare `langgraph dev` prints the facilitator's token on a plain line, and
its 401 says where that line is."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import httpx
import pytest

from tests.server.support import wait_for
from wargraph.server.seats import TOKEN_LINE
from wargraph.server.serve import DEFAULT_CONFIG, OFFLINE_ENV, free_port

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WARGRAPH_SECRET"}
    return {**env, **OFFLINE_ENV}


def _stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_serve_prints_its_links_on_stdout_and_runs_the_games_at_once_it_is_told(tmp_path):
    state, port = tmp_path / "state", free_port()
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wargraph.cli", "serve", "--port", str(port)]
        + ["--state-dir", str(state), "--jobs", "2"],
        stdout=out.open("wb"),
        stderr=err.open("wb"),
        env=_env(),
        start_new_session=True,
    )
    try:
        link = re.compile(rf"^http://127\.0\.0\.1:{port}/facilitator#token=f\.[0-9a-f]+$", re.M)
        wait_for(lambda: link.search(out.read_text()), "the facilitator link on stdout", 90)
        printed = out.read_text().rstrip("\n").split("\n")
        assert link.match(printed[-1]), printed  # `tail -1` reads it
        assert f"Players' page: http://127.0.0.1:{port}/play" in printed[0]
        assert "\x1b[" not in out.read_text(), "colour codes on stdout"
        notes = err.read_text()
        assert "ready at" in notes and "Games at once: 2" in notes
        assert "/facilitator#token=" not in notes, "the link is on stderr too"
        ps = subprocess.run(["ps", "-ewwo", "args"], capture_output=True, text=True).stdout
        server = [line for line in ps.splitlines() if str(state) in line and " dev " in line]
        assert server and "--n-jobs-per-worker 2" in server[0], server
    finally:
        assert _stop(proc) == 0


def test_serve_refuses_jobs_out_of_range(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "wargraph.cli", "serve", "--jobs", "0"]
        + ["--state-dir", str(tmp_path / "state")],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode == 2 and "--jobs" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists()


def test_a_bare_langgraph_dev_says_where_the_token_is(tmp_path):
    port = free_port()
    log = tmp_path / "out.log"
    # the served default (graphs by module name), as a user's own langgraph.json would be
    (tmp_path / "langgraph.json").write_text(json.dumps(DEFAULT_CONFIG), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "wargraph.server.launch", "dev", "--no-browser", "--no-reload"]
        + ["--port", str(port), "--config", "langgraph.json"],
        cwd=tmp_path,  # langgraph dev keeps its state in ./.langgraph_api
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=_env(),
        start_new_session=True,
    )
    try:
        line = re.compile(re.escape(TOKEN_LINE) + r" (f\.[0-9a-f]+) .*Facilitator page: (\S+)")

        def printed():
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            return line.search(log.read_text(errors="replace"))

        found = wait_for(printed, TOKEN_LINE, 90)
        token, page = found.groups()
        assert page == f"http://127.0.0.1:{port}/facilitator#token={token}"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_for(lambda: client.get("/ok").status_code == 200, "the server")
            refused = client.post("/threads/search", json={})
            assert refused.status_code == 401
            assert TOKEN_LINE in refused.json()["detail"], refused.text
            assert "wargraph serve" in refused.json()["detail"]
            meta = client.get("/openapi.json")
            assert meta.status_code == 401 and TOKEN_LINE in meta.text, meta.text
            ok = client.post(
                "/threads/search", json={}, headers={"Authorization": f"Bearer {token}"}
            )
            assert ok.status_code == 200, ok.text
    finally:
        _stop(proc)
