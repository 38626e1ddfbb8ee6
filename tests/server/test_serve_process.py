"""`serve()` as a person runs it: in the foreground, printing the facilitator's link; Ctrl-C (or
SIGTERM) stops the server and its children; a restart in the same state folder keeps the links
and the games."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server.support import bearer, wait_for
from wargraph.server.serve import free_port

pytestmark = [pytest.mark.server, pytest.mark.timeout(150)]

LINK = re.compile(r"(http://127\.0\.0\.1:\d+)/facilitator#token=(f\.[0-9a-f]+)")


def _ignore_sigint() -> None:
    # As a background job of a script (or under a parent that ignores it) a process starts with
    # SIGINT ignored; `serve` must still stop on Ctrl-C. Regression: it ignored SIGINT then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _serve(state: Path, port: int, log: Path) -> subprocess.Popen:
    code = (
        "import sys\nfrom wargraph.server.serve import serve\n"
        f"sys.exit(serve(port={port}, state_dir={str(state)!r}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "WARGRAPH_SECRET"}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=log.open("wb"),  # the links
        stderr=log.with_suffix(".err").open("wb"),  # serve's own notes
        env=env,
        start_new_session=True,
        preexec_fn=_ignore_sigint,
    )


def _link(log: Path) -> tuple[str, str]:
    def found():
        m = LINK.search(log.read_text(errors="replace"))
        return m.groups() if m else None

    return wait_for(found, "the facilitator link on stdout", timeout=60)


def _interrupt(proc: subprocess.Popen, signum: int = signal.SIGINT) -> int:
    proc.send_signal(signum)  # SIGINT is what Ctrl-C sends to the foreground process
    try:
        return proc.wait(90)  # a loaded machine shuts the server down slowly
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _langgraph_children(state: Path) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "langgraph" in line and str(state) in line]


def test_serve_in_the_foreground_and_restart_in_the_same_state_folder(tmp_path):
    state = tmp_path / "state"
    port = free_port()
    first = _serve(state, port, tmp_path / "first.log")
    try:
        url, token = _link(tmp_path / "first.log")
        # the link is the last line, plain; langgraph's banner (its Studio link, which this
        # server refuses) and log went to the state folder's server.log, not the terminal
        printed = (tmp_path / "first.log").read_text(errors="replace")
        assert printed.rstrip("\n").split("\n")[-1] == f"{url}/facilitator#token={token}"
        notes = (tmp_path / "first.err").read_text(errors="replace")
        for said in (printed, notes):
            assert "smith.langchain.com" not in said and "Welcome to" not in said
        assert "\x1b[" not in printed.rstrip("\n").split("\n")[-1]
        assert "smith.langchain.com" in (state / "server.log").read_text(errors="replace")
        with httpx.Client(base_url=url, timeout=30) as client:
            r = client.get("/facilitator")
            assert r.status_code == 200 and "facilitator" in r.text
            r = client.post(
                "/wargraph/graphs",
                headers=bearer(token),
                json={
                    "scenario": "azuristan_crimsonia",
                    "humans": ["azuristan"],
                    "model": "scripted",
                },
            )
            assert r.status_code == 201, r.text
            game = r.json()
            seat_link = game["links"]["azuristan"]
            seat = bearer(seat_link.split("#token=")[1])
            wait_for(
                lambda: client.get("/wargraph/seat", headers=seat).json()["status"] == "your_turn",
                "azuristan's first question",
            )
    finally:
        code = _interrupt(first)
    assert code == 0
    assert (state / "secret").stat().st_mode & 0o077 == 0, "the secret is readable by others"
    time.sleep(0.5)
    assert _langgraph_children(state) == [], "Ctrl-C left the server running"

    second = _serve(state, port, tmp_path / "second.log")
    try:
        url2, token2 = _link(tmp_path / "second.log")
        assert token2 == token, "a restart changed the facilitator's token"
        with httpx.Client(base_url=url2, timeout=30) as client:
            view = wait_for(
                lambda: client.get("/wargraph/seat", headers=seat).json(),
                "the seat link after a restart",
            )
            assert view["seat"] == "azuristan" and view["status"] == "your_turn"
            assert view["questions"][0]["ask_id"] == "r1.order.plan.azuristan"
    finally:
        assert _interrupt(second, signal.SIGTERM) == 0  # a service manager's stop
    time.sleep(0.5)
    assert _langgraph_children(state) == [], "SIGTERM left the server running"
